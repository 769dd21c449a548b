//! What the venue console counts ([`crate::console`] writes, `/metrics`
//! reads). Defined here, below the console's layer, so that telemetry can
//! serve it. Plain atomics, touched once per request or client.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counters and gauges of the venue console.
#[derive(Debug, Default)]
pub struct ConsoleStats {
    /// Open event streams now (a gauge).
    pub clients: AtomicU64,
    /// HTTP requests answered, any status.
    pub requests: AtomicU64,
    /// Requests refused with 401 (no or a wrong token).
    pub unauthorized: AtomicU64,
    /// Event streams dropped because the client fell behind.
    pub clients_dropped: AtomicU64,
    /// Updates from the pipeline the console could not take (its inbox was full).
    pub updates_dropped: AtomicU64,
    /// `state` events replaced, unsent, by a newer one (a slow client).
    pub states_replaced: AtomicU64,
    /// Requests refused with 421: a host name the console does not serve.
    pub bad_host: AtomicU64,
}

impl ConsoleStats {
    /// Adds one to a counter.
    pub fn inc(counter: &AtomicU64) {
        counter.fetch_add(1, Ordering::Relaxed);
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
