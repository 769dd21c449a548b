//! The uploader: spool files → object store, most important tables first,
//! oldest first within a table. A local file is deleted only after the store
//! has it. Transient failures are retried with exponential backoff and
//! jitter, capped at [`MAX_BACKOFF`]; permanent ones (credentials, a missing
//! bucket) are logged at ERROR and retried every `output.permanent_retry`.
//!
//! The files waiting and the spool's ceilings live in
//! [`super::spool_queue::SpoolQueue`], shared with the encoder; the
//! uploader enforces the ceilings while uploads fail.

use super::outage::OutageLog;
use super::spool::SpooledFile;
pub use super::spool_queue::{free_disk, SpoolLimits};
use super::spool_queue::{lock, SharedQueue, SpoolQueue};
use super::store::Store;
use crate::sinks::UploadStats;
use crate::util::rng::Rng;
use crate::util::time::now_micros;
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
    queue: SharedQueue,
    permanent_retry: Duration,
    failures_in_row: u32,
    rng: Rng,
}

impl Uploader {
    /// An uploader with `pending` files already waiting, and a queue of its own.
    pub fn new(
        store: Store,
        stats: Arc<UploadStats>,
        pending: Vec<SpooledFile>,
        limits: SpoolLimits,
    ) -> Uploader {
        let queue = SpoolQueue::new(pending, limits, stats.clone()).shared();
        Uploader::with_queue(store, stats, queue)
    }

    /// An uploader of a queue it shares with the encoder.
    pub fn with_queue(store: Store, stats: Arc<UploadStats>, queue: SharedQueue) -> Uploader {
        let permanent_retry = lock(&queue).limits().permanent_retry;
        Uploader {
            store,
            stats,
            queue,
            permanent_retry,
            failures_in_row: 0,
            rng: Rng::new(now_micros() as u64),
        }
    }

    /// Files waiting.
    pub fn waiting(&self) -> usize {
        lock(&self.queue).len()
    }

    /// Uploads the first file in the queue. `Ok(false)` when the queue is empty.
    pub async fn upload_one(&mut self) -> Result<bool, super::store::StoreError> {
        let Some(f) = lock(&self.queue).start_upload() else {
            return Ok(false);
        };
        let bytes = match tokio::fs::read(&f.path).await {
            Ok(b) => b,
            Err(e) => {
                // Gone from the spool (removed by hand?): nothing to upload.
                self.stats.vanished_files.fetch_add(1, Ordering::Relaxed);
                tracing::error!(path = %f.path.display(), error = %e, "Spool file vanished before upload; it is lost.");
                lock(&self.queue).vanished(&f);
                return Ok(true);
            }
        };
        let started = std::time::Instant::now();
        match self.store.put(&f.key, bytes).await {
            Ok(()) => {
                lock(&self.queue).uploaded(&f);
                let s = &self.stats;
                s.uploaded_files.fetch_add(1, Ordering::Relaxed);
                s.uploaded_bytes.fetch_add(f.size, Ordering::Relaxed);
                s.last_upload_at.store(now_micros(), Ordering::Relaxed);
                tracing::debug!(key = %f.key, bytes = f.size, ms = started.elapsed().as_millis() as u64, "Uploaded.");
                self.failures_in_row = 0;
                Ok(true)
            }
            Err(e) => {
                lock(&self.queue).upload_failed();
                self.stats.upload_failures.fetch_add(1, Ordering::Relaxed);
                self.failures_in_row += 1;
                Err(e)
            }
        }
    }

