//! A journal file's format, and reading it back: the record body of an
//! input, the file header, and the replay of every generation since a
//! checkpoint (byte layout in [`super`]).

use super::{file_of, generations, io, JournalError};
use crate::model::{FramingError, Micros, RawInput, SensorKind};
use crate::state::frame::{self, FrameError, Header};
use crate::util::codec::{Dec, Enc};
use std::path::Path;

/// The magic a journal file starts with.
pub(super) const MAGIC: &[u8; 8] = b"PSJRNL\0\0";
/// The journal format this build writes (version 1, without the mapping,
/// and files without a header, the format of builds before issue 11, are
/// still replayed).
pub const VERSION: u32 = 2;

fn kind_code(k: Option<SensorKind>) -> u8 {
    k.map_or(255, |k| k as u8)
}

/// Appends the record body of `input` to `e`.
pub(super) fn encode(e: &mut Enc, input: &RawInput) {
    e.str(&input.source);
    e.u8(kind_code(input.sensor_hint));
    e.i64(input.received_at);
    match input.framing_error {
        Some(FramingError::TooLarge { len }) => {
            e.u8(1);
            e.u64(len as u64);
        }
        None => e.u8(0),
    }
    e.bytes(&input.payload);
    e.str(input.mapping.as_deref().unwrap_or(""));
}

/// The input of a record body of format `version`; `None` if it does not parse.
fn decode(body: &[u8], version: u32) -> Option<RawInput> {
    let mut d = Dec::new(body);
    let source = d.string().ok()?;
    let hint = match d.u8().ok()? {
        255 => None,
        k => Some(*SensorKind::ALL.get(k as usize)?),
    };
    let received_at: Micros = d.i64().ok()?;
    let framing_error = match d.u8().ok()? {
        0 => None,
        1 => Some(FramingError::TooLarge {
            len: d.u64().ok()? as usize,
        }),
        _ => return None,
    };
    let payload = d.bytes().ok()?.to_vec();
    let mapping = match version {
        1 => None,
        _ => Some(d.string().ok()?).filter(|m| !m.is_empty()),
    };
    d.finished().then(|| RawInput {
        source: source.into(),
        sensor_hint: hint,
        payload,
        received_at,
        framing_error,
        ack: None,
        mapping: mapping.map(Into::into),
    })
}

/// Bytes read from a journal file at a time during replay.
const READ_CHUNK: usize = 1 << 20;
/// Longest record body replay reads (a payload is at most 1 MiB, a topic
/// 64 KiB); a length field saying more is damage, and replay of the file
/// stops there.
const MAX_RECORD: u64 = 4 << 20;

/// Replays every input of generations `from` and later, in order; returns
/// the next free generation number. Files are read in chunks of 1 MiB, not
/// whole: replay holds one chunk and one record, whatever the journal's size.
pub fn replay(dir: &Path, from: u64, mut each: impl FnMut(RawInput)) -> Result<u64, JournalError> {
    let gens = generations(dir);
    for &g in gens.iter().filter(|&&g| g >= from) {
        let path = file_of(dir, g);
        let file = std::fs::File::open(&path).map_err(io(&path))?;
        replay_file(&path, Chunks::new(file), &mut each).map_err(io(&path))?;
    }
    Ok(gens.last().map_or(from, |g| (g + 1).max(from)))
}

/// A file read in chunks: `buf[pos..]` is read and not used yet.
struct Chunks {
    file: std::fs::File,
    buf: Vec<u8>,
    pos: usize,
    /// File offset of `buf[0]`.
    offset: usize,
    eof: bool,
}

impl Chunks {
    fn new(file: std::fs::File) -> Chunks {
        Chunks {
            file,
            buf: Vec::new(),
            pos: 0,
            offset: 0,
            eof: false,
        }
    }

    fn rest(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Reads until `n` bytes are unused or the file ends; whether they are.
    fn fill(&mut self, n: usize) -> std::io::Result<bool> {
        use std::io::Read;
        while self.buf.len() - self.pos < n && !self.eof {
            self.buf.drain(..self.pos);
            self.offset += self.pos;
            self.pos = 0;
            let at = self.buf.len();
            self.buf.resize(at + (n - at).max(READ_CHUNK), 0);
            let got = loop {
                match self.file.read(&mut self.buf[at..]) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    other => break other,
                }
            };
            let got = got.inspect_err(|_| self.buf.truncate(at))?;
            self.buf.truncate(at + got);
            self.eof = got == 0;
        }
        Ok(self.buf.len() - self.pos >= n)
    }
}

/// Replays one file's records, up to the first torn or damaged one (a WARN
/// names where). A file without a header is read in the format before it.
fn replay_file(path: &Path, mut c: Chunks, each: &mut impl FnMut(RawInput)) -> std::io::Result<()> {
    c.fill(frame::HEADER_LEN)?;
    let (framing, version) = match frame::header(c.rest(), MAGIC) {
        Header::Ours {
            version: version @ (1 | VERSION),
            ..
        } => {
            c.pos += frame::HEADER_LEN;
            (&frame::CURRENT, version)
        }
        Header::Ours { version, .. } => {
            tracing::warn!(file = %path.display(), version, "Journal file has a format version this build does not read (damaged, or from a newer build); it is not replayed.");
            return Ok(());
        }
        // A crash before the header was complete: nothing in it was synced.
        Header::Cut if !c.rest().is_empty() => {
            torn(path, 0);
            return Ok(());
        }
        Header::Cut => return Ok(()),
        Header::Other => (&frame::LEGACY_JOURNAL, 1),
    };
    let head = framing.head_len();
    loop {
        let more = match framing.split(c.rest()) {
            Ok((body, _)) => {
                let Some(input) = decode(body, version) else {
                    break;
                };
                c.pos += head + body.len();
                each(input);
                continue;
            }
            Err(FrameError::Damaged) => break,
            Err(FrameError::CutHead) => head,
            Err(FrameError::Torn { want, .. }) if want <= MAX_RECORD => head + want as usize,
            Err(FrameError::Torn { .. }) => break,
        };
        if !c.fill(more)? {
            break;
        }
    }
    if !c.rest().is_empty() {
        torn(path, c.offset + c.pos);
    }
    Ok(())
}

fn torn(path: &Path, offset: usize) {
    tracing::warn!(file = %path.display(), offset, "Journal ends in a torn record (a crash mid-write); replay stops there.");
}
