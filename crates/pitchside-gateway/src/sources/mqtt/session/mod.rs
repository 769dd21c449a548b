//! The MQTT source's session, as a state machine with no I/O: broker events
//! go in ([`Session::on_event`]), what to do comes out ([`Action`]): hand a
//! message to the pipeline, acknowledge one, subscribe, wait, reconnect. The
//! task around it ([`super::task`]) polls rumqttc and carries this out.
//!
//! A message goes straight to the pipeline when its queue has room, else it
//! waits in a [`Bounded`] hold queue of `max_held` without an
//! acknowledgement, so that the broker's in-flight window throttles QoS 1
//! deliveries. Past `max_held` the new message is dropped, counted and
//! acknowledged (else it would block the in-flight window for good).
//!
//! A message whose payload is over `limits.max_event_bytes` goes on with
//! only its first `max_event_bytes` bytes and a `too_large` framing error:
//! the pipeline journals that prefix, rejects it and acknowledges it, like
//! an overlong serial line. rumqttc reads at most
//! [`max_incoming_packet`] bytes of it ([`crate::mqtt::conn`]).

use crate::model::{FramingError, Micros, RawInput, SensorKind, SourceName};
#[cfg(doc)]
use crate::mqtt::conn::max_incoming_packet;
use crate::mqtt::conn::Severity;
use crate::sources::stats::SourceStats;
use crate::util::backoff::Backoff;
use crate::util::bounded::{Bounded, WhenFull};
use crate::util::log_limit::LogLimiter;
use rumqttc::{Publish, QoS, SubscribeFilter, SubscribeReasonCode};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tracing::{debug, error, info, warn};

/// Topics remembered with their source name and sensor kind, at most.
const MAX_TOPICS: usize = 4096;

/// What happened, fed to [`Session::on_event`].
#[derive(Debug)]
pub enum Input {
    /// The broker accepted the connection.
    Connected {
        /// Whether it kept our session (and so our subscriptions).
        session_present: bool,
    },
    /// A message, received at `received_at`; `room`: the pipeline queue
    /// could take it now (the task holds a place for it).
    Message {
        /// The message.
        publish: Publish,
        /// When it arrived (µs).
        received_at: Micros,
        /// Whether the task reserved a place in the pipeline queue.
        room: bool,
    },
    /// The broker's answer to our subscription, one code per filter.
    SubAck(Vec<SubscribeReasonCode>),
    /// The connection failed or broke; `message` names the broker.
    Lost {
        /// How bad it is, for the log level.
        severity: Severity,
        /// What went wrong, in words.
        message: String,
    },
    /// No packet from the broker for twice the keep-alive.
    Silent,
}

/// What the task must do for an input.
#[derive(Debug)]
pub enum Action {
    /// Queue a subscription to these filters.
    Subscribe(Vec<SubscribeFilter>),
    /// Hand this message to the pipeline, in the place the task reserved.
    Deliver(Held),
    /// Acknowledge this message to the broker now.
    Ack(Ack),
    /// Wait this long (still handing held messages over) before polling again.
    Wait(Duration),
    /// Drop the connection and make it again.
    Reconnect,
}

/// What acknowledges a QoS 1 message, and the connection it came on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ack {
    /// Its QoS.
    pub qos: QoS,
    /// Its packet id.
    pub pkid: u16,
    /// The connection number it came on.
    pub connection: u64,
}

/// A message for the pipeline and what acknowledges it (none for QoS 0).
#[derive(Debug)]
pub struct Held {
    /// The input, without its ack token yet.
    pub input: RawInput,
    /// What acknowledges it.
    pub ack: Option<Ack>,
}

/// The number of the connection now, shared with the ack tokens handed to
/// the pipeline: an acknowledgement only goes to the connection its message
/// came on (the broker redelivers the others on its persistent session).
#[derive(Debug, Clone, Default)]
pub struct Connection(Arc<AtomicU64>);

impl Connection {
    /// Whether `ack`'s message came on the connection up now.
    pub fn owns(&self, ack: &Ack) -> bool {
        ack.connection == self.0.load(Ordering::Relaxed)
    }

