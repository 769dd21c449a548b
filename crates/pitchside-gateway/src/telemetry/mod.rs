//! Monitoring (SPEC §6): progress rows, the progress log line, the
//! Prometheus text exposition and `/healthz`, and systemd.
//!
//! Telemetry counts nothing itself: it reads the stats each component
//! defines and writes ([`crate::pipeline::PipelineCounters`],
//! [`crate::sinks::UploadStats`], [`crate::state::StateStats`],
//! [`crate::sources::SourceStats`], [`crate::sinks::alerts::AlertStats`],
//! [`ConsoleStats`]).

mod console_stats;
mod delivery;
mod devices;
pub mod endpoint;
mod exposition;
mod health;
mod http;
mod metrics;
mod progress;
mod snapshot;
pub mod systemd;

pub use console_stats::ConsoleStats;
pub use endpoint::HttpStats;
pub use exposition::parse_metrics;
pub use health::{health, health_notes};
pub use http::{read_head, serve, RequestHead, MAX_REQUEST_HEAD, REQUEST_TIMEOUT};
pub use metrics::render;
pub use progress::ProgressTracker;
pub use snapshot::MetricsSnapshot;
