//! The uploader: spool files → object store, most important tables first,
//! oldest first within a table. A local file is deleted only after the store
//! has it. Transient failures are retried with exponential backoff and
//! jitter, capped at [`MAX_BACKOFF`]; permanent ones (credentials, a missing
//! bucket) are logged at ERROR and retried every `output.permanent_retry`.
//!
//! The uploader also owns the spool's ceiling: when the files waiting exceed
//! `output.spool_max_bytes`, or the disk's free space drops under
//! `output.min_free_disk`, it deletes the lowest-priority files first (raw,
//! then progress, rejects, late, windows; alerts last), oldest first within
//! a table, each one logged at ERROR and counted.

use super::spool::{remove_uploaded, SpooledFile};
use super::store::Store;
use crate::sources::simulator::Rng;
use crate::telemetry::UploadStats;
use crate::timefmt::now_micros;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// First retry delay.
pub const MIN_BACKOFF: Duration = Duration::from_millis(500);
/// Longest retry delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// The spool's ceilings.
#[derive(Debug, Clone)]
pub struct SpoolLimits {
    /// The spool folder (its filesystem is checked for free space).
    pub root: std::path::PathBuf,
    /// Most bytes of files waiting.
    pub max_bytes: u64,
    /// Free space to leave on the filesystem.
    pub min_free_disk: u64,
    /// Retry interval after a permanent error.
    pub permanent_retry: Duration,
}

