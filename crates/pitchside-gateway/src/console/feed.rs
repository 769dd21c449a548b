//! Between the pipeline task and the console, both ways:
//! - [`ConsoleFeed`]: the pipeline hands over live alerts and, once a
//!   second, the device statuses, never waiting (a full inbox drops and
//!   counts); [`feed_task`] applies them to the hub.
//! - [`Command`]: what the console asks of the pipeline (ack, pause,
//!   resume), over a bounded channel, each with a reply.

use super::hub::SharedHub;
use crate::pipeline::console_rows::AckRecord;
use crate::pipeline::load::PlayerLoadStatus;
use crate::pipeline::{DeviceStatus, LiveAlert};
use crate::telemetry::ConsoleStats;
use crate::util::log_limit::LogLimiter;
use crate::util::time::now_micros;
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// Updates the console's inbox holds.
pub const FEED_QUEUE: usize = 1024;
/// Commands waiting for the pipeline task at most.
pub const COMMAND_QUEUE: usize = 64;

/// A request from the console to the pipeline task, answered on `reply`.
#[derive(Debug)]
pub enum Command {
    /// Someone has seen an alert: journal it, write `alert_acks`, reply with
    /// the record (its `acked_at` set) once it is durable.
    Ack {
        /// The alert.
        alert_id: String,
        /// Who (1–64 characters).
        by: String,
        /// Their note (at most 500 characters).
        note: Option<String>,
        /// The durable record.
        reply: oneshot::Sender<AckRecord>,
    },
    /// A planned stop (half-time): no `silent` device events until resumed.
    Pause {
        /// Paused now.
        reply: oneshot::Sender<bool>,
    },
    /// Play again: every device's silence clock restarts now.
    Resume {
        /// Paused now.
        reply: oneshot::Sender<bool>,
    },
}

/// What the pipeline task hands to the console.
#[derive(Debug)]
enum Update {
    Alerts(Vec<LiveAlert>),
    Devices(Vec<DeviceStatus>, bool),
    Load(Vec<PlayerLoadStatus>),
}

/// The pipeline task's handle on the console; never blocks.
#[derive(Debug, Clone)]
pub struct ConsoleFeed {
    tx: mpsc::Sender<Update>,
    stats: Arc<ConsoleStats>,
    log: Arc<Mutex<LogLimiter>>,
}

impl ConsoleFeed {
    /// Offers live alerts (after the cooldown filter). A full inbox drops
    /// them from the console only (counted, logged); tables and MQTT have them.
    pub fn offer(&self, alerts: &[LiveAlert]) {
        if !alerts.is_empty() {
            self.send(Update::Alerts(alerts.to_vec()));
        }
    }

    /// The device statuses and whether health checks are paused (once a
    /// second); the console sends its `state` event on each.
    pub fn devices(&self, devices: Vec<DeviceStatus>, paused: bool) {
        self.send(Update::Devices(devices, paused));
    }

    /// Each player's load now (once a second, before the device statuses).
    pub fn load(&self, load: Vec<PlayerLoadStatus>) {
        self.send(Update::Load(load));
    }

    fn send(&self, u: Update) {
        if self.tx.try_send(u).is_err() {
            ConsoleStats::inc(&self.stats.updates_dropped);
            let allowed = self.log.lock().ok().and_then(|mut l| l.allow(now_micros()));
            if let Some(held_back) = allowed {
                tracing::warn!(
                    held_back,
                    "Console inbox full: an update was not shown on the console (counted in pitchside_console_updates_dropped_total; tables and MQTT have every alert)."
                );
            }
        }
    }
}

/// A feed and the receiving end [`feed_task`] takes.
pub fn feed(stats: Arc<ConsoleStats>) -> (ConsoleFeed, FeedInbox) {
    let (tx, rx) = mpsc::channel(FEED_QUEUE);
    let log = Arc::new(Mutex::new(LogLimiter::new(10_000_000)));
    (ConsoleFeed { tx, stats, log }, FeedInbox(rx))
}

/// The console's end of the feed.
#[derive(Debug)]
pub struct FeedInbox(mpsc::Receiver<Update>);

/// Applies the pipeline's updates to the hub until the pipeline task ends.
pub async fn feed_task(mut inbox: FeedInbox, hub: SharedHub) {
    let mut batch = Vec::with_capacity(64);
    while inbox.0.recv_many(&mut batch, 64).await > 0 {
        let now = now_micros();
        let Ok(mut h) = hub.lock() else { return };
        for u in batch.drain(..) {
            match u {
                Update::Alerts(a) => h.alerts(&a, now),
                Update::Devices(d, paused) => h.devices(d, paused, now),
                Update::Load(l) => h.load(l),
            }
        }
    }
}