    /// The delay before the next attempt after a failure.
    pub fn delay_after(&mut self, e: &super::store::StoreError) -> Duration {
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

    /// The daemon loop: uploads what the encoder adds to the shared queue
    /// (`wake` says something was added; it closes when the encoder is done),
    /// retries, and keeps the spool inside its ceilings while uploads fail.
    /// On shutdown (and once `wake` is closed) makes a last short attempt to
    /// upload what is left; the rest stays in the spool for the next start.
    pub async fn run(mut self, mut wake: mpsc::Receiver<()>, shutdown: CancellationToken) {
        let mut retry_at: Option<tokio::time::Instant> = None;
        let mut open = true;
        let mut outage = OutageLog::default();
        loop {
            lock(&self.queue).enforce_limits();
            let ready = retry_at.is_none_or(|t| tokio::time::Instant::now() >= t);
            if ready && self.waiting() > 0 {
                let failed = self.failures_in_row;
                match self.upload_one().await {
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
                continue;
            }
            if !open {
                break;
            }
            let sleep_until =
                retry_at.unwrap_or_else(|| tokio::time::Instant::now() + Duration::from_secs(3600));
            tokio::select! {
                w = wake.recv() => if w.is_none() { open = false },
                _ = tokio::time::sleep_until(sleep_until) => {}
                _ = shutdown.cancelled(), if retry_at.is_some() => {
                    // Store unreachable and we are stopping: do not wait for it.
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
        .highest_seqs(&config.venue.id, &config.venue.gateway_id, &unknown)
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

#[cfg(test)]
mod tests {
    //! A model-based test of the spool's accounting: random sequences of
    //! spooled files, uploads to a store that goes down and comes back,
    //! ceiling enforcement and restarts, with the invariants checked after
    //! every step against what is really on disk and in the store.
    use super::*;
    use crate::sinks::spool::Spool;
    use crate::tables::TableId;
    use proptest::prelude::*;
    use std::path::Path;

    #[derive(Debug, Clone)]
    enum Op {
        Spool(usize, usize),
        Upload,
        StoreDown,
        StoreUp,
        Enforce,
        Restart,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..TableId::ALL.len(), 1..120usize).prop_map(|(t, n)| Op::Spool(t, n)),
            4 => Just(Op::Upload),
            1 => Just(Op::StoreDown),
            1 => Just(Op::StoreUp),
            2 => Just(Op::Enforce),
            1 => Just(Op::Restart),
        ]
    }

    fn count_files(dir: &Path) -> usize {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return 0;
        };
        rd.flatten()
            .map(|e| {
                let p = e.path();
                if p.is_dir() {
                    count_files(&p)
                } else {
                    1
                }
            })
            .sum()
    }

    struct Harness {
        root: std::path::PathBuf,
        store_dir: std::path::PathBuf,
        spool: Spool,
        queue: SharedQueue,
        uploader: Uploader,
        stats: Arc<UploadStats>,
        evicted_before: u64,
    }

    impl Harness {
        fn open(root: &Path, evicted_before: u64) -> Harness {
            let store_dir = root.join("store");
            let spool = Spool::open(&root.join("spool"), "v", "g").unwrap();
            let stats = Arc::new(UploadStats::default());
            let limits = SpoolLimits {
                max_bytes: 300,
                ..SpoolLimits::unbounded(root.join("spool"))
            };
            let queue = SpoolQueue::new(spool.pending().unwrap(), limits, stats.clone()).shared();
            let store = Store::local(store_dir.clone()).unwrap();
            let uploader = Uploader::with_queue(store, stats.clone(), queue.clone());
            Harness {
                root: root.to_path_buf(),
                store_dir,
                spool,
                queue,
                uploader,
                stats,
                evicted_before,
            }
        }

        fn evicted(&self) -> u64 {
            self.evicted_before + self.stats.spool_evictions.load(Ordering::Relaxed)
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn counted_bytes_always_equal_the_files_waiting_and_nothing_is_lost_uncounted(
            ops in prop::collection::vec(op(), 1..80)
        ) {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            let dir = tempfile::tempdir().unwrap();
            std::fs::create_dir_all(dir.path().join("store")).unwrap();
            let mut h = Harness::open(dir.path(), 0);
            let mut spooled = 0u64;
            let mut down = false;
            for op in ops {
                match op {
                    Op::Spool(t, n) => {
                        let f = h.spool.write(TableId::ALL[t], "2026-11-29", &vec![7u8; n]).unwrap();
                        lock(&h.queue).insert_all([f]);
                        spooled += 1;
                    }
                    Op::Upload => {
                        let _ = rt.block_on(h.uploader.upload_one());
                    }
                    // Each table's folder in the store replaced by a file: every put fails.
                    Op::StoreDown if !down => {
                        std::fs::rename(&h.store_dir, h.root.join("store.away")).unwrap();
                        std::fs::create_dir(&h.store_dir).unwrap();
                        for t in TableId::ALL {
                            std::fs::write(h.store_dir.join(t.name()), b"not a folder").unwrap();
                        }
                        down = true;
                    }
                    Op::StoreUp if down => {
                        std::fs::remove_dir_all(&h.store_dir).unwrap();
                        std::fs::rename(h.root.join("store.away"), &h.store_dir).unwrap();
                        down = false;
                    }
                    Op::StoreDown | Op::StoreUp => {}
                    Op::Enforce => {
                        let before: Vec<SpooledFile> = lock(&h.queue).files().cloned().collect();
                        lock(&h.queue).enforce_limits();
                        let after: Vec<SpooledFile> = lock(&h.queue).files().cloned().collect();
                        for gone in before.iter().filter(|f| !after.contains(f)) {
                            for kept in &after {
                                prop_assert!(kept.table <= gone.table,
                                    "{} evicted while {} (lower priority) kept", gone.key, kept.key);
                            }
                        }
                    }
                    Op::Restart => {
                        let evicted = h.evicted();
                        drop(h);
                        h = Harness::open(dir.path(), evicted);
                    }
                }
                let on_disk = h.spool.pending().unwrap();
                let q = lock(&h.queue);
                prop_assert_eq!(q.bytes(), on_disk.iter().map(|f| f.size).sum::<u64>());
                prop_assert_eq!(q.len(), on_disk.len());
                prop_assert_eq!(h.stats.spool_bytes.load(Ordering::Relaxed), q.bytes());
                prop_assert_eq!(h.stats.spool_files.load(Ordering::Relaxed), q.len() as u64);
                let in_store = if down {
                    count_files(&h.root.join("store.away"))
                } else {
                    count_files(&h.store_dir)
                };
                prop_assert_eq!(
                    spooled,
                    in_store as u64 + q.len() as u64 + h.evicted(),
                    "every spooled file is in the store, waiting, or counted as evicted"
                );
            }
        }
    }
}
