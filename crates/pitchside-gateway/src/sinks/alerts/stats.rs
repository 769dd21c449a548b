//! What the alert output counts, shared with telemetry (which only reads
//! it). Plain atomics: updated once per alert or connection event.

use std::sync::atomic::{AtomicU64, Ordering};

/// Cumulative counters of the MQTT alert output.
#[derive(Debug, Default)]
pub struct AlertStats {
    /// Alerts handed to the broker (acknowledged by it for QoS 1).
    pub published: AtomicU64,
    /// Alerts dropped because the alert queue (or the channel to it) was full.
    pub dropped: AtomicU64,
    /// Alert output connections lost after having been up.
    pub disconnects: AtomicU64,
    /// Alerts waiting for the broker now (a gauge).
    pub queued: AtomicU64,
    /// Alerts not notified (log line, MQTT, console) because their key
    /// notified within `alerts.notify_cooldown`; the tables hold them.
    pub notify_suppressed: AtomicU64,
    /// Cooldown keys forgotten early because more than `detector.max_keys`
    /// keys were cooling down.
    pub notify_evictions: AtomicU64,
}

impl AlertStats {
    /// Adds `n` to a counter.
    pub fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Sets a gauge.
    pub fn set(gauge: &AtomicU64, v: u64) {
        gauge.store(v, Ordering::Relaxed);
    }

    /// Reads a counter or gauge.
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}
