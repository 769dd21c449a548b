//! The input journal: every input the pipeline takes is appended here and
//! fsynced (group commit) before its source is acknowledged, so a crash
//! never loses an acknowledged MQTT message, and a power cut loses at most
//! `output.sync_interval` of serial lines. After a restart, the inputs since
//! the last checkpoint are replayed from the journal, rebuilding exactly the
//! state and rows the crash interrupted.
//!
//! Files are `spool_dir/journal/{generation:012}.log`; a flush starts a new
//! generation and the checkpoint written after it names that generation, so
//! older files are deleted once the checkpoint is durable.
//!
//! While checkpoints fail (a full or read-only `spool_dir/state`, a flush
//! that cannot write its files), nothing is deleted and the journal grows:
//! past `output.max_journal_bytes` the [`Recorder`] switches it off as on a
//! failed disk (inputs counted in `pitchside_unjournaled_inputs_total`), and
//! opens a new generation once a checkpoint has brought it back under the
//! bound. The oldest generations are kept: a replay needs every one since
//! the checkpoint it starts from.
//!
//! A file is a header, then one frame of [`crate::state::frame`] per input
//! (little-endian):
//!
//! ```text
//! offset  bytes  field
//!      0      8  magic "PSJRNL\0\0"
//!      8      4  format version, u32 = 2
//!     12         records, each:
//!         +0  8    body length n, u64
//!         +8  4    CRC-32 of the body, u32
//!        +12  n    body: source (u32 length, UTF-8), sensor hint u8 (255: none),
//!                  received_at i64 (µs), framing error u8 (0: none; 1: too
//!                  large, then its length u64), payload (u32 length, bytes),
//!                  mapping (u32 length, UTF-8: the source whose device
//!                  format decodes the input, empty for SPEC §1 JSON)
//! ```
//!
//! Version 1 (before device formats) has no mapping; its files are still
//! replayed, their inputs as SPEC §1 JSON.
//!
//! Replay of a file stops at its first torn or damaged record (a crash
//! mid-write, a bad checksum, a body that does not parse) with a WARN; later
//! files are still replayed. A file cut short inside its header has nothing
//! to replay (WARN unless empty); one whose header names another version is
//! not replayed (WARN).
//!
//! A file without a header is in the format of builds before issue 11:
//! records of `u32 length, u64 FNV-1a 64 checksum, body`. It is replayed at
//! start-up like any other; new inputs go to a new file with the header, and
//! the old file is deleted with the others after the next checkpoint.

mod format;
mod recorder;
mod writer;

pub use format::{replay, VERSION};
pub use recorder::{Recorder, RETRY_FIRST, RETRY_MAX};
pub use writer::Journal;

use std::fs;
use std::path::{Path, PathBuf};

/// Journal failures: all about the local disk.
#[derive(Debug, thiserror::Error)]
#[error("journal {path}: {source} (check output.spool_dir's disk)")]
pub struct JournalError {
    path: PathBuf,
    source: std::io::Error,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
    move |source| JournalError {
        path: path.to_path_buf(),
        source,
    }
}

/// The folder of a spool's journal.
pub fn dir(spool_dir: &Path) -> PathBuf {
    spool_dir.join("journal")
}

fn file_of(dir: &Path, gen: u64) -> PathBuf {
    dir.join(format!("{gen:012}.log"))
}

fn generations(dir: &Path) -> Vec<u64> {
    let mut v: Vec<u64> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.strip_suffix(".log")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// The bytes of every generation in `dir` (the journal since the oldest
/// checkpoint not yet written).
fn size(dir: &Path) -> u64 {
    generations(dir)
        .into_iter()
        .filter_map(|g| fs::metadata(file_of(dir, g)).ok())
        .map(|m| m.len())
        .sum()
}

/// Deletes generations before `gen` (their inputs are in a durable checkpoint).
pub fn remove_before(dir: &Path, gen: u64) {
    for g in generations(dir).into_iter().filter(|&g| g < gen) {
        let _ = fs::remove_file(file_of(dir, g));
    }
}

#[cfg(test)]
mod tests;
