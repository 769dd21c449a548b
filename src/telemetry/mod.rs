//! Monitoring (SPEC §6): progress rows, the progress log line, and the
//! Prometheus text exposition.

mod progress;
mod prometheus;
pub mod systemd;

pub use progress::{ProgressRow, ProgressTracker, UploadStats};
pub use prometheus::{render, serve, MetricsSnapshot};
