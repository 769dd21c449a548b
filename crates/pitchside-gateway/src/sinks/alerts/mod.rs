//! Real-time alert output: every z-score alert is published at once to
//! `{topic_prefix}/{sensor}/{device_id}` and every fatigue alert to
//! `{topic_prefix}/fatigue/{player_id}`, QoS 1, as a JSON object with the
//! columns of the `alerts` / `fatigue_alerts` table ([`message`]).
//!
//! The pipeline never waits for the broker: [`AlertSender::offer`] is a
//! non-blocking hand-over into a channel of `alerts.input_queue` alerts that
//! the publisher task empties at once into its own queue of `alerts.queue`
//! alerts (`alerts.when_full`: drop the oldest or the newest, counted and
//! logged). Alerts leave the queue while the broker is connected, at most
//! `alerts.max_inflight` unacknowledged at a time; alerts sent but not
//! acknowledged when a connection drops are sent again (at least once: a
//! subscriber may see an `alert_id` twice).
//!
//! As rumqttc is built: [`session`] is the state machine (no I/O), [`task`]
//! the loop that polls rumqttc's event loop and carries its actions out.

pub mod cooldown;
pub mod message;
pub mod session;
pub mod stats;
pub mod task;

pub use cooldown::NotifyCooldown;
pub use stats::AlertStats;
pub use task::AlertPublisher;

use crate::config::AlertsConfig;
use crate::pipeline::LiveAlert;
use crate::util::bounded::WhenFull;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long the output keeps trying to deliver queued alerts at shutdown.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(5);

/// The pipeline's handle: never blocks.
#[derive(Debug, Clone)]
pub struct AlertSender {
    tx: mpsc::Sender<LiveAlert>,
    stats: Arc<AlertStats>,
}

impl AlertSender {
    /// Hands alerts to the publisher; if its inbox is full they are dropped and counted.
    pub fn offer(&self, alerts: Vec<LiveAlert>) {
        for a in alerts {
            if self.tx.try_send(a).is_err() {
                AlertStats::add(&self.stats.dropped, 1);
            }
        }
    }
}

/// The alert output's settings that a reload (SIGHUP) may change while it
/// runs: `alerts.topic_prefix`, `alerts.queue`, `alerts.when_full`. The
/// broker connection (`[alerts.mqtt]`) and the other capacities need a
/// restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertSettings {
    /// Topic prefix.
    pub prefix: String,
    /// Queue capacity.
    pub capacity: usize,
    /// Which alert a full queue drops.
    pub when_full: WhenFull,
}

impl AlertSettings {
    /// The reloadable settings of `[alerts]`.
    pub fn from_config(alerts: &AlertsConfig) -> AlertSettings {
        AlertSettings {
            prefix: alerts.topic_prefix.clone(),
            capacity: alerts.queue,
            when_full: alerts.when_full,
        }
    }
}
