//! The alert output's session, as a state machine with no I/O: alerts from
//! the pipeline and events from the broker go in ([`Session::on_event`]),
//! what to publish next comes out ([`Session::next_publish`]), and a wait
//! after a connection error. The task around it ([`super::task`]) polls
//! rumqttc and carries this out.
//!
//! Alerts wait in a [`Bounded`] queue of `alerts.queue` (a full one drops by
//! `alerts.when_full`, counted and logged). While connected they move into
//! the in-flight window of `alerts.max_inflight`, and leave it when the
//! broker acknowledges them. A new connection is a clean session: the whole
//! window is sent again first (at least once: a subscriber may see an
//! `alert_id` twice).

use super::message::{Message, Origin};
use super::stats::AlertStats;
use super::AlertSettings;
use crate::model::Micros;
use crate::mqtt::conn::Severity;
use crate::pipeline::LiveAlert;
use crate::util::backoff::Backoff;
use crate::util::bounded::{Bounded, WhenFull};
use crate::util::log_limit::LogLimiter;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tracing::{error, info, warn};

/// What happened, fed to [`Session::on_event`].
#[derive(Debug)]
pub enum Input {
    /// An alert from the pipeline, at `now` (µs, for the drop log's budget);
    /// boxed so that the other inputs stay small.
    Alert(Box<LiveAlert>, Micros),
    /// The broker accepted the connection.
    Connected,
    /// rumqttc wrote the next publish with this packet id.
    PublishSent(u16),
    /// The broker acknowledged the publish with this packet id.
    PubAck(u16),
    /// The connection failed or broke; `message` names the broker.
    Lost {
        /// How bad it is, for the log level.
        severity: Severity,
        /// What went wrong, in words.
        message: String,
    },
}

/// What the task must do for an input.
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    /// Wait this long (still taking alerts) before polling again.
    Wait(Duration),
}

/// One alert in the in-flight window and its packet id once written.
#[derive(Debug)]
struct InFlight {
    msg: Message,
    pkid: Option<u16>,
}

/// The alert output's state: queue, window, connection.
#[derive(Debug)]
pub struct Session {
    addr: String,
    settings: AlertSettings,
    origin: Origin,
    queue: Bounded<Message>,
    /// Oldest first; the first `handed` went to rumqttc on this connection.
    window: VecDeque<InFlight>,
    handed: usize,
    max_inflight: usize,
    connected: bool,
    last_error: Option<String>,
    backoff: Backoff,
    stats: Arc<AlertStats>,
    drop_log: LogLimiter,
}

impl Session {
    /// A session for broker `addr` (named in logs), not connected yet.
    pub fn new(
        addr: String,
        settings: AlertSettings,
        origin: Origin,
        max_inflight: usize,
        stats: Arc<AlertStats>,
    ) -> Session {
        Session {
            addr,
            queue: Bounded::new(settings.capacity, settings.when_full),
            settings,
            origin,
            window: VecDeque::new(),
            handed: 0,
            max_inflight: max_inflight.max(1),
            connected: false,
            last_error: None,
            backoff: Backoff::default(),
            stats,
            drop_log: LogLimiter::new(10_000_000),
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> &AlertSettings {
        &self.settings
    }

    /// Alerts not yet acknowledged by the broker (queued or in flight).
    pub fn unsent(&self) -> usize {
        self.queue.len() + self.window.len()
    }

    /// Whether every alert is acknowledged.
    pub fn is_idle(&self) -> bool {
        self.unsent() == 0
    }

    /// Takes one input; the gauge of alerts waiting follows.
    pub fn on_event(&mut self, input: Input) -> Option<Action> {
        let action = match input {
            Input::Alert(a, now) => {
                let m = Message::render(&self.settings.prefix, &self.origin, *a);
                self.enqueue(m, now);
                None
            }
            Input::Connected => {
                self.connect();
                None
            }
            Input::PublishSent(pkid) => {
                let mut handed = self.window.iter_mut().take(self.handed);
                if let Some(s) = handed.find(|s| s.pkid.is_none()) {
                    s.pkid = Some(pkid);
                }
                None
            }
            Input::PubAck(pkid) => {
                let i = self.window.iter().position(|s| s.pkid == Some(pkid));
                if let Some(i) = i.filter(|i| *i < self.handed) {
                    self.window.remove(i);
                    self.handed -= 1;
                    AlertStats::add(&self.stats.published, 1);
                }
                None
            }
            Input::Lost { severity, message } => Some(self.lost(severity, message)),
        };
        AlertStats::set(&self.stats.queued, self.unsent() as u64);
        action
    }

    /// The next alert to hand to rumqttc, when connected and the window
    /// allows; it stays in the window until acknowledged.
    pub fn next_publish(&mut self) -> Option<&Message> {
        if !self.connected {
            return None;
        }
        if self.handed == self.window.len() {
            if self.window.len() >= self.max_inflight {
                return None;
            }
            let msg = self.queue.pop()?;
            self.window.push_back(InFlight { msg, pkid: None });
        }
        self.handed += 1;
        self.window.get(self.handed - 1).map(|s| &s.msg)
    }

    /// rumqttc could not take the alert [`Session::next_publish`] gave
    /// (its request channel is full): it is handed again next time.
    pub fn publish_refused(&mut self) {
        self.handed = self.handed.saturating_sub(1);
    }

    /// New reloadable settings; a smaller queue drops (and counts) the excess.
    pub fn reconfigure(&mut self, new: AlertSettings) {
        if new == self.settings {
            return;
        }
        let dropped = self.queue.set_limits(new.capacity, new.when_full).len();
        AlertStats::add(&self.stats.dropped, dropped as u64);
        let drop_oldest = new.when_full == WhenFull::DropOldest;
        info!(prefix = %new.prefix, queue = new.capacity, drop_oldest, dropped, "Alert output settings reloaded.");
        self.settings = new;
    }

    fn enqueue(&mut self, m: Message, now: Micros) {
        if self.queue.push(m).is_some() {
            AlertStats::add(&self.stats.dropped, 1);
            if let Some(n) = self.drop_log.allow(now) {
                let (dropped, capacity) = (n + 1, self.settings.capacity);
                warn!(dropped, capacity, "Alert queue full (broker away?); alerts dropped from MQTT output (they are in the alerts tables).");
            }
        }
    }

    fn connect(&mut self) {
        self.connected = true;
        self.backoff.reset();
        self.last_error = None;
        // A clean session: whatever was unacknowledged is sent again.
        self.handed = 0;
        for s in &mut self.window {
            s.pkid = None;
        }
        info!(broker = %self.addr, queued = self.unsent(), "Alert output connected to MQTT broker.");
    }

    fn lost(&mut self, severity: Severity, message: String) -> Action {
        if self.connected {
            self.connected = false;
            AlertStats::add(&self.stats.disconnects, 1);
            warn!(broker = %self.addr, reason = %message, queued = self.unsent(), "Alert output disconnected; alerts are queued until the broker is back.");
        } else if self.last_error.as_deref() != Some(message.as_str()) {
            match severity {
                Severity::Operator => error!(broker = %self.addr, "Alert output: {message}"),
                Severity::Transient => {
                    warn!(broker = %self.addr, "Alert output: {message}; retrying with backoff.")
                }
            }
        }
        self.last_error = Some(message);
        Action::Wait(self.backoff.next_delay())
    }
}

#[cfg(test)]
mod tests;
