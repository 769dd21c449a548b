//! Progress rows: what happened in the last `metrics.progress_interval`.
//!
//! Counter columns (`input_rows`, `late_rows`, `rejected_rows`, …) count the
//! interval, like a Spark streaming query's progress; `state_*`, `spool_*`
//! and `open_windows` are gauges at the row's `timestamp`.

use crate::model::{Micros, SensorKind};
use crate::pipeline::{Pipeline, PipelineCounters};
use crate::tables::{Stamp, TableBuffer};
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// Upload-side figures, shared by the uploader (writer) and telemetry (reader).
#[derive(Debug, Default)]
pub struct UploadStats {
    /// Files uploaded since start.
    pub uploaded_files: AtomicU64,
    /// Bytes uploaded since start.
    pub uploaded_bytes: AtomicU64,
    /// Failed upload attempts since start.
    pub upload_failures: AtomicU64,
    /// µs of the last successful upload, 0 if none.
    pub last_upload_at: AtomicI64,
    /// Files waiting in the spool.
    pub spool_files: AtomicU64,
    /// Bytes waiting in the spool.
    pub spool_bytes: AtomicU64,
    /// Parquet files written to the spool since start.
    pub files_written: AtomicU64,
    /// Spool files deleted without upload to stay inside the spool's ceilings.
    pub spool_evictions: AtomicU64,
    /// Time spent making files durable (fsync file, rename, fsync folder), µs.
    pub commit_micros: AtomicU64,
    /// Checkpoints that could not be written, or were found unusable at
    /// start-up (set aside).
    pub checkpoint_failures: AtomicU64,
    /// Since when (µs) writing to the spool has been failing; 0 when it works.
    pub spool_failing_since: AtomicI64,
    /// Rows that could not be written to the spool and are lost, per table
    /// (index [`crate::tables::TableId::index`]).
    pub lost_rows: [AtomicU64; crate::tables::TableId::ALL.len()],
    /// Spool files that vanished before upload (removed by hand).
    pub vanished_files: AtomicU64,
    /// Since when (µs) the input journal has been off; 0 when it works.
    pub journal_down_since: AtomicI64,
    /// Inputs processed without a durable journal record (not crash-safe).
    pub unjournaled_inputs: AtomicU64,
    /// Journal failures: open, write, fsync, rotation, or a read at start-up.
    pub journal_failures: AtomicU64,
}

/// One `progress` row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProgressRow {
    /// When.
    pub timestamp: Micros,
    /// Inputs in the interval.
    pub input_rows: u64,
    /// Inputs per second of wall time.
    pub input_rows_per_second: f64,
    /// Inputs per second of processing time.
    pub processed_rows_per_second: f64,
    /// Processing time in the interval, ms.
    pub batch_duration_ms: f64,
    /// Live detector keys.
    pub state_keys: u64,
    /// Detector state bytes.
    pub state_bytes: u64,
    /// Open window cells.
    pub open_windows: u64,
    /// Watermarks by kind.
    pub watermarks: [Option<Micros>; 4],
    /// Late readings in the interval.
    pub late_rows: u64,
    /// Rejects in the interval.
    pub rejected_rows: u64,
    /// Duplicate readings in the interval.
    pub duplicate_rows: u64,
    /// Alerts (z-score and fatigue) in the interval.
    pub alerts: u64,
    /// Detector evictions in the interval.
    pub evictions: u64,
    /// Spool files waiting.
    pub spool_files: u64,
    /// Spool bytes waiting.
    pub spool_bytes: u64,
    /// Files uploaded in the interval.
    pub uploaded_files: u64,
    /// Upload failures in the interval.
    pub upload_failures: u64,
    /// Last successful upload.
    pub last_upload_at: Option<Micros>,
    /// Spool files evicted (deleted without upload) in the interval.
    pub spool_evictions: u64,
    /// Duplicate readings with another value than the one kept, in the interval.
    pub duplicate_conflicts: u64,
}

