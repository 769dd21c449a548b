//! What the spool, the encoder and the uploader count, shared with telemetry
//! (which only reads it).

use std::sync::atomic::{AtomicI64, AtomicU64};

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
    /// Since when (µs) writing to the spool has been failing; 0 when it works.
    pub spool_failing_since: AtomicI64,
    /// Rows that could not be written to the spool and are lost, per table
    /// (index [`crate::tables::TableId::index`]).
    pub lost_rows: [AtomicU64; crate::tables::TableId::ALL.len()],
    /// Spool files that vanished before upload (removed by hand).
    pub vanished_files: AtomicU64,
    /// Files set aside after failing while the store took others (a gauge).
    pub stuck_files: AtomicU64,
    /// Uploads whose key the store already held with other bytes (the file
    /// was numbered anew; nothing was overwritten).
    pub upload_conflicts: AtomicU64,
    /// Sequence counter files found unreadable or damaged at start-up.
    pub seq_counter_failures: AtomicU64,
}
