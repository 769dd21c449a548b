//! The per-table sequence counters: read from `state/seq/{table}` at start,
//! shared by the encoder (which numbers new files) and the uploader (which
//! gives a new number to a file whose key the store already holds with
//! other bytes), so that a number is handed out once per process.

use crate::tables::TableId;
use std::sync::atomic::{AtomicU64, Ordering};

/// The next sequence number of every table.
#[derive(Debug, Default)]
pub struct SeqCounters {
    next: [AtomicU64; TableId::ALL.len()],
}

impl SeqCounters {
    /// The number the next file of `table` gets.
    pub fn peek(&self, table: TableId) -> u64 {
        self.next[table.index()].load(Ordering::Relaxed)
    }

    /// Hands out the next number of `table`.
    pub fn take(&self, table: TableId) -> u64 {
        self.next[table.index()].fetch_add(1, Ordering::Relaxed)
    }

    /// Gives `seq` back when its file could not be made (nobody took a
    /// later number meanwhile), so that numbers stay without gaps.
    pub fn give_back(&self, table: TableId, seq: u64) {
        let _ = self.next[table.index()].compare_exchange(
            seq + 1,
            seq,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Makes sure no number below `next` is handed out for `table`.
    pub fn raise(&self, table: TableId, next: u64) {
        self.next[table.index()].fetch_max(next, Ordering::Relaxed);
    }
}

/// What a counter file held.
#[derive(Debug, PartialEq, Eq)]
pub enum CounterFile {
    /// No file: a new spool, or one whose state was lost.
    Missing,
    /// A number.
    Value(u64),
    /// A file that cannot be read or does not hold a number (a torn write,
    /// a damaged card): the number is unknown.
    Unreadable(String),
}

/// The most bytes read of a counter file (a `u64` has at most 20 digits):
/// a damaged file of any size costs no more than this.
pub const MAX_COUNTER_BYTES: u64 = 32;

/// Reads a counter file: one decimal number and a newline.
pub fn read_counter(path: &std::path::Path) -> CounterFile {
    use std::io::Read;
    let mut bytes = Vec::new();
    let read = std::fs::File::open(path)
        .and_then(|f| f.take(MAX_COUNTER_BYTES + 1).read_to_end(&mut bytes));
    match read {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => CounterFile::Missing,
        Err(e) => CounterFile::Unreadable(e.to_string()),
        Ok(n) if n as u64 > MAX_COUNTER_BYTES => {
            CounterFile::Unreadable(format!("longer than {MAX_COUNTER_BYTES} bytes"))
        }
        Ok(_) => parse_counter(&bytes),
    }
}

/// The number in a counter file's bytes.
pub fn parse_counter(bytes: &[u8]) -> CounterFile {
    let text = std::str::from_utf8(bytes).unwrap_or("").trim();
    match text.parse::<u64>() {
        Ok(n) if !text.starts_with('+') => CounterFile::Value(n),
        _ => {
            let shown: String = String::from_utf8_lossy(&bytes[..bytes.len().min(16)])
                .escape_debug()
                .collect();
            CounterFile::Unreadable(format!("not a number: \"{shown}\""))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_number_is_a_counter() {
        assert_eq!(parse_counter(b"42\n"), CounterFile::Value(42));
        for bad in [
            &b""[..],
            b"\0\0\0\0",
            b"4x",
            b"-1",
            b"+3",
            b"99999999999999999999999",
        ] {
            assert!(
                matches!(parse_counter(bad), CounterFile::Unreadable(_)),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_huge_counter_file_is_refused_after_its_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("raw");
        std::fs::write(&p, "1".repeat(1 << 20)).unwrap();
        assert!(matches!(read_counter(&p), CounterFile::Unreadable(w) if w.contains("longer")));
        assert_eq!(read_counter(&dir.path().join("none")), CounterFile::Missing);
        std::fs::create_dir(dir.path().join("dir")).unwrap();
        assert!(matches!(
            read_counter(&dir.path().join("dir")),
            CounterFile::Unreadable(_)
        ));
    }

    #[test]
    fn a_number_is_handed_out_once_and_given_back_only_if_it_was_the_last() {
        let c = SeqCounters::default();
        c.raise(TableId::Raw, 5);
        assert_eq!(c.take(TableId::Raw), 5);
        c.give_back(TableId::Raw, 5);
        assert_eq!(c.take(TableId::Raw), 5);
        assert_eq!(c.take(TableId::Raw), 6);
        c.give_back(TableId::Raw, 5);
        assert_eq!(
            c.peek(TableId::Raw),
            7,
            "6 was taken after 5: 5 stays a gap"
        );
        c.raise(TableId::Raw, 3);
        assert_eq!(c.peek(TableId::Raw), 7);
    }
}
