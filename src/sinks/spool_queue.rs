//! The files waiting in the spool, their byte count, and the spool's
//! ceilings: the one place that decides what is uploaded next and what is
//! deleted without upload.
//!
//! Shared by the encoder (which adds finished files and, when the disk is
//! short, makes room before writing) and the uploader (which takes the next
//! file and reports how its upload went). Every change of the set goes
//! through a method here that also keeps `bytes` and the published gauges
//! equal to the sum of the files' sizes, so the count cannot drift.
//!
//! Eviction rules, in order of what the gateway loses last:
//! - a file being uploaded is never deleted;
//! - never a file of a higher priority while one of a lower priority waits
//!   (raw, then progress, rejects, late, the window tables, fatigue; alerts
//!   last), oldest first within a table;
//! - `output.spool_max_bytes` and `output.min_free_disk` are enforced only
//!   while uploads fail: with a reachable store, uploading is how the spool
//!   shrinks, and nothing it could upload now is deleted;
//! - when the disk itself is short (a write would not fit), the encoder makes
//!   room by deleting files of lower priority than the table it writes.

use super::spool::{remove_uploaded, SpooledFile};
use crate::sinks::UploadStats;
use crate::tables::TableId;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// The spool's ceilings.
#[derive(Debug, Clone)]
pub struct SpoolLimits {
    /// The spool folder (its filesystem is checked for free space).
    pub root: PathBuf,
    /// Most bytes of files waiting.
    pub max_bytes: u64,
    /// Free space to leave on the filesystem.
    pub min_free_disk: u64,
    /// Retry interval after a permanent error.
    pub permanent_retry: Duration,
}

impl SpoolLimits {
    /// No ceiling (replay into a folder).
    pub fn unbounded(root: PathBuf) -> SpoolLimits {
        SpoolLimits {
            root,
            max_bytes: u64::MAX,
            min_free_disk: 0,
            permanent_retry: Duration::from_secs(300),
        }
    }
}

/// Free bytes for unprivileged users on the filesystem holding `path`.
pub fn free_disk(path: &std::path::Path) -> Option<u64> {
    nix::sys::statvfs::statvfs(path)
        .ok()
        // The fields are 32 bits wide on 32-bit targets (armv7): the casts matter there.
        .map(|s| {
            #[allow(clippy::unnecessary_cast)]
            let free = s.blocks_available() as u64 * s.fragment_size() as u64;
            free
        })
}

/// Why a file left the queue without being uploaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Eviction {
    /// Over `spool_max_bytes` or under `min_free_disk` while uploads fail.
    Ceiling,
    /// The disk could not take a new file of a more important table.
    DiskFull,
}

/// The files waiting for upload, and their accounting.
#[derive(Debug)]
pub struct SpoolQueue {
    files: BTreeSet<SpooledFile>,
    bytes: u64,
    in_flight: Option<SpooledFile>,
    store_failing: bool,
    limits: SpoolLimits,
    stats: Arc<UploadStats>,
}

/// The queue as the encoder and the uploader share it.
pub type SharedQueue = Arc<Mutex<SpoolQueue>>;

/// Locks the shared queue; a panic while it was held cannot leave it
/// inconsistent (every method updates set and count together), so a
/// poisoned lock is used as it is.
pub fn lock(q: &SharedQueue) -> MutexGuard<'_, SpoolQueue> {
    q.lock().unwrap_or_else(|p| p.into_inner())
}

impl SpoolQueue {
    /// A queue holding `pending` (files left by an earlier run).
    pub fn new(pending: Vec<SpooledFile>, limits: SpoolLimits, stats: Arc<UploadStats>) -> Self {
        let mut q = SpoolQueue {
            files: BTreeSet::new(),
            bytes: 0,
            in_flight: None,
            store_failing: false,
            limits,
            stats,
        };
        q.insert_all(pending);
        q
    }

    /// The queue behind a lock, for sharing.
    pub fn shared(self) -> SharedQueue {
        Arc::new(Mutex::new(self))
    }

    /// The ceilings.
    pub fn limits(&self) -> &SpoolLimits {
        &self.limits
    }

