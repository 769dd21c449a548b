//! The local spool: finished Parquet files wait here until they are uploaded.
//!
//! A file is written under `tmp/`, fsynced, renamed into `outgoing/` at its
//! final relative key, and the directory fsynced: a file in `outgoing/` is
//! always complete. Per-table sequence numbers live in `state/seq/{table}`
//! and are also recovered from the files still in `outgoing/`, so a crash
//! between the rename and the counter update neither reuses nor skips a number.
//!
//! A counter file that cannot be read or holds no number (a torn write, a
//! damaged card) is not trusted: the table's number is unknown, logged at
//! ERROR and counted, and the store is asked for the highest number used.
//! Files of another `gateway_id` (the gateway was renamed) are listed with
//! the others and uploaded under their own names.
//!
//! This file is the [`Spool`]; file names and scans are in `names`, the
//! fsync-and-rename steps in `durable`, the counters in `seq`.

mod durable;
mod names;
mod seq;

pub mod queue;

pub use names::{max_seq_in_folder, object_key, remove_uploaded, seq_of};
pub use seq::SeqCounters;

use crate::tables::TableId;
use seq::CounterFile;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// How the uploader numbers a file anew: the shared counters and this
/// gateway's name.
#[derive(Debug, Clone)]
pub struct Numbering {
    /// The counters the encoder numbers files with.
    pub seqs: Arc<SeqCounters>,
    /// This gateway's `venue.gateway_id`.
    pub gateway_id: String,
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

impl SpooledFile {
    /// The `gateway_id` in its file name.
    pub fn gateway(&self) -> &str {
        let name = self.key.rsplit('/').next().unwrap_or("");
        names::name_parts(name).map_or("", |(g, _)| g)
    }
}

/// The spool folder and the sequence counters.
#[derive(Debug)]
pub struct Spool {
    root: PathBuf,
    gateway_id: String,
    venue_id: String,
    seqs: Arc<SeqCounters>,
    /// Tables whose counter was found on disk (else the store must be asked).
    seq_known: [bool; TableId::ALL.len()],
    /// Counter files found damaged at open.
    unreadable_counters: u64,
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
            seqs: Arc::default(),
            seq_known: [false; TableId::ALL.len()],
            unreadable_counters: 0,
            tmp_counter: 0,
            _lock: lock,
        };
        spool.read_counters();
        let pending = spool.pending()?;
        for f in pending.iter().filter(|f| f.gateway() == gateway_id) {
            spool.seqs.raise(f.table, f.seq + 1);
        }
        names::log_foreign(&pending, gateway_id);
        Ok(spool)
    }

    /// Reads `state/seq/`; a damaged counter leaves its table unknown.
    fn read_counters(&mut self) {
        for t in TableId::ALL {
            let p = self.seq_path(t);
            match seq::read_counter(&p) {
                CounterFile::Value(n) => {
                    self.seqs.raise(t, n);
                    self.seq_known[t.index()] = true;
                }
                CounterFile::Missing => {}
                CounterFile::Unreadable(why) => {
                    self.unreadable_counters += 1;
                    tracing::error!(path = %p.display(), why = %why, table = t.name(), "Sequence counter unreadable: not trusted; the store is asked for the highest number this gateway used, and an object already in the store is never replaced.");
                }
            }
        }
    }

    /// How many counter files were found damaged at open (each logged).
    pub fn unreadable_counters(&self) -> u64 {
        self.unreadable_counters
    }

    /// The counters and this gateway's name, for the uploader.
    pub fn numbering(&self) -> Numbering {
        Numbering {
            seqs: self.seqs.clone(),
            gateway_id: self.gateway_id.clone(),
        }
    }

    /// The number the next file of `table` gets.
    pub fn next_seq(&self, table: TableId) -> u64 {
        self.seqs.peek(table)
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
        self.seqs.raise(table, next);
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
        let seq = self.seqs.take(table);
        let key = object_key(table, &self.venue_id, date, &self.gateway_id, seq);
        let path = self.root.join("outgoing").join(&key);
        let size = match durable::commit_file(file, tmp, &path) {
            Ok(size) => size,
            Err(e) => {
                self.seqs.give_back(table, seq);
                return Err(e);
            }
        };
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
        let text = format!("{}\n", self.seqs.peek(table));
        durable::replace_file(&self.seq_path(table), &text)
    }

    /// Every complete file waiting in `outgoing/` (this gateway's and any
    /// other `gateway_id`'s), in upload order (table priority, then sequence).
    pub fn pending(&self) -> Result<Vec<SpooledFile>, SpoolError> {
        names::outgoing_files(&self.root.join("outgoing"))
    }

    /// Files and bytes waiting.
    pub fn usage(&self) -> (u64, u64) {
        self.pending()
            .map(|p| (p.len() as u64, p.iter().map(|f| f.size).sum()))
            .unwrap_or((0, 0))
    }
}

#[cfg(test)]
mod tests;
