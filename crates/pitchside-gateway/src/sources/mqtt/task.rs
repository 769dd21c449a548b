//! The MQTT source's loop: polls rumqttc's event loop all the time, feeds
//! its events to the [`Session`] and carries out what it asks (hand a
//! message to the pipeline with its ack token, acknowledge, subscribe,
//! wait, reconnect), handing held messages over as places open.

use super::session::{Ack, Action, Connection, Held, Input, Session, Subscription};
use crate::config::MqttSourceSection;
use crate::model::{AckToken, RawInput, SensorKind, SourceName};
use crate::mqtt::conn::{describe, max_incoming_packet, BrokerSettings};
use crate::sources::handover::{self, Holder};
use crate::sources::stats::SourceStats;
use crate::util::time::now_micros;
use rumqttc::{AsyncClient, ConnectionError, Event, EventLoop, Packet, Publish};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::{debug, error, info};

/// Subscribes to one broker and feeds its messages to the pipeline.
pub struct MqttSource {
    inbox: Inbox,
    eventloop: EventLoop,
}

/// Everything but the event loop, so that handing messages over can run
/// while a `poll()` is in progress (the poll future is never dropped for it).
struct Inbox {
    addr: String,
    session: Session,
    client: AsyncClient,
    tx: mpsc::Sender<RawInput>,
}

enum Step {
    Event(Result<Event, ConnectionError>),
    Silent,
    Shutdown,
}

impl MqttSource {
    /// A source for `section` with connection settings `broker`; payloads
    /// over `max_event_bytes` are cut and rejected as `too_large`.
    pub fn new(
        section: &MqttSourceSection,
        broker: BrokerSettings,
        max_event_bytes: usize,
        tx: mpsc::Sender<RawInput>,
        stats: Arc<SourceStats>,
    ) -> MqttSource {
        let mut options = broker.options;
        options
            .set_manual_acks(true)
            .set_max_packet_size(max_incoming_packet(max_event_bytes), 1 << 20);
        let max_held = section.max_held as usize;
        let (client, eventloop) = AsyncClient::new(options, max_held + 64);
        let subscriptions = section
            .subscriptions
            .iter()
            .map(|s| Subscription {
                filter: s.topic.clone(),
                sensor: s.sensor.as_deref().and_then(SensorKind::parse),
                mapping: s.input.is_mapped().then(|| SourceName::from(s.name())),
            })
            .collect();
        let session = Session::new(
            broker.addr.clone(),
            broker.keep_alive,
            subscriptions,
            max_held,
            max_event_bytes,
            stats,
        );
        let inbox = Inbox {
            addr: broker.addr,
            session,
            client,
            tx,
        };
        MqttSource { inbox, eventloop }
    }

    /// Runs until `shutdown`; never returns early on a broker problem.
    pub async fn run(self, shutdown: CancellationToken) {
        let MqttSource {
            mut inbox,
            mut eventloop,
        } = self;
        let mut last_packet = Instant::now();
        info!(broker = %inbox.addr, "MQTT source connecting.");
        let tx = inbox.tx.clone();
        loop {
            let step = inbox
                .next_step(&mut eventloop, last_packet, &shutdown)
                .await;
            if let Step::Event(Ok(Event::Incoming(_))) = step {
                last_packet = Instant::now();
            }
            let input = match step {
                Step::Shutdown => break,
                Step::Silent => Input::Silent,
                Step::Event(ev) => match inbox.input(ev) {
                    Some(input) => input,
                    None => continue,
                },
            };
            let stop = match inbox.session.on_event(input) {
                Some(Action::Wait(d)) => handover::pause(&mut inbox, &tx, d, &shutdown).await,
                Some(Action::Reconnect) => {
                    eventloop.clean();
                    false
                }
                Some(action) => {
                    inbox.carry_out(action);
                    false
                }
                None => false,
            };
            if stop {
                break;
            }
        }
        // Held messages were never acknowledged: the broker delivers them
        // again on the next start (persistent session). Hand them over
        // anyway while the pipeline still runs; duplicates are detected.
        let mut held = inbox.session.take_held();
        let n = handover::hand_over_rest(&mut held, &tx, |h| h.input).await;
        info!(broker = %inbox.addr, handed_over = n, "MQTT source stopped.");
    }
}

