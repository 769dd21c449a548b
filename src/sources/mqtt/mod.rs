//! The MQTT source: subscribes at QoS 1 on a persistent session, one event
//! per message, manual acknowledgements.
//!
//! The event loop is polled all the time, whatever the pipeline does. A
//! message goes straight into the pipeline queue when it has room, carrying
//! an ack token that the pipeline calls once the message is in its journal
//! and fsynced; otherwise it is held (up to `max_held`) without an
//! acknowledgement, so the broker's in-flight window (mosquitto:
//! `max_inflight_messages`, 20) stops further QoS 1 deliveries until the
//! pipeline catches up. Past `max_held` (only reachable with QoS 0 traffic
//! or an unlimited in-flight window) messages are dropped and counted.
//!
//! Reconnects use [`Backoff`] between failing polls (rumqttc alone would
//! retry at once, in a busy loop). A connection with no packet from the
//! broker for twice the keep-alive is dropped and made again. Each state
//! change is logged once, not every retry.

use crate::config::MqttSourceSection;
use crate::model::{RawInput, SensorKind, SourceName};
use crate::mqtt::conn::{describe, BrokerSettings, Severity};
use crate::sources::stats::{LogLimit, SourceStats};
use crate::util::backoff::Backoff;
use crate::util::time::now_micros;
use rumqttc::{
    AsyncClient, Event, EventLoop, Packet, Publish, QoS, SubscribeFilter, SubscribeReasonCode,
};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, info, warn};

/// A message waiting for room in the pipeline queue.
struct Held {
    input: RawInput,
    /// QoS and packet id to acknowledge, and the connection it came on.
    ack: Option<(QoS, u16, u64)>,
}

/// Everything but the event loop, so that handing messages over can run
/// while a `poll()` is in progress (the poll future is never dropped for it).
struct Inbox {
    addr: String,
    client: AsyncClient,
    tx: mpsc::Sender<RawInput>,
    stats: Arc<SourceStats>,
    subscriptions: Vec<(String, Option<SensorKind>)>,
    topics: HashMap<String, (SourceName, Option<SensorKind>)>,
    held: VecDeque<Held>,
    max_held: usize,
    /// Connection number; acknowledgements only go to the connection a
    /// message came on. Shared with the ack tokens handed to the pipeline.
    generation: Arc<std::sync::atomic::AtomicU64>,
    drop_log: LogLimit,
}

/// How health and metrics name an MQTT source: `mqtt:{host:port}`.
pub fn source_name(addr: &str) -> String {
    format!("mqtt:{addr}")
}

/// Subscribes to one broker and feeds its messages to the pipeline.
pub struct MqttSource {
    inbox: Inbox,
    eventloop: EventLoop,
    keep_alive: Duration,
}

enum Step {
    Event(Result<Event, rumqttc::ConnectionError>),
    Silent,
    Shutdown,
}

impl MqttSource {
    /// A source for `section` with connection settings `broker`.
    pub fn new(
        section: &MqttSourceSection,
        broker: BrokerSettings,
        tx: mpsc::Sender<RawInput>,
        stats: Arc<SourceStats>,
    ) -> MqttSource {
        // Down until the broker first accepts the connection.
        stats.source_down(&source_name(&broker.addr));
        let mut options = broker.options;
        options.set_manual_acks(true);
        let max_held = section.max_held as usize;
        let (client, eventloop) = AsyncClient::new(options, max_held + 64);
        MqttSource {
            inbox: Inbox {
                addr: broker.addr,
                client,
                tx,
                stats,
                subscriptions: section
                    .subscriptions
                    .iter()
                    .map(|s| {
                        (
                            s.topic.clone(),
                            s.sensor.as_deref().and_then(SensorKind::parse),
                        )
                    })
                    .collect(),
                topics: HashMap::new(),
                held: VecDeque::new(),
                max_held,
                generation: Arc::new(std::sync::atomic::AtomicU64::new(0)),
                drop_log: LogLimit::new(Duration::from_secs(10)),
            },
            eventloop,
            keep_alive: broker.keep_alive,
        }
    }

