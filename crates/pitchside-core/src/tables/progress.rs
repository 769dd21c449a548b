//! The `progress` row: what happened in the last `metrics.progress_interval`.
//!
//! Counter columns (`input_rows`, `late_rows`, `rejected_rows`, …) count the
//! interval, like a Spark streaming query's progress; `state_*`, `spool_*`
//! and `open_windows` are gauges at the row's `timestamp`.

use super::{Stamp, TableBuffer};
use crate::model::Micros;

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
