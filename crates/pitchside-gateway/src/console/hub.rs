//! The console's shared state: the [`Doc`], the open event streams, and the
//! numbering of events. Every event goes to every stream through the
//! stream's own queue ([`super::queue`]: events bounded in bytes, one
//! waiting `state` replaced by a newer one); a stream that falls behind is
//! dropped (counted, logged), so a slow client never slows anyone else and
//! never holds more than its bound.
//!
//! Behind one `Mutex`, held only to update or render, never across an
//! `.await`; the pipeline never takes it (it feeds the console through a
//! channel, see [`super::feed`]).

use super::doc::{ack_json, alert_event, Doc};
use super::queue::{Behind, Pushed, Receiver, Shared};
use crate::model::Micros;
use crate::pipeline::console_rows::AckRecord;
use crate::pipeline::load::PlayerLoadStatus;
use crate::pipeline::{DeviceStatus, LiveAlert};
use crate::telemetry::{ConsoleStats, MetricsSnapshot};
use crate::util::log_limit::LogLimiter;
use bytes::Bytes;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// One open event stream.
struct Client {
    queue: Arc<Shared>,
    /// Cancelled when the client is dropped: closes its connection even
    /// while a write to it is stuck.
    kick: CancellationToken,
    peer: std::net::SocketAddr,
}

/// Why a stream was not opened.
#[derive(Debug, PartialEq, Eq)]
pub struct TooManyClients;

/// The console's state, shared by its HTTP handlers and its feed task.
pub struct Hub {
    doc: Doc,
    clients: Vec<Client>,
    max_clients: usize,
    queue_bytes: usize,
    seq: u64,
    stats: Arc<ConsoleStats>,
    /// What `/metrics` shows, for the gateway part of the doc.
    snapshot: Arc<Mutex<MetricsSnapshot>>,
    drop_log: LogLimiter,
    replace_log: LogLimiter,
}

/// The hub, shared.
pub type SharedHub = Arc<Mutex<Hub>>;

impl Hub {
    /// A hub with no clients: at most `max_clients` streams, each queueing
    /// at most `queue_bytes` of events.
    pub fn new(
        doc: Doc,
        (max_clients, queue_bytes): (usize, usize),
        stats: Arc<ConsoleStats>,
        snapshot: Arc<Mutex<MetricsSnapshot>>,
    ) -> Hub {
        Hub {
            doc,
            clients: Vec::new(),
            max_clients,
            queue_bytes,
            seq: 0,
            stats,
            snapshot,
            drop_log: LogLimiter::new(10_000_000),
            replace_log: LogLimiter::new(10_000_000),
        }
    }

    /// The state doc now, as JSON.
    pub fn state(&self, now: Micros) -> Value {
        // The lock is held only to clone a small snapshot.
        let m = self.snapshot.lock().map(|g| g.clone()).unwrap_or_default();
        self.doc.render(now, &m)
    }

    /// One player's detail, as JSON.
    pub fn player(&self, player_id: i64) -> Option<Value> {
        self.doc.player(player_id)
    }

    /// Opens an event stream for `peer`: its queue, which starts with the
    /// state doc. Refused past `max_clients`.
    pub fn subscribe(
        &mut self,
        peer: std::net::SocketAddr,
        kick: CancellationToken,
        now: Micros,
    ) -> Result<Receiver, TooManyClients> {
        self.clients.retain(|c| !c.queue.is_closed());
        if self.clients.len() >= self.max_clients {
            self.count_clients();
            return Err(TooManyClients);
        }
        let (queue, rx) = Shared::new(self.queue_bytes);
        let first = self.message("state", &self.state(now));
        // A fresh queue takes its first state.
        let _ = queue.push(|q| q.state(self.seq, first));
        self.clients.push(Client { queue, kick, peer });
        self.count_clients();
        Ok(rx)
    }

    fn count_clients(&self) {
        ConsoleStats::set(&self.stats.clients, self.clients.len() as u64);
    }

    /// The next SSE message: `id: {seq}`, `event: {event}`, `data: {json}`.
    fn message(&mut self, event: &str, data: &Value) -> Bytes {
        self.seq += 1;
        // Compact JSON has no newline, so one `data:` line holds it.
        Bytes::from(format!(
            "id: {}\nevent: {event}\ndata: {data}\n\n",
            self.seq
        ))
    }

    /// Sends an event to every stream (a `state` replacing the one a stream
    /// has not taken yet); drops the streams that fell behind.
    fn broadcast(&mut self, event: &str, data: &Value, now: Micros) {
        if self.clients.is_empty() {
            return;
        }
        let msg = self.message(event, data);
        let (id, is_state) = (self.seq, event == "state");
        let mut dropped = Vec::new();
        let mut replaced = 0;
        self.clients.retain(|c| {
            if c.queue.is_closed() {
                return false;
            }
            let pushed = c.queue.push(|q| match is_state {
                true => q.state(id, msg.clone()),
                false => q.event(id, msg.clone()),
            });
            match pushed {
                Ok(p) => {
                    replaced += u64::from(p == Pushed::Replaced);
                    true
                }
                Err(why) => {
                    c.kick.cancel();
                    dropped.push((c.peer, why));
                    false
                }
            }
        });
        if replaced > 0 {
            self.stats
                .states_replaced
                .fetch_add(replaced, std::sync::atomic::Ordering::Relaxed);
            if let Some(held_back) = self.replace_log.allow(now) {
                tracing::debug!(replaced, held_back,
                    "Console state event replaced, unsent, by a newer one: a client reads slowly (counted in pitchside_console_states_replaced_total).");
            }
        }
        for (peer, why) in dropped {
            ConsoleStats::inc(&self.stats.clients_dropped);
            if let Some(held_back) = self.drop_log.allow(now) {
                let why = match why {
                    Behind::Bytes => "its queued events passed console.client_queue_bytes",
                    Behind::Stalled => "it read none of the last 30 state events",
                };
                tracing::warn!(%peer, held_back, why,
                    "Console client dropped: it fell behind the event stream (counted in pitchside_console_clients_dropped_total); its page reconnects.");
            }
        }
        self.count_clients();
    }

    /// Live alerts from the pipeline: into the feed and out as events.
    pub fn alerts(&mut self, alerts: &[LiveAlert], now: Micros) {
        for a in alerts {
            let (event, data) = alert_event(self.doc.origin(), a);
            self.doc.alert(a, &data);
            self.broadcast(event, &data, now);
        }
    }

    /// The pipeline's device statuses (once a second): the doc takes them,
    /// and every stream gets the `state` event.
    pub fn devices(&mut self, devices: Vec<DeviceStatus>, paused: bool, now: Micros) {
        self.doc.devices(devices, paused);
        if !self.clients.is_empty() {
            let state = self.state(now);
            self.broadcast("state", &state, now);
        }
    }

    /// The players' load (once a second): the doc takes it, for the next
    /// `state` event.
    pub fn load(&mut self, load: Vec<PlayerLoadStatus>) {
        self.doc.load(load);
    }

    /// A durable ack: into the doc and out as the `ack` event (once: a
    /// repeated request's answer is not sent again).
    pub fn ack(&mut self, a: &AckRecord, now: Micros) {
        if self.doc.ack(a) {
            self.broadcast("ack", &ack_json(a, true), now);
        }
    }

    /// Health checks paused or resumed: the `health` event.
    pub fn health(&mut self, paused: bool, now: Micros) {
        self.doc.paused(paused);
        self.broadcast("health", &serde_json::json!({ "paused": paused }), now);
    }
}
