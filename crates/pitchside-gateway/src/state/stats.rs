//! What the checkpoint and the journal count, shared with telemetry (which
//! only reads it).

use std::sync::atomic::{AtomicI64, AtomicU64};

/// Failures of the state kept across restarts.
#[derive(Debug, Default)]
pub struct StateStats {
    /// Checkpoints that could not be written, or were found unusable at
    /// start-up (set aside).
    pub checkpoint_failures: AtomicU64,
    /// Since when (µs) the input journal has been off; 0 when it works.
    pub journal_down_since: AtomicI64,
    /// Inputs processed without a durable journal record (not crash-safe).
    pub unjournaled_inputs: AtomicU64,
    /// Journal failures: open, write, fsync, rotation, or a read at start-up.
    pub journal_failures: AtomicU64,
}