    fn current(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    fn next(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// One topic filter: the sensor kind and device format of its messages.
#[derive(Debug, Clone)]
pub struct Subscription {
    /// The topic filter.
    pub filter: String,
    /// The kind of messages without a `sensor` field.
    pub sensor: Option<SensorKind>,
    /// The source name whose device format decodes its messages (SPEC §9);
    /// `None` for SPEC §1 JSON.
    pub mapping: Option<SourceName>,
}

/// What a topic's messages are: the source name, sensor kind and format.
type TopicInfo = (SourceName, Option<SensorKind>, Option<SourceName>);

/// The MQTT source's state: connection, subscriptions, held messages.
#[derive(Debug)]
pub struct Session {
    addr: String,
    name: String,
    keep_alive: Duration,
    subscriptions: Vec<Subscription>,
    topics: HashMap<String, TopicInfo>,
    held: Bounded<Held>,
    connection: Connection,
    connected: bool,
    subscribed: bool,
    last_error: Option<String>,
    backoff: Backoff,
    stats: Arc<SourceStats>,
    drop_log: LogLimiter,
    max_event_bytes: usize,
    oversize_log: LogLimiter,
}

impl Session {
    /// A session with broker `addr`, not connected yet (the source counts
    /// as down until it is).
    pub fn new(
        addr: String,
        keep_alive: Duration,
        subscriptions: Vec<Subscription>,
        max_held: usize,
        max_event_bytes: usize,
        stats: Arc<SourceStats>,
    ) -> Session {
        let name = super::source_name(&addr);
        stats.source_down(&name);
        Session {
            addr,
            name,
            keep_alive,
            subscriptions,
            topics: HashMap::new(),
            held: Bounded::new(max_held, WhenFull::DropNewest),
            connection: Connection::default(),
            connected: false,
            subscribed: false,
            last_error: None,
            backoff: Backoff::default(),
            stats,
            drop_log: LogLimiter::new(10_000_000),
            max_event_bytes,
            oversize_log: LogLimiter::new(10_000_000),
        }
    }

    /// The connection number the ack tokens check against.
    pub fn connection(&self) -> &Connection {
        &self.connection
    }

    /// How long the broker may be silent before [`Input::Silent`]; `None`
    /// while not connected.
    pub fn silent_after(&self) -> Option<Duration> {
        self.connected.then_some(self.keep_alive * 2)
    }

    /// Whether messages wait for room in the pipeline queue.
    pub fn is_holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// The oldest held message, for a place that opened in the pipeline queue.
    pub fn pop_held(&mut self) -> Option<Held> {
        self.held.pop()
    }

    /// Every held message (at shutdown), leaving none.
    pub fn take_held(&mut self) -> Bounded<Held> {
        let empty = Bounded::new(self.held.capacity(), self.held.when_full());
        std::mem::replace(&mut self.held, empty)
    }

    /// Takes one input.
    pub fn on_event(&mut self, input: Input) -> Option<Action> {
        match input {
            Input::Connected { session_present } => self.connected(session_present),
            Input::Message {
                publish,
                received_at,
                room,
            } => self.message(publish, received_at, room),
            Input::SubAck(codes) => {
                self.check_suback(&codes);
                None
            }
            Input::Lost { severity, message } => Some(self.lost(severity, message)),
            Input::Silent => {
                SourceStats::inc(&self.stats.mqtt_disconnects);
                self.stats.source_down(&self.name);
                let silent_s = (self.keep_alive * 2).as_secs();
                warn!(broker = %self.addr, silent_s, "MQTT connection silent for twice the keep-alive; reconnecting.");
                self.connected = false;
                Some(Action::Reconnect)
            }
        }
    }

    fn connected(&mut self, session_present: bool) -> Option<Action> {
        if !self.connected {
            self.stats.source_up(&self.name);
        }
        self.connected = true;
        self.connection.next();
        self.backoff.reset();
        self.last_error = None;
        info!(broker = %self.addr, session_present, "Connected to MQTT broker.");
        if self.subscribed && session_present {
            return None;
        }
        self.subscribed = true;
        let filters = self
            .subscriptions
            .iter()
            .map(|s| SubscribeFilter::new(s.filter.clone(), QoS::AtLeastOnce));
        Some(Action::Subscribe(filters.collect()))
    }

    fn check_suback(&self, codes: &[SubscribeReasonCode]) {
        for (code, Subscription { filter: topic, .. }) in codes.iter().zip(&self.subscriptions) {
            match code {
                SubscribeReasonCode::Failure => {
                    error!(broker = %self.addr, topic = %topic, "MQTT broker refused the subscription (check its ACL).")
                }
                SubscribeReasonCode::Success(q) => {
                    debug!(broker = %self.addr, topic = %topic, qos = ?q, "Subscribed.")
                }
            }
        }
    }

    fn message(&mut self, p: Publish, received_at: Micros, room: bool) -> Option<Action> {
        SourceStats::inc(&self.stats.mqtt_messages);
        let (source, sensor_hint, mapping) = self.topic(&p.topic);
        let (payload, framing_error) = self.payload(&p, received_at);
        let held = Held {
            input: RawInput {
                source,
                sensor_hint,
                payload,
                received_at,
                framing_error,
                ack: None,
                mapping,
            },
            ack: (p.qos != QoS::AtMostOnce).then_some(Ack {
                qos: p.qos,
                pkid: p.pkid,
                connection: self.connection.current(),
            }),
        };
        if room && self.held.is_empty() {
            return Some(Action::Deliver(held));
        }
        let dropped = self.held.push(held)?;
        SourceStats::inc(&self.stats.mqtt_dropped);
        if let Some(n) = self.drop_log.allow(received_at) {
            let dropped = n + 1;
            warn!(broker = %self.addr, dropped, "Pipeline is behind; MQTT messages dropped (counted in pitchside_mqtt_dropped_messages_total).");
        }
        // Acknowledged anyway, or it would block the in-flight window for good.
        let ack = dropped.ack.filter(|a| self.connection.owns(a))?;
        Some(Action::Ack(ack))
    }

    /// The payload of `p` for the pipeline: whole, or past
    /// `max_event_bytes` its first bytes with a `too_large` error (counted,
    /// logged at a limited rate).
    fn payload(&mut self, p: &Publish, received_at: Micros) -> (Vec<u8>, Option<FramingError>) {
        let len = match p.oversize {
            // The packet's remaining length less the topic and packet id.
            Some(remaining) => {
                let id = if p.qos == QoS::AtMostOnce { 0 } else { 2 };
                remaining.saturating_sub(2 + p.topic.len() + id)
            }
            None => p.payload.len(),
        };
        if len <= self.max_event_bytes {
            return (p.payload.to_vec(), None);
        }
        SourceStats::inc(&self.stats.mqtt_oversized);
        if let Some(n) = self.oversize_log.allow(received_at) {
            let (oversized, limit) = (n + 1, self.max_event_bytes);
            warn!(broker = %self.addr, topic = %p.topic, bytes = len, limit, oversized, "MQTT message over limits.max_event_bytes; acknowledged and rejected as too_large (counted in pitchside_mqtt_oversized_messages_total).");
        }
        let prefix = &p.payload[..p.payload.len().min(self.max_event_bytes)];
        (prefix.to_vec(), Some(FramingError::TooLarge { len }))
    }

    /// The source name, sensor kind and format of a topic (the first
    /// subscription that matches it), remembered.
    fn topic(&mut self, topic: &str) -> TopicInfo {
        if let Some(known) = self.topics.get(topic) {
            return known.clone();
        }
        if self.topics.len() >= MAX_TOPICS {
            self.topics.clear();
        }
        let sub = self
            .subscriptions
            .iter()
            .find(|s| rumqttc::matches(topic, &s.filter));
        let entry = (
            SourceName::from(format!("mqtt:{topic}")),
            sub.and_then(|s| s.sensor),
            sub.and_then(|s| s.mapping.clone()),
        );
        self.topics.insert(topic.to_string(), entry.clone());
        entry
    }

    fn lost(&mut self, severity: Severity, message: String) -> Action {
        if self.connected {
            SourceStats::inc(&self.stats.mqtt_disconnects);
            self.stats.source_down(&self.name);
            warn!(broker = %self.addr, reason = %message, "Disconnected from MQTT broker; reconnecting with backoff.");
            self.connected = false;
        } else if self.last_error.as_deref() != Some(message.as_str()) {
            match severity {
                Severity::Operator => error!(broker = %self.addr, "{message}"),
                Severity::Transient => {
                    warn!(broker = %self.addr, "{message}; retrying with backoff.")
                }
            }
        } else {
            debug!(broker = %self.addr, "{message}");
        }
        self.last_error = Some(message);
        Action::Wait(self.backoff.next_delay())
    }
}

#[cfg(test)]
mod tests;
