//! Progress rows: what happened in the last `metrics.progress_interval`.
//!
//! Counter columns (`input_rows`, `late_rows`, `rejected_rows`, …) count the
//! interval, like a Spark streaming query's progress; `state_*`, `spool_*`
//! and `open_windows` are gauges at the row's `timestamp`.

use crate::model::{Micros, SensorKind};
use crate::pipeline::{Pipeline, PipelineCounters};
use crate::sinks::UploadStats;
use crate::tables::ProgressRow;
use std::sync::atomic::Ordering;

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
            alerts: (c.alerts + c.fatigue_alerts + c.load_alerts)
                - (self.last.alerts + self.last.fatigue_alerts + self.last.load_alerts),
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
