//! The uploader: spool files → object store, most important tables first,
//! oldest first within a table. A local file is deleted only after the store
//! has it. Transient failures are retried with exponential backoff and
//! jitter, capped at [`MAX_BACKOFF`]; permanent ones (credentials, a missing
//! bucket) are logged at ERROR and retried every `output.permanent_retry`.
//!
//! One file that fails does not hold up the others: it is set aside and
//! retried on its own backoff while the next file is tried at once. The
//! store counts as failing (an outage: backoff for the whole queue, and the
//! spool's ceilings enforced) when two different files fail with no success
//! in between, or on a permanent error.
//!
//! Uploads are create-only. A key the store already holds with the same
//! bytes counts as uploaded; with other bytes (a spool whose counter was
//! lost) the file is numbered anew after the store's highest number, and
//! the conflict counted and logged.
//!
//! The files waiting and the spool's ceilings live in
//! [`super::spool::queue::SpoolQueue`], shared with the encoder.

pub mod outage;
mod sequence;

pub use sequence::continue_store_sequence;

pub use super::spool::queue::{free_disk, SpoolLimits, MAX_BACKOFF, MIN_BACKOFF};
use super::spool::queue::{lock, SharedQueue, SpoolQueue};
use super::spool::{Numbering, SpooledFile};
use super::store::{Put, Store, StoreError};
use crate::sinks::UploadStats;
use crate::util::log_limit::LogLimiter;
use crate::util::rng::Rng;
use crate::util::time::now_micros;
use outage::OutageLog;
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How often a file set aside, or a key conflict, is logged at most (the
/// next line says how many were not).
const LOG_EVERY_MICROS: i64 = 60_000_000;

/// What one upload attempt did.
#[derive(Debug)]
pub enum Attempt {
    /// Nothing waits.
    Idle,
    /// Files wait, each set aside after failing; the first is due then.
    Waiting(Instant),
    /// A file left the queue (uploaded, already in the store, or vanished),
    /// or was numbered anew after a key conflict.
    Done,
    /// The file failed while the store may work: it is set aside and the
    /// next file is tried; `failures` in a row of this file.
    SetAside {
        /// Why it failed.
        error: StoreError,
        /// Its failures in a row.
        failures: u32,
    },
}

/// Uploads spooled files.
pub struct Uploader {
    store: Store,
    stats: Arc<UploadStats>,
    queue: SharedQueue,
    numbering: Numbering,
    permanent_retry: Duration,
    failures_in_row: u32,
    /// Files that failed since the last success: two mean the store fails.
    failed_since_success: BTreeSet<String>,
    aside_log: LogLimiter,
    conflict_log: LogLimiter,
    rng: Rng,
}

impl Uploader {
    /// An uploader with `pending` files already waiting, and a queue of its own.
    pub fn new(
        store: Store,
        stats: Arc<UploadStats>,
        pending: Vec<SpooledFile>,
        limits: SpoolLimits,
        numbering: Numbering,
    ) -> Uploader {
        let queue = SpoolQueue::new(pending, limits, stats.clone()).shared();
        Uploader::with_queue(store, stats, queue, numbering)
    }

    /// An uploader of a queue it shares with the encoder, numbering files
    /// anew (after a key conflict) with the spool's `numbering`.
    pub fn with_queue(
        store: Store,
        stats: Arc<UploadStats>,
        queue: SharedQueue,
        numbering: Numbering,
    ) -> Uploader {
        let permanent_retry = lock(&queue).limits().permanent_retry;
        Uploader {
            store,
            stats,
            queue,
            numbering,
            permanent_retry,
            failures_in_row: 0,
            failed_since_success: BTreeSet::new(),
            aside_log: LogLimiter::new(LOG_EVERY_MICROS),
            conflict_log: LogLimiter::new(LOG_EVERY_MICROS),
            rng: Rng::new(now_micros() as u64),
        }
    }

    /// Files waiting.
    pub fn waiting(&self) -> usize {
        lock(&self.queue).len()
    }

    /// Uploads the next file (the first not set aside). `Err` when the
    /// store is failing (an outage): the caller backs off.
    pub async fn upload_one(&mut self) -> Result<Attempt, StoreError> {
        let next = lock(&self.queue).start_upload();
        let Some(f) = next else {
            let q = lock(&self.queue);
            return Ok(q.next_due().map_or(Attempt::Idle, Attempt::Waiting));
        };
        let bytes = match tokio::fs::read(&f.path).await {
            Ok(b) => b,
            Err(e) => {
                // Gone from the spool (removed by hand?): nothing to upload.
                self.stats.vanished_files.fetch_add(1, Ordering::Relaxed);
                tracing::error!(path = %f.path.display(), error = %e, "Spool file vanished before upload; it is lost.");
                lock(&self.queue).vanished(&f);
                return Ok(Attempt::Done);
            }
        };
        let started = Instant::now();
        match self.store.put(&f.key, bytes).await {
            Ok(Put::Created) => {
                tracing::debug!(key = %f.key, bytes = f.size, ms = started.elapsed().as_millis() as u64, "Uploaded.");
                self.succeeded(&f);
                Ok(Attempt::Done)
            }
            Ok(Put::AlreadyThere) => {
                tracing::debug!(key = %f.key, "Already in the store with the same bytes (an upload repeated after a restart).");
                self.succeeded(&f);
                Ok(Attempt::Done)
            }
            Ok(Put::Conflict) => self.conflict(&f).await,
            Err(e) => self.failed(&f, e),
        }
    }

    /// The store has `f`.
    fn succeeded(&mut self, f: &SpooledFile) {
        let was_failing = lock(&self.queue).store_failing();
        let stuck = lock(&self.queue).uploaded(f);
        let s = &self.stats;
        s.uploaded_files.fetch_add(1, Ordering::Relaxed);
        s.uploaded_bytes.fetch_add(f.size, Ordering::Relaxed);
        s.last_upload_at.store(now_micros(), Ordering::Relaxed);
        self.failures_in_row = 0;
        self.failed_since_success.clear();
        if was_failing {
            lock(&self.queue).retry_all();
            return;
        }
        for (key, failures) in stuck {
            if let Some(held) = self.aside_log.allow(now_micros()) {
                tracing::error!(key = %key, failures, not_logged = held, "The store refuses this file while it takes others: it is retried on the side (backoff up to 60 s) and the queue goes on. Check the store's log for this key; pitchside_upload_stuck_files counts such files.");
            }
        }
    }

    /// The store holds `f`'s key with other bytes: number `f` anew.
    async fn conflict(&mut self, f: &SpooledFile) -> Result<Attempt, StoreError> {
        self.stats.upload_conflicts.fetch_add(1, Ordering::Relaxed);
        let renamed = match sequence::renumber(&self.store, &self.numbering, f).await {
            Ok(r) => r,
            Err(e) => return self.failed(f, e),
        };
        let Some(new) = renamed else {
            let failures = lock(&self.queue).set_aside(f).0;
            let error = StoreError::Conflict { key: f.key.clone() };
            return Ok(Attempt::SetAside { error, failures });
        };
        if let Some(held) = self.conflict_log.allow(now_micros()) {
            tracing::warn!(key = %f.key, new_key = %new.key, not_logged = held, "The store already holds a different object at this key (the spool's counter was lost or damaged): it is left alone and the file is uploaded under the next free number.");
        }
        lock(&self.queue).renamed(f, new);
        Ok(Attempt::Done)
    }

    /// The upload of `f` failed with `e`: set aside, or the store is failing.
    fn failed(&mut self, f: &SpooledFile, e: StoreError) -> Result<Attempt, StoreError> {
        self.stats.upload_failures.fetch_add(1, Ordering::Relaxed);
        self.failed_since_success.insert(f.key.clone());
        let mut q = lock(&self.queue);
        let (failures, retry_in) = q.set_aside(f);
        if e.is_permanent() || q.store_failing() || self.failed_since_success.len() >= 2 {
            q.upload_failed();
            self.failures_in_row += 1;
            return Err(e);
        }
        drop(q);
        if let Some(held) = self.aside_log.allow(now_micros()) {
            tracing::warn!(key = %f.key, error = %e, failures, retry_in_ms = retry_in.as_millis() as u64, not_logged = held, "Upload failed; the file is set aside and retried on the side while the next file is tried.");
        }
        Ok(Attempt::SetAside { error: e, failures })
    }

    /// The delay before the next attempt after a failure.
    pub fn delay_after(&mut self, e: &StoreError) -> Duration {
        if e.is_permanent() {
            self.permanent_retry
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
    /// failures of the store, or of one file (files stay in the spool).
    /// Used by `replay` and at shutdown.
    pub async fn drain(&mut self, attempts: u32) -> Result<(), StoreError> {
        loop {
            match self.upload_one().await {
                Ok(Attempt::Done) => {}
                Ok(Attempt::Idle) => return Ok(()),
                Ok(Attempt::Waiting(due)) => {
                    tokio::time::sleep_until(tokio::time::Instant::from_std(due)).await;
                }
                Ok(Attempt::SetAside { error, failures }) => {
                    if failures >= attempts || error.is_permanent() {
                        return Err(error);
                    }
                }
                Err(e) if self.failures_in_row >= attempts || e.is_permanent() => return Err(e),
                Err(e) => {
                    let d = self.backoff();
                    tracing::warn!(error = %e, retry_in_ms = d.as_millis() as u64, "Upload failed; retrying.");
                    tokio::time::sleep(d).await;
                }
            }
        }
    }

    /// The daemon loop: uploads what the encoder adds to the shared queue
    /// (`wake` says something was added; it closes when the encoder is done),
    /// retries, and keeps the spool inside its ceilings while uploads fail.
    /// On shutdown (and once `wake` is closed) makes a last short attempt to
    /// upload what is left; the rest stays in the spool for the next start.
    pub async fn run(mut self, mut wake: mpsc::Receiver<()>, shutdown: CancellationToken) {
        let mut retry_at: Option<tokio::time::Instant> = None;
        let mut due: Option<tokio::time::Instant> = None;
        let mut open = true;
        let mut outage = OutageLog::default();
        loop {
            lock(&self.queue).enforce_limits();
            let now = tokio::time::Instant::now();
            let ready = retry_at.is_none_or(|t| now >= t) && due.is_none_or(|t| now >= t);
            if ready && self.waiting() > 0 {
                due = None;
                let failed = self.failures_in_row;
                match self.upload_one().await {
                    Ok(Attempt::Waiting(t)) => due = Some(tokio::time::Instant::from_std(t)),
                    Ok(_) => {
                        retry_at = None;
                        if self.failures_in_row == 0 {
                            outage.succeeded(failed, self.waiting());
                        }
                    }
                    Err(e) => {
                        let d = self.delay_after(&e);
                        outage.failed(&e, self.failures_in_row, self.waiting(), d);
                        retry_at = Some(tokio::time::Instant::now() + d);
                    }
                }
                if due.is_none() {
                    continue;
                }
            }
            if !open {
                break;
            }
            let far = tokio::time::Instant::now() + Duration::from_secs(3600);
            let sleep_until = retry_at.into_iter().chain(due).max().unwrap_or(far);
            tokio::select! {
                w = wake.recv() => match w {
                    None => open = false,
                    // A new file may be uploaded at once, unless the store is failing.
                    Some(()) => due = None,
                },
                _ = tokio::time::sleep_until(sleep_until) => {}
                _ = shutdown.cancelled(), if retry_at.is_some() || due.is_some() => {
                    // Store unreachable, or only refused files left, and we are stopping.
                    break;
                }
            }
        }
        let left = self.waiting();
        if left > 0 {
            tracing::warn!(
                files = left,
                "Stopping with files still in the spool; they are uploaded at the next start."
            );
        }
    }
}

#[cfg(test)]
mod tests;
