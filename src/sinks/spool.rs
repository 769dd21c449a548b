//! The local spool: finished Parquet files wait here until they are uploaded.
//!
//! A file is written under `tmp/`, fsynced, renamed into `outgoing/` at its
//! final relative key, and the directory fsynced: a file in `outgoing/` is
//! always complete. Per-table sequence numbers live in `state/seq/{table}`
//! and are also recovered from the files still in `outgoing/`, so a crash
//! between the rename and the counter update neither reuses nor skips a number.
//!
//! This file is the [`Spool`]; file names and scans are in `names`, the
//! fsync-and-rename steps in `durable`.

mod durable;
mod names;

pub use names::{max_seq_in_folder, object_key, remove_uploaded, seq_of};

use crate::tables::TableId;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Spool failures. All are about the local disk: check space and permissions.
#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    /// Another process (a running daemon, or a replay) is using this spool.
    #[error("spool {path} is in use by another pitchside process (stop it, or give this one its own output.spool_dir)")]
    Locked {
        /// The spool folder.
        path: PathBuf,
    },
    /// A filesystem operation failed.
    #[error("spool {op} {path}: {source} (check output.spool_dir's disk space and permissions)")]
    Io {
        /// What was being done.
        op: &'static str,
        /// On which path.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
}

fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> SpoolError + 'a {
    move |source| SpoolError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}

/// A complete file in the spool.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct SpooledFile {
    /// Its table.
    pub table: TableId,
    /// Its sequence number.
    pub seq: u64,
    /// Object key relative to the store root (SPEC §5 layout).
    pub key: String,
    /// Where it is on disk.
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
}

/// The spool folder and the sequence counters.
#[derive(Debug)]
pub struct Spool {
    root: PathBuf,
    gateway_id: String,
    venue_id: String,
    next_seq: [u64; TableId::ALL.len()],
    /// Tables whose counter was found on disk (else the store must be asked).
    seq_known: [bool; TableId::ALL.len()],
    tmp_counter: u64,
    /// Held for the spool's lifetime: one process per spool.
    _lock: nix::fcntl::Flock<File>,
}

impl Spool {
    /// Opens (creating) the spool, drops stale temp files, recovers counters.
    pub fn open(root: &Path, venue_id: &str, gateway_id: &str) -> Result<Spool, SpoolError> {
        for sub in ["tmp", "outgoing", "state/seq"] {
            let p = root.join(sub);
            fs::create_dir_all(&p).map_err(io("create", &p))?;
        }
        let lock_path = root.join("lock");
        let lock_file = File::create(&lock_path).map_err(io("create", &lock_path))?;
        let lock = nix::fcntl::Flock::lock(lock_file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|_| SpoolError::Locked {
                path: root.to_path_buf(),
            })?;
        let tmp = root.join("tmp");
        for entry in fs::read_dir(&tmp).map_err(io("list", &tmp))?.flatten() {
            // Half-written files from a crash: their rows were never acknowledged as stored.
            let _ = fs::remove_file(entry.path());
        }
        let mut spool = Spool {
            root: root.to_path_buf(),
            gateway_id: gateway_id.to_string(),
            venue_id: venue_id.to_string(),
            next_seq: [0; TableId::ALL.len()],
            seq_known: [false; TableId::ALL.len()],
            tmp_counter: 0,
            _lock: lock,
        };
        for t in TableId::ALL {
            let p = spool.seq_path(t);
            if let Ok(n) = fs::read_to_string(&p).map(|t| t.trim().parse::<u64>()) {
                spool.next_seq[t.index()] = n.unwrap_or(0);
                spool.seq_known[t.index()] = true;
            }
        }
        for f in spool.pending()? {
            let next = &mut spool.next_seq[f.table.index()];
            *next = (*next).max(f.seq + 1);
        }
        Ok(spool)
    }

    /// The spool folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Tables whose sequence counter was not on disk (a new or lost spool):
    /// the store must be asked for the highest number already used.
    pub fn unknown_seq_tables(&self) -> Vec<TableId> {
        TableId::ALL
            .into_iter()
            .filter(|t| !self.seq_known[t.index()])
            .collect()
    }

    /// Makes sure no sequence number below `next` is handed out for `table`
    /// (used when files of earlier runs already exist in the store).
    pub fn reserve_seq(&mut self, table: TableId, next: u64) -> Result<(), SpoolError> {
        let s = &mut self.next_seq[table.index()];
        *s = (*s).max(next);
        self.seq_known[table.index()] = true;
        self.persist_seq(table)
    }

    fn seq_path(&self, t: TableId) -> PathBuf {
        self.root.join("state/seq").join(t.name())
    }

    /// Creates a temporary file for a table; [`Spool::commit`] makes it final.
    pub fn create_temp(&mut self, table: TableId) -> Result<(File, PathBuf), SpoolError> {
        self.tmp_counter += 1;
        let tmp = self.root.join("tmp").join(format!(
            "{}-{}-{}.tmp",
            table.name(),
            std::process::id(),
            self.tmp_counter
        ));
        let f = File::create(&tmp).map_err(io("create", &tmp))?;
        Ok((f, tmp))
    }

