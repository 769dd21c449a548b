//! The uploader: spool files → object store, most important tables first,
//! oldest first within a table. A local file is deleted only after the store
//! has it. Failures are retried with exponential backoff and jitter, capped
//! at [`MAX_BACKOFF`]; nothing is dropped.

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

/// Uploads spooled files.
pub struct Uploader {
    store: Store,
    stats: Arc<UploadStats>,
    queue: BTreeSet<SpooledFile>,
    failures_in_row: u32,
    rng: Rng,
}

impl Uploader {
    /// An uploader with `pending` files already waiting.
    pub fn new(store: Store, stats: Arc<UploadStats>, pending: Vec<SpooledFile>) -> Uploader {
        stats
            .spool_files
            .store(pending.len() as u64, Ordering::Relaxed);
        stats
            .spool_bytes
            .store(pending.iter().map(|f| f.size).sum(), Ordering::Relaxed);
        Uploader {
            store,
            stats,
            queue: pending.into_iter().collect(),
            failures_in_row: 0,
            rng: Rng::new(now_micros() as u64),
        }
    }

    /// Adds a newly spooled file.
    pub fn enqueue(&mut self, f: SpooledFile) {
        self.queue.insert(f);
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

    /// The delay before the next attempt after consecutive failures.
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
                Err(e) if self.failures_in_row >= attempts => return Err(e),
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
                        let d = self.backoff();
                        if self.failures_in_row == 1 || self.failures_in_row % 10 == 0 {
                            tracing::error!(error = %e, failures = self.failures_in_row, waiting = self.queue.len(), retry_in_ms = d.as_millis() as u64, "Upload failed; files stay in the spool and are retried.");
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
