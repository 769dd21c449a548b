//! The pipeline's use of the journal ([`Recorder`]): append every input,
//! fsync in groups, then acknowledge; run on without the journal when the
//! disk fails, and bring it back with backoff.

use super::{dir, generations, replay, size, Journal, JournalError};
use crate::model::RawInput;
use crate::state::StateStats;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// First wait before a failed journal is opened again; doubled after each
/// failure up to [`RETRY_MAX`], reset once the journal works again.
pub const RETRY_FIRST: std::time::Duration = std::time::Duration::from_secs(1);
/// Longest wait between attempts to bring a failed journal back.
pub const RETRY_MAX: std::time::Duration = std::time::Duration::from_secs(60);

/// The pipeline's use of the journal: append every input, fsync in groups,
/// then acknowledge. Acks wait for the fsync; serial input waits at most
/// `sync_interval`.
///
/// When the journal fails (a full or broken disk), the pipeline runs on
/// without it (acknowledging MQTT on receipt), counts every input that is
/// not crash-safe (`unjournaled_inputs`), marks the journal off
/// (`journal_down_since`, behind `pitchside_journal_enabled` and `/healthz`)
/// and opens a new generation again with backoff until one is fsynced.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    journal: Option<Journal>,
    pending: Vec<crate::model::AckToken>,
    last_sync: std::time::Instant,
    sync_interval: std::time::Duration,
    /// The generation a reopened journal starts (after every existing one).
    next_gen: u64,
    pub(super) retry_at: std::time::Instant,
    backoff: std::time::Duration,
    /// Reopened after a failure; "back" once its first fsync succeeds.
    recovering: bool,
    /// Inputs appended since the last successful fsync.
    unsynced_inputs: u64,
    stats: std::sync::Arc<StateStats>,
    /// `output.max_journal_bytes`.
    max_bytes: u64,
    /// The journal's bytes on disk (measured at start and at each rotation,
    /// plus what was appended since).
    bytes: u64,
}

impl Recorder {
    /// Replays the journal from generation `from` through `each`, then opens
    /// the next generation for new inputs (unless the journal is already
    /// over `max_bytes`). Returns the recorder and how many inputs were
    /// replayed.
    pub fn start(
        spool_dir: &Path,
        from: u64,
        (sync_interval, max_bytes): (std::time::Duration, u64),
        stats: std::sync::Arc<StateStats>,
        each: impl FnMut(RawInput),
    ) -> (Recorder, u64) {
        let dir = dir(spool_dir);
        let mut n = 0u64;
        let mut each = each;
        let next = match replay(&dir, from, |i| {
            n += 1;
            each(i)
        }) {
            Ok(next) => next,
            Err(e) => {
                stats.journal_failures.fetch_add(1, Ordering::Relaxed);
                tracing::error!(error = %e, "Journal could not be read: inputs since the last checkpoint are lost (counted in pitchside_journal_failures_total).");
                generations(&dir).last().map_or(from, |g| g + 1)
            }
        };
        let mut r = Recorder {
            dir,
            journal: None,
            pending: Vec::new(),
            last_sync: std::time::Instant::now(),
            sync_interval,
            next_gen: next,
            retry_at: std::time::Instant::now(),
            backoff: RETRY_FIRST,
            recovering: false,
            unsynced_inputs: 0,
            stats,
            max_bytes,
            bytes: 0,
        };
        r.bytes = size(&r.dir);
        if r.bytes >= max_bytes {
            r.full();
            return (r, n);
        }
        match Journal::open(&r.dir, next) {
            Ok(j) => r.journal = Some(j),
            Err(e) => r.fail(&e, "open"),
        }
        (r, n)
    }

    /// The journal reached `output.max_journal_bytes` (checkpoints keep
    /// failing, so no generation is deleted): run without it, as on a
    /// failed disk, until a checkpoint brings it back under the bound.
    fn full(&mut self) {
        if let Some(mut j) = self.journal.take() {
            // What was appended stays crash-safe.
            let synced = j.sync();
            self.next_gen = self.next_gen.max(j.generation() + 1);
            if let Err(e) = synced {
                return self.fail(&e, "fsync");
            }
            self.unsynced_inputs = 0;
        }
        let (bytes, max_journal_bytes) = (self.bytes, self.max_bytes);
        if self.off() {
            tracing::error!(bytes, max_journal_bytes, "Journal reached output.max_journal_bytes because checkpoints keep failing: running without it (a crash loses the inputs since; MQTT is acknowledged on receipt; counted in pitchside_unjournaled_inputs_total). Fix what fails the checkpoint (see 'Checkpoint could not be written'); the journal comes back after the next checkpoint.");
        } else {
            tracing::warn!(
                bytes,
                max_journal_bytes,
                "Journal still over output.max_journal_bytes (no checkpoint yet); staying off."
            );
        }
    }