    /// Runs until `shutdown`; never returns early on a broker problem.
    pub async fn run(self, shutdown: CancellationToken) {
        let MqttSource {
            mut inbox,
            mut eventloop,
            keep_alive,
        } = self;
        let mut backoff = Backoff::default();
        let mut connected = false;
        let mut subscribed = false;
        let mut last_error: Option<String> = None;
        let mut last_packet = Instant::now();
        info!(broker = %inbox.addr, "MQTT source connecting.");
        let tx = inbox.tx.clone();
        loop {
            let step = {
                let poll = eventloop.poll();
                tokio::pin!(poll);
                let silent_at = last_packet + keep_alive * 2;
                loop {
                    tokio::select! {
                        biased;
                        _ = shutdown.cancelled() => break Step::Shutdown,
                        permit = tx.reserve(), if !inbox.held.is_empty() => match permit {
                            Ok(p) => inbox.hand_over(p),
                            Err(_) => break Step::Shutdown,
                        },
                        _ = tokio::time::sleep_until(silent_at), if connected => break Step::Silent,
                        ev = &mut poll => break Step::Event(ev),
                    }
                }
            };
            match step {
                Step::Shutdown => break,
                Step::Silent => {
                    SourceStats::inc(&inbox.stats.mqtt_disconnects);
                    inbox.stats.source_down(&source_name(&inbox.addr));
                    warn!(broker = %inbox.addr, silent_s = (keep_alive * 2).as_secs(), "MQTT connection silent for twice the keep-alive; reconnecting.");
                    connected = false;
                    eventloop.clean();
                }
                Step::Event(Ok(ev)) => {
                    if let Event::Incoming(packet) = ev {
                        last_packet = Instant::now();
                        match packet {
                            Packet::Publish(p) => inbox.receive(p),
                            Packet::ConnAck(ack) => {
                                if !connected {
                                    inbox.stats.source_up(&source_name(&inbox.addr));
                                }
                                connected = true;
                                inbox
                                    .generation
                                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                backoff.reset();
                                last_error = None;
                                info!(broker = %inbox.addr, session_present = ack.session_present, "Connected to MQTT broker.");
                                if !subscribed || !ack.session_present {
                                    inbox.subscribe();
                                    subscribed = true;
                                }
                            }
                            Packet::SubAck(s) => inbox.check_suback(&s.return_codes),
                            _ => {}
                        }
                    }
                }
                Step::Event(Err(e)) => {
                    let (severity, message) = describe(&inbox.addr, &e);
                    if connected {
                        SourceStats::inc(&inbox.stats.mqtt_disconnects);
                        inbox.stats.source_down(&source_name(&inbox.addr));
                        warn!(broker = %inbox.addr, reason = %message, "Disconnected from MQTT broker; reconnecting with backoff.");
                        connected = false;
                    } else if last_error.as_deref() != Some(message.as_str()) {
                        match severity {
                            Severity::Operator => error!(broker = %inbox.addr, "{message}"),
                            Severity::Transient => {
                                warn!(broker = %inbox.addr, "{message}; retrying with backoff.")
                            }
                        }
                    } else {
                        debug!(broker = %inbox.addr, "{message}");
                    }
                    last_error = Some(message);
                    if inbox.pause(backoff.next_delay(), &shutdown).await {
                        break;
                    }
                }
            }
        }
        // Held messages were never acknowledged: the broker delivers them
        // again on the next start (persistent session). Hand them over
        // anyway while the pipeline still runs; duplicates are detected.
        let n = inbox.held.len();
        for h in inbox.held.drain(..) {
            if inbox.tx.send(h.input).await.is_err() {
                break;
            }
        }
        info!(broker = %inbox.addr, handed_over = n, "MQTT source stopped.");
    }
}

impl Inbox {
    fn subscribe(&mut self) {
        let filters = self
            .subscriptions
            .iter()
            .map(|(t, _)| SubscribeFilter::new(t.clone(), QoS::AtLeastOnce));
        if let Err(e) = self.client.try_subscribe_many(filters) {
            error!(broker = %self.addr, error = %e, "Cannot queue the MQTT subscription.");
        }
    }