    /// Adds finished files (one flush's files together, so that eviction
    /// sees every table of the flush before it picks a victim).
    pub fn insert_all(&mut self, files: impl IntoIterator<Item = SpooledFile>) {
        for f in files {
            let size = f.size;
            if self.files.insert(f) {
                self.bytes += size;
            }
        }
        self.publish();
    }

    /// Files waiting (the one being uploaded included).
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// No file waiting.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Bytes of the files waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The files waiting, in upload order.
    pub fn files(&self) -> impl Iterator<Item = &SpooledFile> {
        self.files.iter()
    }

    /// Whether the last upload attempt failed.
    pub fn store_failing(&self) -> bool {
        self.store_failing
    }

    /// The next file to upload, marked in flight (never evicted until
    /// [`SpoolQueue::uploaded`] or [`SpoolQueue::upload_failed`]).
    pub fn start_upload(&mut self) -> Option<SpooledFile> {
        let f = self.files.first().cloned()?;
        self.in_flight = Some(f.clone());
        Some(f)
    }

    /// The store has `f`: it leaves the queue and the spool.
    pub fn uploaded(&mut self, f: &SpooledFile) {
        self.in_flight = None;
        self.store_failing = false;
        if self.remove(f) {
            if let Err(e) = remove_uploaded(f) {
                tracing::warn!(error = %e, "Uploaded file could not be removed from the spool; it will be uploaded again (same key, same bytes).");
            }
        }
    }

    /// The upload of the file in flight failed; it stays queued.
    pub fn upload_failed(&mut self) {
        self.in_flight = None;
        self.store_failing = true;
    }

    /// `f` is no longer on disk (removed by hand): it leaves the queue.
    pub fn vanished(&mut self, f: &SpooledFile) {
        self.in_flight = None;
        self.remove(f);
    }

    fn remove(&mut self, f: &SpooledFile) -> bool {
        let was = self.files.remove(f);
        if was {
            self.bytes -= f.size.min(self.bytes);
        }
        self.publish();
        was
    }

    fn publish(&self) {
        let s = &self.stats;
        s.spool_files
            .store(self.files.len() as u64, Ordering::Relaxed);
        s.spool_bytes.store(self.bytes, Ordering::Relaxed);
    }

    fn over_limits(&self) -> bool {
        self.bytes > self.limits.max_bytes
            || (self.limits.min_free_disk > 0
                && free_disk(&self.limits.root).is_some_and(|f| f < self.limits.min_free_disk))
    }

    /// Keeps the spool inside `spool_max_bytes` and `min_free_disk` while
    /// uploads fail, deleting the lowest-priority files first. Returns the
    /// number of files deleted.
    pub fn enforce_limits(&mut self) -> usize {
        let mut n = 0;
        while self.store_failing && self.over_limits() && self.evict_one(None, Eviction::Ceiling) {
            n += 1;
        }
        n
    }

    /// Deletes files of lower priority than `table` until `need` bytes are
    /// free on the spool's disk (beyond `min_free_disk`) or none is left.
    /// Returns whether that much space is free now.
    pub fn make_room(&mut self, table: TableId, need: u64) -> bool {
        let want = need.saturating_add(self.limits.min_free_disk);
        loop {
            match free_disk(&self.limits.root) {
                Some(free) if free >= want => return true,
                None => return true,
                _ => {}
            }
            if !self.evict_one(Some(table), Eviction::DiskFull) {
                return false;
            }
        }
    }

