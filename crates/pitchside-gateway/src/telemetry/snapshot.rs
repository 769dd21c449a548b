//! What `/metrics` and `/healthz` serve: a copy of the owners' figures,
//! refreshed by the pipeline task every progress interval.

use crate::pipeline::PipelineCounters;
use crate::sinks::alerts::AlertStats;
use crate::sources::SourceStats;
use crate::tables::{ProgressRow, TableId};
use std::sync::Arc;

/// The figures the endpoint serves, refreshed by the pipeline every progress
/// interval (never on the per-event path). Each comes from the stats of the
/// component that counts it: [`PipelineCounters`], [`crate::sinks::UploadStats`]
/// (encoder, spool, uploader), [`crate::state::StateStats`] (checkpoint,
/// journal), [`SourceStats`] and [`AlertStats`] (live).
#[derive(Debug, Clone, Default)]
pub struct MetricsSnapshot {
    /// Cumulative pipeline counters.
    pub counters: PipelineCounters,
    /// The latest progress row.
    pub progress: ProgressRow,
    /// Cumulative uploaded files.
    pub uploaded_files_total: u64,
    /// Cumulative upload failures.
    pub upload_failures_total: u64,
    /// Cumulative files written to the spool.
    pub files_written_total: u64,
    /// Cumulative spool files deleted without upload (spool ceiling).
    pub spool_evictions_total: u64,
    /// Checkpoints that could not be written or were unusable at start-up.
    pub checkpoint_failures_total: u64,
    /// Rows lost to failed spool writes, per table (`TableId::ALL` order).
    pub lost_rows_total: [u64; TableId::ALL.len()],
    /// Spool files that vanished before upload.
    pub vanished_files_total: u64,
    /// Uploads whose key the store held with other bytes (numbered anew).
    pub upload_conflicts_total: u64,
    /// Files set aside after failing while the store took others.
    pub upload_stuck_files: u64,
    /// Sequence counter files found damaged at start-up.
    pub seq_counter_failures_total: u64,
    /// Serial and MQTT counters (live atomics).
    pub sources: Arc<SourceStats>,
    /// Alert-output counters (live atomics).
    pub alerts: Arc<AlertStats>,
    /// Venue console counters (live atomics).
    pub console: Arc<super::ConsoleStats>,
    /// Both HTTP servers' connection counters (live atomics).
    pub http: Arc<super::HttpStats>,
    /// Since when (µs) spool writes have been failing; 0 when they work.
    pub spool_failing_since: i64,
    /// How long a source may be down or the spool unwritable before
    /// `/healthz` fails, µs.
    pub health_grace: i64,
    /// Since when (µs) the input journal has been off; 0 when it works.
    pub journal_down_since: i64,
    /// Inputs processed while the journal was off (not crash-safe).
    pub unjournaled_inputs_total: u64,
    /// Journal open, write, fsync, rotation and start-up read failures.
    pub journal_failures_total: u64,
}
