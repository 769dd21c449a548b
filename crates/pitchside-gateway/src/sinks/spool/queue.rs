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
//!
//! A file whose upload fails while the store takes others is set aside
//! (`aside`): the next file is uploaded, and the one set aside is retried
//! on its own backoff.

mod aside;

pub use aside::{MAX_BACKOFF, MIN_BACKOFF};

use super::{remove_uploaded, SpooledFile};
use crate::sinks::UploadStats;
use crate::tables::TableId;
use aside::SetAside;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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
    aside: SetAside,
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
            aside: SetAside::default(),
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

    /// The next file to upload (the first not set aside, or set aside and
    /// due), marked in flight (never evicted until [`SpoolQueue::uploaded`],
    /// [`SpoolQueue::set_aside`] or [`SpoolQueue::upload_failed`]).
    pub fn start_upload(&mut self) -> Option<SpooledFile> {
        let now = Instant::now();
        let f = self
            .files
            .iter()
            .find(|f| !self.aside.waiting(&f.key, now))
            .cloned()?;
        self.in_flight = Some(f.clone());
        Some(f)
    }

    /// When the first file set aside is due again (none: `None`).
    pub fn next_due(&self) -> Option<Instant> {
        self.aside.next_due()
    }

    /// The store has `f`: it leaves the queue and the spool. Returns the
    /// files set aside that this success shows to be refused on their own
    /// (each once), with their failures in a row.
    pub fn uploaded(&mut self, f: &SpooledFile) -> Vec<(String, u32)> {
        self.in_flight = None;
        self.store_failing = false;
        if self.remove(f) {
            if let Err(e) = remove_uploaded(f) {
                tracing::warn!(error = %e, "Uploaded file could not be removed from the spool; it will be uploaded again (same key, same bytes).");
            }
        }
        self.aside.unreported()
    }

    /// The upload of the file in flight failed with the store failing: it
    /// stays queued.
    pub fn upload_failed(&mut self) {
        self.in_flight = None;
        self.store_failing = true;
    }

    /// The store works again after failing: files set aside meanwhile are
    /// tried in order again (they failed with the store, not on their own).
    pub fn retry_all(&mut self) {
        if !self.aside.is_empty() {
            self.aside.clear();
            self.publish();
        }
    }

    /// The upload of `f` failed while the store may work: `f` is set aside
    /// and retried on its own backoff; returns its failures in a row and the
    /// delay.
    pub fn set_aside(&mut self, f: &SpooledFile) -> (u32, Duration) {
        self.in_flight = None;
        let r = self.aside.fail(&f.key, Instant::now());
        self.publish();
        r
    }

    /// Failed uploads in a row of `f` while set aside (0 if it is not).
    pub fn aside_failures(&self, f: &SpooledFile) -> u32 {
        self.aside.failures(&f.key)
    }

    /// `old` is now `new` (numbered anew): same bytes, another key.
    pub fn renamed(&mut self, old: &SpooledFile, new: SpooledFile) {
        self.in_flight = None;
        self.remove(old);
        self.insert_all([new]);
    }

    /// `f` is no longer on disk (removed by hand): it leaves the queue.
    pub fn vanished(&mut self, f: &SpooledFile) {
        self.in_flight = None;
        self.remove(f);
    }

    fn remove(&mut self, f: &SpooledFile) -> bool {
        let was = self.files.remove(f);
        self.aside.forget(&f.key);
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
        s.stuck_files
            .store(self.aside.len() as u64, Ordering::Relaxed);
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
mod tests;
