//! Monitoring (SPEC §6): progress rows, the progress log line, and the
//! Prometheus text exposition.

mod progress;
mod prometheus;
pub mod systemd;

pub use progress::ProgressTracker;
pub use prometheus::{
    health, read_head, render, serve, MetricsSnapshot, RequestHead, MAX_REQUEST_HEAD,
    REQUEST_TIMEOUT,
};