impl SpoolLimits {
    /// No ceiling (replay into a folder).
    pub fn unbounded(root: std::path::PathBuf) -> SpoolLimits {
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

/// Uploads spooled files.
pub struct Uploader {
    store: Store,
    stats: Arc<UploadStats>,
    queue: BTreeSet<SpooledFile>,
    queued_bytes: u64,
    limits: SpoolLimits,
    failures_in_row: u32,
    rng: Rng,
}

impl Uploader {
    /// An uploader with `pending` files already waiting.
    pub fn new(
        store: Store,
        stats: Arc<UploadStats>,
        pending: Vec<SpooledFile>,
        limits: SpoolLimits,
    ) -> Uploader {
        let mut u = Uploader {
            store,
            stats,
            queue: BTreeSet::new(),
            queued_bytes: 0,
            limits,
            failures_in_row: 0,
            rng: Rng::new(now_micros() as u64),
        };
        for f in pending {
            u.queued_bytes += f.size;
            u.queue.insert(f);
        }
        u.enforce_limits();
        u
    }

    /// Adds a newly spooled file, then keeps the spool inside its ceilings.
    pub fn enqueue(&mut self, f: SpooledFile) {
        let size = f.size;
        if self.queue.insert(f) {
            self.queued_bytes += size;
        }
        self.enforce_limits();
    }

    fn publish_gauges(&self) {
        self.stats
            .spool_files
            .store(self.queue.len() as u64, Ordering::Relaxed);
        self.stats
            .spool_bytes
            .store(self.queued_bytes, Ordering::Relaxed);
    }

    fn over_limits(&self) -> bool {
        if self.queued_bytes > self.limits.max_bytes {
            return true;
        }
        self.limits.min_free_disk > 0
            && free_disk(&self.limits.root).is_some_and(|free| free < self.limits.min_free_disk)
    }

    /// Deletes the lowest-priority files until the spool is inside its ceilings.
    fn enforce_limits(&mut self) {
        while !self.queue.is_empty() && self.over_limits() {
            // The lowest-priority table present, and its oldest file.
            let Some(worst) = self.queue.last().map(|f| f.table) else {
                break;
            };
            let Some(victim) = self.queue.iter().find(|f| f.table == worst).cloned() else {
                break;
            };
            self.queue.remove(&victim);
            self.queued_bytes -= victim.size.min(self.queued_bytes);
            self.stats.spool_evictions.fetch_add(1, Ordering::Relaxed);
            match remove_uploaded(&victim) {
                Ok(()) => tracing::error!(
                    table = victim.table.name(),
                    key = %victim.key,
                    bytes = victim.size,
                    spool_bytes = self.queued_bytes,
                    max_bytes = self.limits.max_bytes,
                    "Spool full: file deleted without upload (lowest priority first). Its rows are lost; raise output.spool_max_bytes or restore the uplink."
                ),
                Err(e) => {
                    tracing::error!(error = %e, "Spool full and a file could not be deleted.")
                }
            }
        }
        self.publish_gauges();
    }

    /// Files waiting.
    pub fn waiting(&self) -> usize {
        self.queue.len()
    }

    /// Uploads the first file in the queue. `Ok(false)` when the queue is empty.
    pub async fn upload_one(&mut self) -> Result<bool, super::store::StoreError> {
        let Some(f) = self.queue.first().cloned() else {
            return Ok(false);
        };
        let bytes = match tokio::fs::read(&f.path).await {
            Ok(b) => b,
            Err(e) => {
                // Gone from the spool (removed by hand?): nothing to upload.
                tracing::error!(path = %f.path.display(), error = %e, "Spool file vanished before upload; it is lost.");
                self.queue.remove(&f);
                self.queued_bytes -= f.size.min(self.queued_bytes);
                self.publish_gauges();
                return Ok(true);
            }
        };
        let started = std::time::Instant::now();
        match self.store.put(&f.key, bytes).await {
            Ok(()) => {
                self.queue.remove(&f);
                if let Err(e) = remove_uploaded(&f) {
                    tracing::warn!(error = %e, "Uploaded file could not be removed from the spool; it will be uploaded again (same key, same bytes).");
                }
                let s = &self.stats;
                s.uploaded_files.fetch_add(1, Ordering::Relaxed);
                s.uploaded_bytes.fetch_add(f.size, Ordering::Relaxed);
                s.last_upload_at.store(now_micros(), Ordering::Relaxed);
                s.spool_files.fetch_sub(
                    1.min(s.spool_files.load(Ordering::Relaxed)),
                    Ordering::Relaxed,
                );
                let b = s.spool_bytes.load(Ordering::Relaxed);
                s.spool_bytes.fetch_sub(f.size.min(b), Ordering::Relaxed);
                tracing::debug!(key = %f.key, bytes = f.size, ms = started.elapsed().as_millis() as u64, "Uploaded.");
                self.failures_in_row = 0;
                Ok(true)
            }
            Err(e) => {
                self.stats.upload_failures.fetch_add(1, Ordering::Relaxed);
                self.failures_in_row += 1;
                Err(e)
            }
        }
    }

    /// The delay before the next attempt after a failure.
    pub fn delay_after(&mut self, e: &super::store::StoreError) -> Duration {
        if e.is_permanent() {
            self.limits.permanent_retry
        } else {
            self.backoff()
        }
    }

    /// The delay before the next attempt after consecutive transient failures.
    pub fn backoff(&mut self) -> Duration {
        let exp = MIN_BACKOFF.as_millis() as f64
            * 2f64.powi(self.failures_in_row.saturating_sub(1).min(16) as i32);
        let capped = exp.min(MAX_BACKOFF.as_millis() as f64);
        // Full jitter between half and all of the delay.
        Duration::from_millis((capped * (0.5 + 0.5 * self.rng.uniform())) as u64)
    }

    /// Uploads everything waiting; gives up after `attempts` consecutive
    /// failures (files stay in the spool). Used by `replay` and at shutdown.
    pub async fn drain(&mut self, attempts: u32) -> Result<(), super::store::StoreError> {
        loop {
            match self.upload_one().await {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) if self.failures_in_row >= attempts || e.is_permanent() => return Err(e),
                Err(e) => {
                    let d = self.backoff();
                    tracing::warn!(error = %e, retry_in_ms = d.as_millis() as u64, "Upload failed; retrying.");
                    tokio::time::sleep(d).await;
                }
            }
        }
    }

    /// The daemon loop: takes new files from `rx`, uploads, retries. On
    /// shutdown (and once `rx` is closed) makes a last short attempt to upload
    /// what is left; the rest stays in the spool for the next start.
    pub async fn run(mut self, mut rx: mpsc::Receiver<SpooledFile>, shutdown: CancellationToken) {
        let mut retry_at: Option<tokio::time::Instant> = None;
        let mut open = true;
        loop {
            while let Ok(f) = rx.try_recv() {
                self.enqueue(f);
            }
            let ready = retry_at.is_none_or(|t| tokio::time::Instant::now() >= t);
            if ready && !self.queue.is_empty() {
                match self.upload_one().await {
                    Ok(_) => retry_at = None,
                    Err(e) => {
                        let d = self.delay_after(&e);
                        if e.is_permanent()
                            || self.failures_in_row == 1
                            || self.failures_in_row.is_multiple_of(10)
                        {
                            tracing::error!(error = %e, permanent = e.is_permanent(), failures = self.failures_in_row, waiting = self.queue.len(), retry_in_ms = d.as_millis() as u64, "Upload failed; files stay in the spool and are retried.");
                        }
                        retry_at = Some(tokio::time::Instant::now() + d);
                    }
                }
                continue;
            }
            if !open {
                break;
            }
            let sleep_until =
                retry_at.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(3600));
            tokio::select! {
                f = rx.recv() => match f {
                    Some(f) => self.enqueue(f),
                    None => open = false,
                },
                _ = tokio::time::sleep_until(sleep_until) => {}
                _ = shutdown.cancelled(), if retry_at.is_some() => {
                    // Store unreachable and we are stopping: do not wait for it.
                    break;
                }
            }
        }
        let left = self.queue.len();
        if left > 0 {
            tracing::warn!(
                files = left,
                "Stopping with files still in the spool; they are uploaded at the next start."
            );
        }
    }
}

/// When the spool has no sequence counters (new, or lost with an SD card),
/// asks the store for the highest numbers this gateway already used and
/// continues after them, so existing objects are never overwritten.
pub async fn continue_store_sequence(
    spool: &mut super::spool::Spool,
    store: &Store,
    config: &crate::config::Config,
) -> Result<(), super::spool::SpoolError> {
    let unknown = spool.unknown_seq_tables();
    if unknown.is_empty() {
        return Ok(());
    }
    match store
        .highest_seqs(&config.venue_id, &config.gateway_id, &unknown)
        .await
    {
        Ok(found) => {
            for &t in &unknown {
                let next = found
                    .iter()
                    .find(|(x, _)| *x == t)
                    .map_or(0, |(_, m)| m + 1);
                if next > 0 {
                    tracing::info!(
                        table = t.name(),
                        next_seq = next,
                        "Spool had no counter; continuing after the files already in the store."
                    );
                }
                spool.reserve_seq(t, next)?;
            }
        }
        Err(e) => tracing::error!(
            error = %e,
            store = %store.url(),
            "The spool has no sequence counters and the store cannot be listed: numbering starts from what the spool holds. If this gateway uploaded before with a spool that was since lost, objects may be overwritten."
        ),
    }
    Ok(())
}
