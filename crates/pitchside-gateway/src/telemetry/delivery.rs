//! The uploader's families on `/metrics` ([`crate::sinks::UploadStats`]):
//! uploads, failed attempts, key conflicts, files set aside, and damaged
//! sequence counters.

use super::exposition::Exposition;
use super::MetricsSnapshot;

/// The uploader's counters and gauge.
pub(super) fn upload(o: &mut Exposition, s: &MetricsSnapshot) {
    o.counter(
        "pitchside_uploaded_files_total",
        "Files uploaded to the store.",
        s.uploaded_files_total,
    );
    o.counter(
        "pitchside_upload_failures_total",
        "Failed upload attempts.",
        s.upload_failures_total,
    );
    o.counter(
        "pitchside_upload_conflicts_total",
        "Uploads whose key the store already held with other bytes: the object was left alone and the file numbered anew.",
        s.upload_conflicts_total,
    );
    o.gauge(
        "pitchside_upload_stuck_files",
        "Files set aside after failing while the store took others; retried on their own backoff (0.5 s doubling to 60 s).",
        s.upload_stuck_files as f64,
    );
    o.counter(
        "pitchside_seq_counter_failures_total",
        "Sequence counter files (spool_dir/state/seq/) found unreadable or damaged at start-up; the store was asked for the highest number instead.",
        s.seq_counter_failures_total,
    );
}
