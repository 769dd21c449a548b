//! A journal file's format, and reading it back: the record body of an
//! input, the file header, and the replay of every generation since a
//! checkpoint (byte layout in [`super`]).

use super::{file_of, generations, io, JournalError};
use crate::model::{FramingError, Micros, RawInput, SensorKind};
use crate::state::frame::{self, Header};
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

/// Replays every input of generations `from` and later, in order; returns
/// the next free generation number.
pub fn replay(dir: &Path, from: u64, mut each: impl FnMut(RawInput)) -> Result<u64, JournalError> {
    let gens = generations(dir);
    for &g in gens.iter().filter(|&&g| g >= from) {
        let path = file_of(dir, g);
        let bytes = std::fs::read(&path).map_err(io(&path))?;
        replay_file(&path, &bytes, &mut each);
    }
    Ok(gens.last().map_or(from, |g| (g + 1).max(from)))
}

/// Replays one file's records, up to the first torn or damaged one (a WARN
/// names where). A file without a header is read in the format before it.
fn replay_file(path: &Path, bytes: &[u8], each: &mut impl FnMut(RawInput)) {
    let (framing, records, version) = match frame::header(bytes, MAGIC) {
        Header::Ours {
            version: version @ (1 | VERSION),
            rest,
        } => (&frame::CURRENT, rest, version),
        Header::Ours { version, .. } => {
            tracing::warn!(file = %path.display(), version, "Journal file has a format version this build does not read (damaged, or from a newer build); it is not replayed.");
            return;
        }
        // A crash before the header was complete: nothing in it was synced.
        Header::Cut if !bytes.is_empty() => return torn(path, 0),
        Header::Cut => return,
        Header::Other => (&frame::LEGACY_JOURNAL, bytes, 1),
    };
    let mut rest = records;
    while let Ok((body, next)) = framing.split(rest) {
        let Some(input) = decode(body, version) else {
            break;
        };
        each(input);
        rest = next;
    }
    if !rest.is_empty() {
        torn(path, bytes.len() - rest.len());
    }
}

fn torn(path: &Path, offset: usize) {
    tracing::warn!(file = %path.display(), offset, "Journal ends in a torn record (a crash mid-write); replay stops there.");
}