    /// Marks the journal off (counted; `journal_down_since` set if it was
    /// on) and schedules the next attempt; `true` if it was on.
    fn off(&mut self) -> bool {
        let s = &self.stats;
        s.journal_failures.fetch_add(1, Ordering::Relaxed);
        let first = s
            .journal_down_since
            .compare_exchange(
                0,
                crate::util::time::now_micros(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok();
        self.recovering = false;
        self.retry_at = std::time::Instant::now() + self.backoff;
        self.backoff = (self.backoff * 2).min(RETRY_MAX);
        first
    }

    /// The journal failed: run without it, count, and schedule a retry.
    fn fail(&mut self, e: &JournalError, what: &str) {
        if let Some(j) = self.journal.take() {
            // Never reuse a generation that may end in a torn record.
            self.next_gen = self.next_gen.max(j.generation() + 1);
        }
        let lost = std::mem::take(&mut self.unsynced_inputs);
        let s = &self.stats;
        s.unjournaled_inputs.fetch_add(lost, Ordering::Relaxed);
        let retry_s = self.backoff.as_secs_f64();
        if self.off() {
            tracing::error!(error = %e, retry_s, "Journal {what} failed: running without it (a crash loses the inputs since the last checkpoint; MQTT is acknowledged on receipt; counted in pitchside_unjournaled_inputs_total). Free space on output.spool_dir's disk; it is retried with backoff.");
        } else {
            tracing::warn!(error = %e, retry_s, "Journal {what} failed again; retrying with backoff.");
        }
    }

    /// While the journal is off, opens a new generation once the backoff has passed.
    fn retry(&mut self) {
        if self.journal.is_some() || std::time::Instant::now() < self.retry_at {
            return;
        }
        self.bytes = size(&self.dir);
        if self.bytes >= self.max_bytes {
            return self.full();
        }
        match Journal::open(&self.dir, self.next_gen) {
            Ok(j) => {
                self.next_gen = j.generation() + 1;
                self.journal = Some(j);
                self.recovering = true;
            }
            Err(e) => self.fail(&e, "open"),
        }
    }

    /// Appends an input and keeps its acknowledgement until the next sync.
    pub fn record(&mut self, input: &mut RawInput) {
        if self.journal.is_some() && self.bytes >= self.max_bytes {
            // Past the bound before this input: it is not journaled.
            self.full();
        }
        match self.journal.as_mut().map(|j| j.append(input)) {
            Some(Ok(len)) => {
                self.unsynced_inputs += 1;
                self.bytes += len;
            }
            Some(Err(e)) => {
                self.fail(&e, "write");
                self.stats
                    .unjournaled_inputs
                    .fetch_add(1, Ordering::Relaxed);
            }
            None => {
                self.stats
                    .unjournaled_inputs
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
        if let Some(a) = input.ack.take() {
            self.pending.push(a);
        }
    }

    /// Fsyncs when acknowledgements wait or `sync_interval` has passed, then
    /// acknowledges. While the journal is off, tries to bring it back.
    pub fn commit(&mut self, force: bool) {
        let due =
            force || !self.pending.is_empty() || self.last_sync.elapsed() >= self.sync_interval;
        if !due {
            return;
        }
        self.retry();
        if let Some(j) = self.journal.as_mut() {
            let r = if j.unsynced() {
                match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
                    Ok(tokio::runtime::RuntimeFlavor::MultiThread) => {
                        tokio::task::block_in_place(|| j.sync())
                    }
                    _ => j.sync(),
                }
            } else {
                Ok(())
            };
            match r {
                Ok(()) => {
                    self.unsynced_inputs = 0;
                    if std::mem::take(&mut self.recovering) {
                        self.back();
                    }
                }
                Err(e) => self.fail(&e, "fsync"),
            }
        }
        self.last_sync = std::time::Instant::now();
        // Durable now (or the journal is gone, and waiting longer would only
        // stall the broker): acknowledge.
        for a in self.pending.drain(..) {
            a.ack();
        }
    }

    /// A reopened journal was fsynced: it works again.
    fn back(&mut self) {
        let since = self.stats.journal_down_since.swap(0, Ordering::Relaxed);
        let off_s = if since > 0 {
            (crate::util::time::now_micros() - since) / 1_000_000
        } else {
            0
        };
        tracing::info!(
            off_s,
            unjournaled_inputs = self.stats.unjournaled_inputs.load(Ordering::Relaxed),
            generation = self.next_gen.saturating_sub(1),
            "Journal is back: inputs are crash-safe again."
        );
        self.backoff = RETRY_FIRST;
    }

    /// Commits, then starts the next generation; returns its number (the one
    /// a checkpoint taken now replays from).
    pub fn rotate(&mut self) -> u64 {
        self.commit(true);
        let rotated = self.journal.as_mut().map(|j| j.rotate());
        // Generations a checkpoint covered are gone by now (or will be soon
        // after this rotation's checkpoint); measure again.
        self.bytes = size(&self.dir);
        match rotated {
            Some(Ok(g)) => {
                self.next_gen = g + 1;
                g
            }
            Some(Err(e)) => {
                self.fail(&e, "rotation");
                self.next_gen
            }
            // Nothing is journaled now: a checkpoint taken now covers every
            // generation so far, and a reopened journal starts at next_gen.
            None => self.next_gen,
        }
    }

    /// The journal folder (for deleting generations a checkpoint covers).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}
