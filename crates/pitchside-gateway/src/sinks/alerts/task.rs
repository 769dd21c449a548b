//! The alert output's loop: polls rumqttc's event loop all the time, feeds
//! its events and the pipeline's alerts to the [`Session`], and carries out
//! what it asks (publish, wait after an error).

use super::message::Origin;
use super::session::{Action, Input, Session};
use super::{AlertSender, AlertSettings, AlertStats, SHUTDOWN_DRAIN};
use crate::config::AlertsConfig;
use crate::mqtt::conn::{describe, BrokerSettings};
use crate::pipeline::LiveAlert;
use crate::util::time::now_micros;
use rumqttc::{AsyncClient, ConnectionError, Event, EventLoop, Outgoing, Packet, QoS};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tracing::{error, info};

/// Publishes alerts to the `[alerts.mqtt]` broker.
pub struct AlertPublisher {
    out: Outbox,
    eventloop: EventLoop,
}

/// Everything but the event loop, so that alerts can be taken while a
/// `poll()` is in progress (the poll future is never dropped for it).
struct Outbox {
    addr: String,
    session: Session,
    client: AsyncClient,
    reload: Option<watch::Receiver<AlertSettings>>,
    /// When the pipeline has stopped: the end of the bounded drain.
    deadline: Option<Instant>,
}

impl AlertPublisher {
    /// A publisher and the pipeline's handle to it.
    pub fn new(
        alerts: &AlertsConfig,
        broker: BrokerSettings,
        venue_id: &str,
        gateway_id: &str,
        stats: Arc<AlertStats>,
    ) -> (AlertPublisher, AlertSender, mpsc::Receiver<LiveAlert>) {
        let (client, eventloop) = AsyncClient::new(broker.options, alerts.max_inflight + 16);
        let (tx, rx) = mpsc::channel(alerts.input_queue.max(1));
        let origin = Origin {
            venue_id: venue_id.to_string(),
            gateway_id: gateway_id.to_string(),
        };
        let settings = AlertSettings::from_config(alerts);
        let session = Session::new(
            broker.addr.clone(),
            settings,
            origin,
            alerts.max_inflight,
            stats.clone(),
        );
        let out = Outbox {
            addr: broker.addr,
            session,
            client,
            reload: None,
            deadline: None,
        };
        (
            AlertPublisher { out, eventloop },
            AlertSender { tx, stats },
            rx,
        )
    }

    /// Takes new [`AlertSettings`] from `rx` whenever they change (config reload).
    pub fn with_reload(mut self, rx: watch::Receiver<AlertSettings>) -> Self {
        self.out.reload = Some(rx);
        self
    }

    /// Runs until `rx` closes (the pipeline stopped) and the queue is sent,
    /// or [`SHUTDOWN_DRAIN`] after that.
    pub async fn run(self, mut rx: mpsc::Receiver<LiveAlert>) {
        let AlertPublisher {
            mut out,
            mut eventloop,
        } = self;
        let prefix = &out.session.settings().prefix;
        info!(broker = %out.addr, prefix = %prefix, "MQTT alert output connecting.");
        loop {
            if out.deadline.is_some() && out.session.is_idle() {
                break;
            }
            let Some(ev) = out.next_event(&mut eventloop, &mut rx).await else {
                break;
            };
            let action = out.input(ev).and_then(|i| out.session.on_event(i));
            if let Some(Action::Wait(d)) = action {
                if out.pause(d, &mut rx).await {
                    break;
                }
            }
            out.flush();
        }
        let left = out.session.unsent();
        if left > 0 {
            error!(broker = %out.addr, alerts = left, "Alert output stopped with alerts unsent (they are in the alerts tables).");
        }
        info!(broker = %out.addr, "MQTT alert output stopped.");
    }
}

impl Outbox {
    /// The next event of the broker connection, taking alerts meanwhile;
    /// `None` when the output should stop.
    async fn next_event(
        &mut self,
        eventloop: &mut EventLoop,
        rx: &mut mpsc::Receiver<LiveAlert>,
    ) -> Option<Result<Event, ConnectionError>> {
        let poll = eventloop.poll();
        tokio::pin!(poll);
        loop {
            let far = Instant::now() + Duration::from_secs(3600);
            let draining = self.deadline.is_some();
            tokio::select! {
                a = rx.recv(), if !draining => if self.take(a) {
                    return None;
                },
                _ = tokio::time::sleep_until(self.deadline.unwrap_or(far)), if draining => return None,
                ev = &mut poll => return Some(ev),
            }
        }
    }

    /// Sleeps `d` while still taking alerts; true when the drain is over.
    async fn pause(&mut self, d: Duration, rx: &mut mpsc::Receiver<LiveAlert>) -> bool {
        let wake = Instant::now() + d;
        loop {
            let until = match self.deadline {
                Some(dl) if dl < wake => dl,
                _ => wake,
            };
            tokio::select! {
                _ = tokio::time::sleep_until(until) => {
                    return self.deadline.is_some_and(|dl| dl <= Instant::now());
                }
                a = rx.recv(), if self.deadline.is_none() => if self.take(a) {
                    return true;
                },
            }
        }
    }

    /// An alert from the pipeline, or the end of its channel; true when
    /// nothing is left to send after the end.
    fn take(&mut self, a: Option<LiveAlert>) -> bool {
        match a {
            Some(a) => {
                self.refresh();
                self.session
                    .on_event(Input::Alert(Box::new(a), now_micros()));
                self.flush();
                false
            }
            // The pipeline stopped: wait (bounded) only for what is unsent.
            None if self.session.is_idle() => true,
            None => {
                self.deadline = Some(Instant::now() + SHUTDOWN_DRAIN);
                false
            }
        }
    }

    /// The session's view of a rumqttc event (`None`: nothing for it).
    fn input(&self, ev: Result<Event, ConnectionError>) -> Option<Input> {
        match ev {
            Ok(Event::Incoming(Packet::ConnAck(_))) => Some(Input::Connected),
            Ok(Event::Incoming(Packet::PubAck(ack))) => Some(Input::PubAck(ack.pkid)),
            Ok(Event::Outgoing(Outgoing::Publish(pkid))) => Some(Input::PublishSent(pkid)),
            Ok(_) => None,
            Err(e) => {
                let (severity, message) = describe(&self.addr, &e);
                Some(Input::Lost { severity, message })
            }
        }
    }

    /// Hands rumqttc what the window allows.
    fn flush(&mut self) {
        while let Some(m) = self.session.next_publish() {
            let (topic, payload) = (m.topic.clone(), m.payload.clone());
            if self
                .client
                .try_publish(topic, QoS::AtLeastOnce, false, payload)
                .is_err()
            {
                self.session.publish_refused();
                break;
            }
        }
    }

    /// Applies reloaded settings, if any.
    fn refresh(&mut self) {
        let Some(rx) = &mut self.reload else { return };
        if rx.has_changed().unwrap_or(false) {
            let new = rx.borrow_and_update().clone();
            self.session.reconfigure(new);
        }
    }
}
