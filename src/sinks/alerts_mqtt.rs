//! Real-time alert output: every z-score alert is published at once to
//! `{topic_prefix}/{sensor}/{device_id}` and every fatigue alert to
//! `{topic_prefix}/fatigue/{player_id}`, QoS 1, as a JSON object with the
//! columns of the `alerts` / `fatigue_alerts` table (timestamps as RFC 3339).
//!
//! The pipeline never waits for the broker: [`AlertSender::offer`] is a
//! non-blocking hand-over into a channel that the publisher task empties at
//! once into its own queue of `alerts.queue` alerts (`alerts.when_full`:
//! drop the oldest or the newest, counted and logged). Alerts leave the
//! queue while the broker is connected, at most [`WINDOW`] unacknowledged at
//! a time; alerts sent but not acknowledged when a connection drops are
//! queued again (at least once: a subscriber may see an `alert_id` twice).

use crate::config::AlertsSection;
use crate::mqtt::conn::{describe, BrokerSettings, Severity};
use crate::pipeline::LiveAlert;
use crate::sources::stats::{LogLimit, SourceStats};
use crate::util::backoff::Backoff;
use crate::util::time::format_rfc3339;
use rumqttc::{AsyncClient, Event, EventLoop, Outgoing, Packet, QoS};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::{error, info, warn};

/// Alerts handed to rumqttc and not yet acknowledged by the broker, at most.
pub const WINDOW: usize = 64;
/// How long the output keeps trying to deliver queued alerts at shutdown.
pub const SHUTDOWN_DRAIN: Duration = Duration::from_secs(5);

/// The pipeline's handle: never blocks.
#[derive(Debug, Clone)]
pub struct AlertSender {
    tx: mpsc::Sender<LiveAlert>,
    stats: Arc<SourceStats>,
}

impl AlertSender {
    /// Hands alerts to the publisher; if its inbox is full they are dropped and counted.
    pub fn offer(&self, alerts: Vec<LiveAlert>) {
        for a in alerts {
            if self.tx.try_send(a).is_err() {
                SourceStats::inc(&self.stats.alerts_dropped);
            }
        }
    }
}

/// The alert output's settings that a reload (SIGHUP) may change while it
/// runs: `alerts.topic_prefix`, `alerts.queue`, `alerts.when_full`. The
/// broker connection (`[alerts.mqtt]`) needs a restart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertSettings {
    /// Topic prefix.
    pub prefix: String,
    /// Queue capacity.
    pub capacity: usize,
    /// Drop the oldest alert when full (else the newest).
    pub drop_oldest: bool,
}

impl AlertSettings {
    /// The settings of `[alerts]`.
    pub fn from_section(section: &AlertsSection) -> AlertSettings {
        AlertSettings {
            prefix: section.topic_prefix.clone(),
            capacity: section.queue as usize,
            drop_oldest: section.when_full != "drop-newest",
        }
    }
}

/// One alert ready to publish.
#[derive(Debug, Clone)]
struct Message {
    topic: String,
    payload: Vec<u8>,
}

/// Publishes alerts to the `[alerts.mqtt]` broker.
pub struct AlertPublisher {
    addr: String,
    cfg: AlertSettings,
    reload: Option<tokio::sync::watch::Receiver<AlertSettings>>,
    venue_id: String,
    gateway_id: String,
    client: AsyncClient,
    eventloop: EventLoop,
    queue: VecDeque<Message>,
    /// Handed to rumqttc, in order; the packet id once it went out.
    sent: VecDeque<(Option<u16>, Message)>,
    connected: bool,
    stats: Arc<SourceStats>,
    drop_log: LogLimit,
}

impl AlertPublisher {
    /// A publisher and the pipeline's handle to it.
    pub fn new(
        section: &AlertsSection,
        broker: BrokerSettings,
        venue_id: &str,
        gateway_id: &str,
        stats: Arc<SourceStats>,
    ) -> (AlertPublisher, AlertSender, mpsc::Receiver<LiveAlert>) {
        let (client, eventloop) = AsyncClient::new(broker.options, WINDOW + 16);
        let (tx, rx) = mpsc::channel(4096);
        let publisher = AlertPublisher {
            addr: broker.addr,
            cfg: AlertSettings::from_section(section),
            reload: None,
            venue_id: venue_id.to_string(),
            gateway_id: gateway_id.to_string(),
            client,
            eventloop,
            queue: VecDeque::new(),
            sent: VecDeque::new(),
            connected: false,
            stats: stats.clone(),
            drop_log: LogLimit::new(Duration::from_secs(10)),
        };
        (publisher, AlertSender { tx, stats }, rx)
    }