    /// Fsyncs a finished temporary file and moves it to its final key with
    /// the table's next sequence number.
    pub fn commit(
        &mut self,
        table: TableId,
        file: File,
        tmp: &Path,
        date: &str,
    ) -> Result<SpooledFile, SpoolError> {
        let seq = self.next_seq[table.index()];
        let key = object_key(table, &self.venue_id, date, &self.gateway_id, seq);
        let path = self.root.join("outgoing").join(&key);
        let size = durable::commit_file(file, tmp, &path)?;
        self.next_seq[table.index()] = seq + 1;
        self.persist_seq(table)?;
        Ok(SpooledFile {
            table,
            seq,
            key,
            path,
            size,
        })
    }

    /// Writes a complete file for `table` whose earliest row falls on `date`.
    pub fn write(
        &mut self,
        table: TableId,
        date: &str,
        bytes: &[u8],
    ) -> Result<SpooledFile, SpoolError> {
        let (mut f, tmp) = self.create_temp(table)?;
        f.write_all(bytes).map_err(io("write", &tmp))?;
        self.commit(table, f, &tmp, date)
    }

    fn persist_seq(&self, table: TableId) -> Result<(), SpoolError> {
        let text = format!("{}\n", self.next_seq[table.index()]);
        durable::replace_file(&self.seq_path(table), &text)
    }

    /// Every complete file waiting in `outgoing/`, in upload order (table
    /// priority, then sequence).
    pub fn pending(&self) -> Result<Vec<SpooledFile>, SpoolError> {
        names::outgoing_files(&self.root.join("outgoing"), &self.gateway_id)
    }

    /// Files and bytes waiting.
    pub fn usage(&self) -> (u64, u64) {
        self.pending()
            .map(|p| (p.len() as u64, p.iter().map(|f| f.size).sum()))
            .unwrap_or((0, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spool of gateway `gw-1` holding one small file of each of `tables`.
    fn spool_holding(tables: &[TableId]) -> (tempfile::TempDir, Spool) {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spool::open(dir.path(), "v", "gw-1").unwrap();
        for &t in tables {
            s.write(t, "2026-11-29", b"x").unwrap();
        }
        (dir, s)
    }

    #[test]
    fn files_get_the_spec_key_and_sequence_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spool::open(dir.path(), "v", "gw-1").unwrap();
        let a = s.write(TableId::Alerts, "2026-11-29", b"one").unwrap();
        let b = s.write(TableId::Alerts, "2026-11-30", b"two").unwrap();
        assert_eq!(
            a.key,
            "alerts/venue_id=v/date=2026-11-29/gw-1-000000000000.parquet"
        );
        assert_eq!(b.seq, 1);
        drop(s);
        let mut s = Spool::open(dir.path(), "v", "gw-1").unwrap();
        assert_eq!(s.pending().unwrap().len(), 2);
        let c = s.write(TableId::Alerts, "2026-11-30", b"three").unwrap();
        assert_eq!(c.seq, 2);
    }

    #[test]
    fn sequence_is_recovered_from_files_when_the_counter_is_lost() {
        let (dir, s) = spool_holding(&[TableId::Raw, TableId::Raw]);
        drop(s);
        std::fs::remove_file(dir.path().join("state/seq/raw")).unwrap();
        let s = Spool::open(dir.path(), "v", "gw-1").unwrap();
        assert_eq!(s.next_seq[TableId::Raw.index()], 2);
    }

    #[test]
    fn pending_lists_alerts_before_raw_and_removal_cleans_folders() {
        let (dir, s) = spool_holding(&[TableId::Raw, TableId::Alerts]);
        let p = s.pending().unwrap();
        assert_eq!(p[0].table, TableId::Alerts);
        assert_eq!(p[1].table, TableId::Raw);
        for f in &p {
            remove_uploaded(f).unwrap();
        }
        assert!(s.pending().unwrap().is_empty());
        assert!(!dir.path().join("outgoing/raw/venue_id=v").exists());
    }

    #[test]
    fn a_second_process_cannot_open_a_spool_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let first = Spool::open(dir.path(), "v", "g").unwrap();
        let err = Spool::open(dir.path(), "v", "g").unwrap_err();
        assert!(
            err.to_string()
                .contains("in use by another pitchside process"),
            "{err}"
        );
        drop(first);
        Spool::open(dir.path(), "v", "g").unwrap();
    }

    #[test]
    fn lost_counters_are_reported_so_the_store_can_be_asked() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spool::open(dir.path(), "v", "g").unwrap();
        assert_eq!(s.unknown_seq_tables().len(), TableId::ALL.len());
        s.reserve_seq(TableId::Alerts, 7).unwrap();
        drop(s);
        let s = Spool::open(dir.path(), "v", "g").unwrap();
        assert!(!s.unknown_seq_tables().contains(&TableId::Alerts));
        assert_eq!(s.next_seq[TableId::Alerts.index()], 7);
    }

    #[test]
    fn stale_temp_files_are_removed_on_open() {
        let dir = tempfile::tempdir().unwrap();
        Spool::open(dir.path(), "v", "g").unwrap();
        std::fs::write(dir.path().join("tmp/alerts-0-1.tmp"), b"half").unwrap();
        Spool::open(dir.path(), "v", "g").unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
            0
        );
    }
}
