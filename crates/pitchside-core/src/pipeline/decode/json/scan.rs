//! Word-at-a-time scanning for the reader's hot loops, and the string fast
//! paths built on it: portable integer arithmetic on eight bytes at once,
//! no platform intrinsics, so the same code runs (and is tested under
//! qemu) on every target.

use super::{Reader, R};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Bytes at the start of `b` that are none of `"`, `\\` and the control
/// characters below 0x20 (a string's plain run), eight at a time. It stops
/// at the last whole word at the latest: the caller reads the tail.
pub(super) fn plain_prefix(b: &[u8]) -> usize {
    for (k, chunk) in b.chunks_exact(8).enumerate() {
        let w = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        let quote = w ^ (ONES * b'"' as u64);
        let slash = w ^ (ONES * b'\\' as u64);
        // The high bit of each byte that is zero (quote, backslash) or
        // below 0x20 (control); exact up to the first such byte, which is
        // the lowest on a little-endian read.
        let hits = (quote.wrapping_sub(ONES) & !quote
            | slash.wrapping_sub(ONES) & !slash
            | w.wrapping_sub(ONES * 0x20) & !w)
            & HIGH;
        if hits != 0 {
            return k * 8 + (hits.trailing_zeros() / 8) as usize;
        }
    }
    b.len() / 8 * 8
}

/// How far [`Reader::plain_run`] got.
pub(super) enum Run<'a> {
    /// The whole string, which has no escapes.
    Whole(&'a str),
    /// Stopped at an escape; the string's text starts at this offset.
    Escape(usize),
}

impl<'a> Reader<'a> {
    /// The common string, in one step: its closing quote found by the word
    /// scan, no escape before it. `None` for anything else (then
    /// [`Reader::plain_run`] reads it, and says what is wrong).
    pub(super) fn quick_string(&mut self) -> Option<&'a str> {
        if self.peek() != Some(b'"') {
            return None;
        }
        let start = self.i + 1;
        let n = plain_prefix(self.b.get(start..)?);
        if self.b.get(start + n) != Some(&b'"') {
            return None;
        }
        let s = self.s.get(start..start + n)?;
        self.i = start + n + 1;
        Some(s)
    }

    /// The fast path of a string: from its opening quote up to its closing
    /// quote or its first escape. Eight bytes at a time while none of them
    /// is a quote, a backslash or a control character.
    pub(super) fn plain_run(&mut self) -> R<Run<'a>> {
        self.eat(b'"', "a string")?;
        let start = self.i;
        self.i += plain_prefix(&self.b[self.i..]);
        loop {
            match self.peek() {
                None => return Err(self.err("a closing quote")),
                Some(b'"') => {
                    let s = self.since(start);
                    self.i += 1;
                    return Ok(Run::Whole(s));
                }
                Some(b'\\') => return Ok(Run::Escape(start)),
                Some(c) if c < 0x20 => return Err(self.err("no control characters in a string")),
                Some(_) => self.i += 1,
            }
        }
    }
}