    /// Takes new [`AlertSettings`] from `rx` whenever they change (config reload).
    pub fn with_reload(mut self, rx: tokio::sync::watch::Receiver<AlertSettings>) -> Self {
        self.reload = Some(rx);
        self
    }

    /// Applies reloaded settings, if any; a smaller queue drops (and counts) the excess.
    fn refresh(
        reload: &mut Option<tokio::sync::watch::Receiver<AlertSettings>>,
        cfg: &mut AlertSettings,
        queue: &mut VecDeque<Message>,
        stats: &SourceStats,
    ) {
        let Some(rx) = reload else { return };
        if !rx.has_changed().unwrap_or(false) {
            return;
        }
        let new = rx.borrow_and_update().clone();
        if new == *cfg {
            return;
        }
        let mut dropped = 0;
        while queue.len() > new.capacity.max(1) {
            if new.drop_oldest {
                queue.pop_front();
            } else {
                queue.pop_back();
            }
            SourceStats::inc(&stats.alerts_dropped);
            dropped += 1;
        }
        info!(prefix = %new.prefix, queue = new.capacity, drop_oldest = new.drop_oldest, dropped, "Alert output settings reloaded.");
        *cfg = new;
    }

    /// Runs until `rx` closes (the pipeline stopped) and the queue is sent,
    /// or [`SHUTDOWN_DRAIN`] after that.
    pub async fn run(mut self, mut rx: mpsc::Receiver<LiveAlert>) {
        let mut backoff = Backoff::default();
        let mut last_error: Option<String> = None;
        let mut deadline: Option<Instant> = None;
        info!(broker = %self.addr, prefix = %self.cfg.prefix, "MQTT alert output connecting.");
        loop {
            if deadline.is_some() && self.queue.is_empty() && self.sent.is_empty() {
                break;
            }
            let far = Instant::now() + Duration::from_secs(3600);
            let ev = {
                let poll = self.eventloop.poll();
                tokio::pin!(poll);
                loop {
                    tokio::select! {
                        a = rx.recv(), if deadline.is_none() => match a {
                            Some(a) => {
                                Self::refresh(&mut self.reload, &mut self.cfg, &mut self.queue, &self.stats);
                                Self::enqueue(&mut self.queue, self.cfg.capacity, self.cfg.drop_oldest, &self.stats, &mut self.drop_log, Self::render(&self.cfg.prefix, &self.venue_id, &self.gateway_id, a));
                                if self.connected {
                                    Self::flush(&self.client, &mut self.queue, &mut self.sent);
                                }
                            }
                            // The pipeline stopped: wait (bounded) only for what is unsent.
                            None if self.queue.is_empty() && self.sent.is_empty() => break None,
                            None => deadline = Some(Instant::now() + SHUTDOWN_DRAIN),
                        },
                        _ = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => break None,
                        ev = &mut poll => break Some(ev),
                    }
                }
            };
            let Some(ev) = ev else { break };
            match ev {
                Ok(Event::Incoming(Packet::ConnAck(_))) => {
                    self.connected = true;
                    backoff.reset();
                    last_error = None;
                    // A clean session: whatever was unacknowledged is sent again.
                    for (_, m) in self.sent.drain(..).rev() {
                        self.queue.push_front(m);
                    }
                    info!(broker = %self.addr, queued = self.queue.len(), "Alert output connected to MQTT broker.");
                }
                Ok(Event::Incoming(Packet::PubAck(ack))) => {
                    if let Some(i) = self.sent.iter().position(|(p, _)| *p == Some(ack.pkid)) {
                        self.sent.remove(i);
                        SourceStats::inc(&self.stats.alerts_published);
                    }
                }
                Ok(Event::Outgoing(Outgoing::Publish(pkid))) => {
                    if let Some(slot) = self.sent.iter_mut().find(|(p, _)| p.is_none()) {
                        slot.0 = Some(pkid);
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let (severity, message) = describe(&self.addr, &e);
                    if self.connected {
                        self.connected = false;
                        SourceStats::inc(&self.stats.alerts_disconnects);
                        warn!(broker = %self.addr, reason = %message, queued = self.queue.len() + self.sent.len(), "Alert output disconnected; alerts are queued until the broker is back.");
                    } else if last_error.as_deref() != Some(message.as_str()) {
                        match severity {
                            Severity::Operator => {
                                error!(broker = %self.addr, "Alert output: {message}")
                            }
                            Severity::Transient => {
                                warn!(broker = %self.addr, "Alert output: {message}; retrying with backoff.")
                            }
                        }
                    }
                    last_error = Some(message);
                    if self
                        .pause(backoff.next_delay(), &mut rx, &mut deadline)
                        .await
                    {
                        break;
                    }
                }
            }
            if self.connected {
                Self::flush(&self.client, &mut self.queue, &mut self.sent);
            }
            SourceStats::set(
                &self.stats.alerts_queued,
                (self.queue.len() + self.sent.len()) as u64,
            );
        }
        let left = self.queue.len() + self.sent.len();
        if left > 0 {
            error!(broker = %self.addr, alerts = left, "Alert output stopped with alerts unsent (they are in the alerts tables).");
        }
        info!(broker = %self.addr, "MQTT alert output stopped.");
    }

    /// Sleeps `d` while still queueing alerts; true when the drain deadline passed.
    async fn pause(
        &mut self,
        d: Duration,
        rx: &mut mpsc::Receiver<LiveAlert>,
        deadline: &mut Option<Instant>,
    ) -> bool {
        let wake = Instant::now() + d;
        loop {
            let until = match *deadline {
                Some(dl) if dl < wake => dl,
                _ => wake,
            };
            tokio::select! {
                _ = tokio::time::sleep_until(until) => return deadline.is_some_and(|dl| dl <= Instant::now()),
                a = rx.recv(), if deadline.is_none() => match a {
                    Some(a) => {
                        Self::refresh(&mut self.reload, &mut self.cfg, &mut self.queue, &self.stats);
                        let m = Self::render(&self.cfg.prefix, &self.venue_id, &self.gateway_id, a);
                        Self::enqueue(&mut self.queue, self.cfg.capacity, self.cfg.drop_oldest, &self.stats, &mut self.drop_log, m);
                    }
                    None if self.queue.is_empty() && self.sent.is_empty() => return true,
                    None => *deadline = Some(Instant::now() + SHUTDOWN_DRAIN),
                },
            }
        }
    }

    fn enqueue(
        queue: &mut VecDeque<Message>,
        capacity: usize,
        drop_oldest: bool,
        stats: &SourceStats,
        log: &mut LogLimit,
        m: Message,
    ) {
        if queue.len() >= capacity {
            SourceStats::inc(&stats.alerts_dropped);
            if let Some(n) = log.allow() {
                warn!(dropped = n, capacity, "Alert queue full (broker away?); alerts dropped from MQTT output (they are in the alerts tables).");
            }
            if !drop_oldest {
                return;
            }
            queue.pop_front();
        }
        queue.push_back(m);
    }

    fn flush(
        client: &AsyncClient,
        queue: &mut VecDeque<Message>,
        sent: &mut VecDeque<(Option<u16>, Message)>,
    ) {
        while sent.len() < WINDOW {
            let Some(m) = queue.pop_front() else { break };
            match client.try_publish(m.topic.clone(), QoS::AtLeastOnce, false, m.payload.clone()) {
                Ok(()) => sent.push_back((None, m)),
                Err(_) => {
                    queue.push_front(m);
                    break;
                }
            }
        }
    }

    fn render(prefix: &str, venue: &str, gateway: &str, a: LiveAlert) -> Message {
        let (topic, value) = match a {
            LiveAlert::ZScore(a) => (
                format!("{prefix}/{}/{}", a.sensor, a.device_id),
                serde_json::json!({
                    "alert_id": a.alert_id,
                    "venue_id": venue,
                    "gateway_id": gateway,
                    "sensor": a.sensor.as_str(),
                    "device_id": a.device_id,
                    "metric": a.metric,
                    "value": a.value,
                    "z_score": a.z_score,
                    "baseline_mean": a.baseline.mean,
                    "baseline_std": a.baseline.std,
                    "baseline_count": a.baseline.count,
                    "match_id": a.match_id,
                    "event_time": format_rfc3339(a.event_time),
                    "detected_at": format_rfc3339(a.detected_at),
                }),
            ),
            LiveAlert::Fatigue(f) => (
                format!("{prefix}/fatigue/{}", f.player_id),
                serde_json::json!({
                    "alert_id": f.alert_id,
                    "venue_id": venue,
                    "gateway_id": gateway,
                    "match_id": f.match_id,
                    "player_id": f.player_id,
                    "player_name": f.player_name,
                    "window_start": format_rfc3339(f.window_start),
                    "window_end": format_rfc3339(f.window_end),
                    "heart_rate_mean": f.heart_rate_mean,
                    "baseline_mean": f.finding.baseline_mean,
                    "baseline_std": f.finding.baseline_std,
                    "baseline_windows": f.finding.baseline_windows,
                }),
            ),
        };
        Message {
            topic,
            payload: value.to_string().into_bytes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SensorKind;
    use crate::pipeline::detect::stats::Baseline;
    use crate::pipeline::fatigue::FatigueFinding;
    use crate::pipeline::rows::{AlertRecord, FatigueRecord};
    use crate::tables::TableId;
    use std::collections::BTreeSet;

    fn zscore() -> LiveAlert {
        LiveAlert::ZScore(AlertRecord {
            alert_id: "v/generic/env-1/temp/1".into(),
            sensor: SensorKind::Generic,
            device_id: "env-1".into(),
            metric: "temp".into(),
            value: 95.0,
            z_score: 12.5,
            baseline: Baseline {
                mean: 20.0,
                std: 0.5,
                count: 25,
            },
            match_id: 3,
            event_time: 1_764_444_600_250_000,
            detected_at: 1_764_444_601_000_000,
        })
    }

    fn fatigue() -> LiveAlert {
        LiveAlert::Fatigue(FatigueRecord {
            alert_id: "v/fatigue/3/7/1".into(),
            match_id: 3,
            player_id: 7,
            player_name: None,
            window_start: 1_764_444_600_000_000,
            window_end: 1_764_444_660_000_000,
            heart_rate_mean: 171.0,
            finding: FatigueFinding {
                baseline_mean: 150.0,
                baseline_std: 4.0,
                baseline_windows: 3,
            },
        })
    }

    fn keys(m: &Message) -> BTreeSet<String> {
        let v: serde_json::Value = serde_json::from_slice(&m.payload).unwrap();
        v.as_object().unwrap().keys().cloned().collect()
    }

    fn columns(t: TableId) -> BTreeSet<String> {
        t.columns().iter().map(|c| c.name.clone()).collect()
    }

    #[test]
    fn zscore_alert_json_has_the_alerts_table_columns_and_its_topic() {
        let m = AlertPublisher::render("site/alerts", "v", "gw", zscore());
        assert_eq!(m.topic, "site/alerts/generic/env-1");
        assert_eq!(keys(&m), columns(TableId::Alerts));
        let v: serde_json::Value = serde_json::from_slice(&m.payload).unwrap();
        assert_eq!(v["event_time"], "2025-11-29T19:30:00.250000Z");
        assert_eq!(v["baseline_count"], 25);
    }

    #[test]
    fn fatigue_alert_json_has_the_fatigue_table_columns_and_its_topic() {
        let m = AlertPublisher::render("site/alerts", "v", "gw", fatigue());
        assert_eq!(m.topic, "site/alerts/fatigue/7");
        assert_eq!(keys(&m), columns(TableId::FatigueAlerts));
        let v: serde_json::Value = serde_json::from_slice(&m.payload).unwrap();
        assert!(v["player_name"].is_null());
    }

    #[test]
    fn full_queue_drops_the_oldest_or_the_newest_as_configured_and_counts() {
        for (drop_oldest, kept) in [(true, ["b", "c"]), (false, ["a", "b"])] {
            let stats = SourceStats::default();
            let mut log = LogLimit::new(Duration::from_secs(10));
            let mut q = VecDeque::new();
            for t in ["a", "b", "c"] {
                let m = Message {
                    topic: t.into(),
                    payload: vec![],
                };
                AlertPublisher::enqueue(&mut q, 2, drop_oldest, &stats, &mut log, m);
            }
            let topics: Vec<&str> = q.iter().map(|m| m.topic.as_str()).collect();
            assert_eq!(topics, kept);
            assert_eq!(SourceStats::get(&stats.alerts_dropped), 1);
        }
    }
}