    fn check_suback(&self, codes: &[SubscribeReasonCode]) {
        for (code, (topic, _)) in codes.iter().zip(&self.subscriptions) {
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

    fn receive(&mut self, p: Publish) {
        SourceStats::inc(&self.stats.mqtt_messages);
        if self.topics.len() >= 4096 && !self.topics.contains_key(&p.topic) {
            self.topics.clear();
        }
        let subs = &self.subscriptions;
        let (source, hint) = self
            .topics
            .entry(p.topic.clone())
            .or_insert_with(|| {
                let hint = subs
                    .iter()
                    .find(|(f, _)| rumqttc::matches(&p.topic, f))
                    .and_then(|(_, k)| *k);
                (Arc::from(format!("mqtt:{}", p.topic)), hint)
            })
            .clone();
        let held = Held {
            input: RawInput {
                source,
                sensor_hint: hint,
                payload: p.payload.to_vec(),
                received_at: now_micros(),
                framing_error: None,
                ack: None,
            },
            ack: (p.qos != QoS::AtMostOnce).then_some((
                p.qos,
                p.pkid,
                self.generation.load(std::sync::atomic::Ordering::Relaxed),
            )),
        };
        if self.held.is_empty() {
            if let Ok(permit) = self.tx.try_reserve() {
                self.deliver(permit, held);
                return;
            }
        }
        if self.held.len() < self.max_held {
            self.held.push_back(held);
            return;
        }
        // Dropped: acknowledge it anyway, or it would block the in-flight window for good.
        SourceStats::inc(&self.stats.mqtt_dropped);
        self.ack(held.ack);
        if let Some(n) = self.drop_log.allow() {
            warn!(broker = %self.addr, dropped = n, "Pipeline is behind; MQTT messages dropped (counted in pitchside_mqtt_dropped_messages_total).");
        }
    }

    fn hand_over(&mut self, permit: mpsc::Permit<'_, RawInput>) {
        if let Some(h) = self.held.pop_front() {
            self.deliver(permit, h);
        }
    }

    /// Hands a message to the pipeline with its acknowledgement: the
    /// pipeline acknowledges once the message is in its journal and fsynced,
    /// so a crash never loses an acknowledged message.
    fn deliver(&self, permit: mpsc::Permit<'_, RawInput>, h: Held) {
        let mut input = h.input;
        input.ack = self.ack_token(h.ack);
        permit.send(input);
    }

    fn ack_token(&self, ack: Option<(QoS, u16, u64)>) -> Option<crate::model::AckToken> {
        let (qos, pkid, generation) = ack?;
        let client = self.client.clone();
        let current = self.generation.clone();
        Some(crate::model::AckToken::new(move || {
            // A message from an earlier connection is redelivered by the
            // broker (persistent session); that copy will be acknowledged.
            if current.load(std::sync::atomic::Ordering::Relaxed) == generation {
                let mut p = Publish::new("", qos, Vec::new());
                p.pkid = pkid;
                let _ = client.try_ack(&p);
            }
        }))
    }

    fn ack(&self, ack: Option<(QoS, u16, u64)>) {
        let Some((qos, pkid, generation)) = ack else {
            return;
        };
        if generation != self.generation.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let mut p = Publish::new("", qos, Vec::new());
        p.pkid = pkid;
        if let Err(e) = self.client.try_ack(&p) {
            debug!(broker = %self.addr, error = %e, "Ack not queued; the broker will redeliver.");
        }
    }

    /// Sleeps `d`, still handing held messages over; true on shutdown.
    async fn pause(&mut self, d: Duration, shutdown: &CancellationToken) -> bool {
        let sleep = tokio::time::sleep(d);
        tokio::pin!(sleep);
        let tx = self.tx.clone();
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return true,
                _ = &mut sleep => return false,
                permit = tx.reserve(), if !self.held.is_empty() => match permit {
                    Ok(p) => self.hand_over(p),
                    Err(_) => return true,
                },
            }
        }
    }
}
