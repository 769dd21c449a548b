//! Newline framing with a bounded buffer, shared by file replay and serial.
//!
//! Lines up to `max` bytes come out whole (without `\n`, and without one
//! trailing `\r`). A longer line comes out once as [`Line::TooLarge`] with its
//! first `max` bytes and total length; the framer then skips to the next
//! newline, so memory never exceeds `max` bytes however long the line is.

/// A framed line.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A complete line.
    Ok(&'a [u8]),
    /// A line longer than the limit: its first bytes and its full length.
    TooLarge {
        /// The first `max` bytes.
        prefix: &'a [u8],
        /// Length of the whole line.
        len: usize,
    },
}

/// Splits a byte stream into lines.
#[derive(Debug)]
pub struct LineFramer {
    max: usize,
    buf: Vec<u8>,
    /// Bytes of an overlong line seen so far, while skipping to its end.
    overlong: Option<usize>,
}

impl LineFramer {
    /// A framer for lines of at most `max` bytes.
    pub fn new(max: usize) -> LineFramer {
        LineFramer {
            max,
            buf: Vec::with_capacity(max.min(64 * 1024) + 1),
            overlong: None,
        }
    }

    /// Feeds bytes; calls `emit` for every line completed by them. A line
    /// that lies whole in `data` is handed over from it, not copied.
    pub fn push(&mut self, mut data: &[u8], emit: &mut dyn FnMut(Line<'_>)) {
        while !data.is_empty() {
            let nl = memchr::memchr(b'\n', data);
            let (chunk, rest, complete) = match nl {
                Some(i) => (&data[..i], &data[i + 1..], true),
                None => (data, &data[data.len()..], false),
            };
            data = rest;
            if complete && self.buf.is_empty() && self.overlong.is_none() {
                emit_whole(chunk, self.max, emit);
                continue;
            }
            if let Some(len) = self.overlong.as_mut() {
                *len += chunk.len();
            } else if self.buf.len() + chunk.len() > self.max + 1 {
                // (+1 above leaves room for a '\r' that will be stripped.)
                let total = self.buf.len() + chunk.len();
                let room = self.max.saturating_sub(self.buf.len());
                self.buf.extend_from_slice(&chunk[..room.min(chunk.len())]);
                self.buf.truncate(self.max);
                self.overlong = Some(total);
            } else {
                self.buf.extend_from_slice(chunk);
            }
            if complete {
                self.end_line(emit);
            }
        }
    }

    /// Ends the stream: a final line without a newline is emitted.
    pub fn finish(&mut self, emit: &mut dyn FnMut(Line<'_>)) {
        if !self.buf.is_empty() || self.overlong.is_some() {
            self.end_line(emit);
        }
    }

    /// Forgets a partial line (e.g. after a serial device disconnected).
    pub fn reset(&mut self) {
        self.buf.clear();
        self.overlong = None;
    }

    fn end_line(&mut self, emit: &mut dyn FnMut(Line<'_>)) {
        match self.overlong.take() {
            Some(len) => {
                let prefix = &self.buf[..self.buf.len().min(self.max)];
                emit(Line::TooLarge { prefix, len });
            }
            None => emit_whole(&self.buf, self.max, emit),
        }
        self.buf.clear();
    }
}

/// A whole line (without its `\n`): one trailing `\r` dropped, then
/// [`Line::Ok`] or, past `max` bytes, [`Line::TooLarge`] (whose length
/// counts the `\r` when the line was too long even without it, as the
/// buffered path counts it).
fn emit_whole(line: &[u8], max: usize, emit: &mut dyn FnMut(Line<'_>)) {
    if line.len() > max + 1 {
        emit(Line::TooLarge {
            prefix: &line[..max],
            len: line.len(),
        });
        return;
    }
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > max {
        emit(Line::TooLarge {
            prefix: &line[..max],
            len: line.len(),
        });
    } else {
        emit(Line::Ok(line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(max: usize, pieces: &[&[u8]]) -> Vec<String> {
        let mut f = LineFramer::new(max);
        let mut out = Vec::new();
        let mut emit = |l: Line<'_>| {
            out.push(match l {
                Line::Ok(b) => String::from_utf8_lossy(b).into_owned(),
                Line::TooLarge { prefix, len } => {
                    format!("TOO({len}):{}", String::from_utf8_lossy(prefix))
                }
            })
        };
        for p in pieces {
            f.push(p, &mut emit);
        }
        f.finish(&mut emit);
        out
    }

    #[test]
    fn lines_split_across_reads_are_joined() {
        assert_eq!(
            frame(10, &[b"ab", b"c\nde", b"f\r\n", b"g"]),
            ["abc", "def", "g"]
        );
    }

    #[test]
    fn overlong_line_is_reported_once_and_reading_resynchronises() {
        assert_eq!(
            frame(4, &[b"ok\n123456", b"789\nnext\n"]),
            ["ok", "TOO(9):1234", "next"]
        );
    }

    #[test]
    fn line_of_exactly_max_bytes_is_accepted() {
        assert_eq!(
            frame(4, &[b"1234\n1234\r\n12345\n"]),
            ["1234", "1234", "TOO(5):1234"]
        );
    }

    #[test]
    fn empty_lines_come_out_empty() {
        assert_eq!(frame(4, &[b"\n\na\n"]), ["", "", "a"]);
    }

    proptest::proptest! {
        /// Lines handed over whole from the input and lines joined from
        /// pieces come out the same: one `\r` dropped, the same lengths.
        #[test]
        fn whole_and_piecewise_input_frame_alike(
            text in proptest::collection::vec(
                proptest::sample::select(vec![b'a', b'b', b'\r', b'\n']), 0..200),
            max in 1usize..12,
        ) {
            let whole = frame(max, &[&text]);
            let bytes: Vec<&[u8]> = text.chunks(1).collect();
            proptest::prop_assert_eq!(&whole, &frame(max, &bytes));
            let threes: Vec<&[u8]> = text.chunks(3).collect();
            proptest::prop_assert_eq!(&whole, &frame(max, &threes));
        }
    }
}