impl ProgressRow {
    /// Appends the row to the `progress` table.
    pub fn write(&self, stamp: &Stamp, buf: &mut TableBuffer) {
        let mut r = buf
            .row(self.timestamp)
            .str(&stamp.venue_id)
            .str(&stamp.gateway_id)
            .i64(self.timestamp)
            .i64(self.input_rows as i64)
            .f64(self.input_rows_per_second)
            .f64(self.processed_rows_per_second)
            .f64(self.batch_duration_ms)
            .i64(self.state_keys as i64)
            .i64(self.state_bytes as i64)
            .i64(self.open_windows as i64);
        for w in self.watermarks {
            r = r.opt_i64(w);
        }
        r.i64(self.late_rows as i64)
            .i64(self.rejected_rows as i64)
            .i64(self.duplicate_rows as i64)
            .i64(self.alerts as i64)
            .i64(self.evictions as i64)
            .i64(self.spool_files as i64)
            .i64(self.spool_bytes as i64)
            .i64(self.uploaded_files as i64)
            .i64(self.upload_failures as i64)
            .opt_i64(self.last_upload_at)
            .i64(self.spool_evictions as i64)
            .i64(self.duplicate_conflicts as i64)
            .finish();
    }

    /// The short human-readable line logged every interval.
    pub fn summary(&self, files_written: u64) -> String {
        format!(
            "{:.0} events/s, {} in, {} alerts, {} keys, {} late, {} rejected, {} duplicates; {} files written in total, {} waiting in spool",
            self.input_rows_per_second,
            self.input_rows,
            self.alerts,
            self.state_keys,
            self.late_rows,
            self.rejected_rows,
            self.duplicate_rows,
            files_written,
            self.spool_files
        )
    }
}

/// Turns cumulative counters into per-interval progress rows.
#[derive(Debug)]
pub struct ProgressTracker {
    last: PipelineCounters,
    last_uploaded: u64,
    last_failures: u64,
    last_evictions: u64,
    last_at: Micros,
    busy_us: u64,
}

impl ProgressTracker {
    /// Starts counting at `now`.
    pub fn new(now: Micros) -> ProgressTracker {
        ProgressTracker {
            last: PipelineCounters::default(),
            last_uploaded: 0,
            last_failures: 0,
            last_evictions: 0,
            last_at: now,
            busy_us: 0,
        }
    }

    /// Adds processing time.
    pub fn add_busy(&mut self, us: u64) {
        self.busy_us += us;
    }

    /// The row for the interval ending `now`; starts the next interval.
    pub fn tick(&mut self, now: Micros, p: &Pipeline, up: &UploadStats) -> ProgressRow {
        let c = p.counters();
        let secs = ((now - self.last_at).max(1)) as f64 / 1e6;
        let input = c.input_rows - self.last.input_rows;
        let uploaded = up.uploaded_files.load(Ordering::Relaxed);
        let failures = up.upload_failures.load(Ordering::Relaxed);
        let last_upload = up.last_upload_at.load(Ordering::Relaxed);
        let evictions = up.spool_evictions.load(Ordering::Relaxed);
        let row = ProgressRow {
            timestamp: now,
            input_rows: input,
            input_rows_per_second: input as f64 / secs,
            processed_rows_per_second: if self.busy_us > 0 {
                input as f64 / (self.busy_us as f64 / 1e6)
            } else {
                0.0
            },
            batch_duration_ms: self.busy_us as f64 / 1e3,
            state_keys: p.detector().keys() as u64,
            state_bytes: p.detector().state_bytes() as u64,
            open_windows: p.windows().open_cells() as u64,
            watermarks: SensorKind::ALL.map(|k| p.windows().watermark(k)),
            late_rows: c.late_rows - self.last.late_rows,
            rejected_rows: c.rejected_total() - self.last.rejected_total(),
            duplicate_rows: c.duplicate_rows - self.last.duplicate_rows,
            alerts: (c.alerts + c.fatigue_alerts) - (self.last.alerts + self.last.fatigue_alerts),
            evictions: c.evictions - self.last.evictions,
            spool_files: up.spool_files.load(Ordering::Relaxed),
            spool_bytes: up.spool_bytes.load(Ordering::Relaxed),
            uploaded_files: uploaded - self.last_uploaded,
            upload_failures: failures - self.last_failures,
            last_upload_at: (last_upload > 0).then_some(last_upload),
            spool_evictions: evictions - self.last_evictions,
            duplicate_conflicts: c.duplicate_conflicts - self.last.duplicate_conflicts,
        };
        self.last_evictions = evictions;
        self.last = c.clone();
        self.last_uploaded = uploaded;
        self.last_failures = failures;
        self.last_at = now;
        self.busy_us = 0;
        row
    }
}