    /// Deletes the oldest file of the lowest-priority table present (of lower
    /// priority than `below`, when given), never the one in flight.
    fn evict_one(&mut self, below: Option<TableId>, why: Eviction) -> bool {
        let victim = self
            .files
            .iter()
            .rev()
            .find(|f| below.is_none_or(|b| f.table > b) && self.in_flight.as_ref() != Some(*f))
            .map(|f| f.table)
            .and_then(|worst| {
                self.files
                    .iter()
                    .find(|f| f.table == worst && self.in_flight.as_ref() != Some(*f))
                    .cloned()
            });
        let Some(victim) = victim else {
            return false;
        };
        self.remove(&victim);
        self.stats.spool_evictions.fetch_add(1, Ordering::Relaxed);
        let advice = match why {
            Eviction::Ceiling => "the store has been failing and the spool reached output.spool_max_bytes or output.min_free_disk: restore the uplink, or give the spool more room",
            Eviction::DiskFull => "the spool's disk could not take a file of a more important table: free space on output.spool_dir's disk, or lower output.spool_max_bytes",
        };
        match remove_uploaded(&victim) {
            Ok(()) => tracing::error!(
                table = victim.table.name(),
                key = %victim.key,
                bytes = victim.size,
                spool_bytes = self.bytes,
                reason = advice,
                "Spool full: file deleted without upload (lowest priority first); its rows are lost."
            ),
            Err(e) => {
                tracing::error!(error = %e, key = %victim.key, "A spool file chosen for eviction could not be deleted.")
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::spool::Spool;

    /// A spool and its queue, with a ceiling of `max_bytes`.
    struct Setup {
        _dir: tempfile::TempDir,
        spool: Spool,
        q: SpoolQueue,
        stats: Arc<UploadStats>,
    }

    impl Setup {
        fn new(max_bytes: u64) -> Setup {
            let dir = tempfile::tempdir().unwrap();
            let spool = Spool::open(dir.path(), "v", "g").unwrap();
            let stats = Arc::new(UploadStats::default());
            let limits = SpoolLimits {
                max_bytes,
                ..SpoolLimits::unbounded(dir.path().to_path_buf())
            };
            let q = SpoolQueue::new(Vec::new(), limits, stats.clone());
            Setup {
                _dir: dir,
                spool,
                q,
                stats,
            }
        }

        /// Spools a 40-byte file of each of `tables` and queues them as one flush.
        fn add(&mut self, tables: &[TableId]) -> Vec<SpooledFile> {
            let files: Vec<SpooledFile> = tables
                .iter()
                .map(|&t| self.spool.write(t, "2026-11-29", &[0; 40]).unwrap())
                .collect();
            self.q.insert_all(files.clone());
            files
        }

        fn evictions(&self) -> u64 {
            self.stats.spool_evictions.load(Ordering::Relaxed)
        }
    }

    #[test]
    fn uploaded_files_lower_the_byte_count_so_a_healthy_spool_never_fills() {
        let mut t = Setup::new(100);
        for _ in 0..50 {
            t.add(&[TableId::Raw]);
            t.q.enforce_limits();
            let next = t.q.start_upload().unwrap();
            t.q.uploaded(&next);
        }
        assert_eq!(t.q.bytes(), 0);
        assert_eq!(t.stats.spool_bytes.load(Ordering::Relaxed), 0);
        assert_eq!(t.evictions(), 0);
    }

    #[test]
    fn nothing_is_evicted_while_the_store_takes_files() {
        let mut t = Setup::new(10);
        t.add(&[TableId::Alerts]);
        assert_eq!(t.q.enforce_limits(), 0);
        assert_eq!(t.q.len(), 1);
        assert_eq!(t.evictions(), 0);
    }

    #[test]
    fn while_uploads_fail_the_lowest_priority_goes_first_and_alerts_last() {
        let mut t = Setup::new(100);
        let f = t.add(&[TableId::Alerts, TableId::Raw, TableId::Raw]);
        let _ = t.q.start_upload();
        t.q.upload_failed();
        assert_eq!(t.q.enforce_limits(), 1);
        let left: Vec<_> = t.q.files().cloned().collect();
        assert_eq!(
            left,
            [f[0].clone(), f[2].clone()],
            "the oldest raw file goes first"
        );
    }

    #[test]
    fn the_file_in_flight_is_never_evicted() {
        let mut t = Setup::new(0);
        let a = t.add(&[TableId::Alerts]).remove(0);
        t.q.upload_failed();
        let f = t.q.start_upload().unwrap();
        assert_eq!(t.q.enforce_limits(), 0);
        assert_eq!(f, a);
        assert!(a.path.exists());
    }

    #[test]
    fn making_room_deletes_only_tables_of_lower_priority() {
        let mut t = Setup::new(u64::MAX);
        let f = t.add(&[TableId::Alerts, TableId::WindowsWearable, TableId::Raw]);
        // No disk is this large: every lower-priority file goes, and no more.
        assert!(!t.q.make_room(TableId::WindowsWearable, u64::MAX / 2));
        let left: Vec<_> = t.q.files().cloned().collect();
        assert_eq!(left, f[..2]);
        assert!(!f[2].path.exists());
    }
}