impl Inbox {
    /// Polls the event loop, handing held messages over meanwhile, until
    /// an event, silence past twice the keep-alive, or shutdown.
    async fn next_step(
        &mut self,
        eventloop: &mut EventLoop,
        last_packet: Instant,
        shutdown: &CancellationToken,
    ) -> Step {
        let poll = eventloop.poll();
        tokio::pin!(poll);
        let silent_after = self.session.silent_after();
        let silent_at = last_packet + silent_after.unwrap_or_default();
        let tx = self.tx.clone();
        loop {
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => return Step::Shutdown,
                permit = tx.reserve(), if self.is_holding() => match permit {
                    Ok(p) => self.hand_over(p),
                    Err(_) => return Step::Shutdown,
                },
                _ = tokio::time::sleep_until(silent_at), if silent_after.is_some() => return Step::Silent,
                ev = &mut poll => return Step::Event(ev),
            }
        }
    }

    /// The session's view of a rumqttc event (`None`: nothing for it); a
    /// message is taken here, with a place in the pipeline queue if any.
    fn input(&mut self, ev: Result<Event, ConnectionError>) -> Option<Input> {
        match ev {
            Ok(Event::Incoming(Packet::Publish(p))) => {
                self.receive(p);
                None
            }
            Ok(Event::Incoming(Packet::ConnAck(ack))) => Some(Input::Connected {
                session_present: ack.session_present,
            }),
            Ok(Event::Incoming(Packet::SubAck(s))) => Some(Input::SubAck(s.return_codes)),
            Ok(_) => None,
            Err(e) => {
                let (severity, message) = describe(&self.addr, &e);
                Some(Input::Lost { severity, message })
            }
        }
    }

    /// A message: straight into the pipeline queue if it has a place now
    /// and nothing is held, else held (or dropped) by the session.
    fn receive(&mut self, publish: Publish) {
        let permit = match self.session.is_holding() {
            false => self.tx.try_reserve().ok(),
            true => None,
        };
        let input = Input::Message {
            publish,
            received_at: now_micros(),
            room: permit.is_some(),
        };
        match self.session.on_event(input) {
            Some(Action::Deliver(h)) => {
                if let Some(permit) = permit {
                    permit.send(self.with_token(h));
                }
            }
            Some(action) => {
                drop(permit);
                self.carry_out(action);
            }
            None => {}
        }
    }

    fn carry_out(&mut self, action: Action) {
        match action {
            Action::Subscribe(filters) => {
                if let Err(e) = self.client.try_subscribe_many(filters) {
                    error!(broker = %self.addr, error = %e, "Cannot queue the MQTT subscription.");
                }
            }
            Action::Ack(ack) => {
                if let Err(e) = self.client.try_ack(&ack_packet(ack)) {
                    debug!(broker = %self.addr, error = %e, "Ack not queued; the broker will redeliver.");
                }
            }
            // Only asked for with a place reserved (see `receive`), and
            // waits and reconnects are the loop's.
            Action::Deliver(_) | Action::Wait(_) | Action::Reconnect => {}
        }
    }

    /// The message with its ack token: the pipeline acknowledges once the
    /// message is in its journal and fsynced, so a crash never loses an
    /// acknowledged message.
    fn with_token(&self, h: Held) -> RawInput {
        let mut input = h.input;
        input.ack = h
            .ack
            .map(|ack| token(self.client.clone(), self.session.connection().clone(), ack));
        input
    }
}

impl Holder for Inbox {
    fn is_holding(&self) -> bool {
        self.session.is_holding()
    }

    fn hand_over(&mut self, permit: mpsc::Permit<'_, RawInput>) {
        if let Some(h) = self.session.pop_held() {
            permit.send(self.with_token(h));
        }
    }
}

/// The token the pipeline calls to acknowledge a message.
fn token(client: AsyncClient, connection: Connection, ack: Ack) -> AckToken {
    AckToken::new(move || {
        // A message from an earlier connection is redelivered by the
        // broker (persistent session); that copy will be acknowledged.
        if connection.owns(&ack) {
            let _ = client.try_ack(&ack_packet(ack));
        }
    })
}

/// What rumqttc needs to acknowledge a message: its QoS and packet id.
fn ack_packet(ack: Ack) -> Publish {
    let mut p = Publish::new("", ack.qos, Vec::new());
    p.pkid = ack.pkid;
    p
}
