//! The state document (`GET /api/state`, the SSE `state` event): what the
//! console knows, kept from the alerts, device statuses and acks it is fed,
//! rendered as JSON with the gateway's figures. Pure: time is an argument.

use crate::model::{Micros, SensorKind};
use crate::pipeline::console_rows::AckRecord;
use crate::pipeline::load::PlayerLoadStatus;
use crate::pipeline::{DeviceStatus, LiveAlert};
use crate::sinks::alerts::message::{to_json, Origin};
use crate::telemetry::MetricsSnapshot;
use crate::util::time::format_rfc3339;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};

/// Alerts the feed keeps (newest first); older ones leave it.
pub const ALERTS_KEPT: usize = 200;
/// Alerts whose acks are remembered; the oldest are forgotten first.
pub const ACKED_KEPT: usize = 1000;
/// Acks kept per alert.
pub const ACKS_PER_ALERT: usize = 16;
/// Emitted windows kept per player for its detail.
pub const RECENT_WINDOWS: usize = 10;

/// One alert in the feed.
#[derive(Debug, Clone)]
struct FeedAlert {
    alert_id: String,
    player_id: Option<i64>,
    fatigue: bool,
    /// The MQTT JSON with `kind`, without `acks`.
    json: Map<String, Value>,
}

/// What the console shows, between renders.
#[derive(Debug)]
pub struct Doc {
    origin: Origin,
    silent_after: Micros,
    /// Newest first.
    alerts: VecDeque<FeedAlert>,
    acks: HashMap<String, Vec<AckRecord>>,
    /// Alert ids in `acks`, oldest first.
    acked_order: VecDeque<String>,
    devices: Vec<DeviceStatus>,
    paused: bool,
    /// Each player's load (SPEC §11), by player_id.
    load: Vec<PlayerLoadStatus>,
    /// Each player's last emitted windows, oldest first (at most
    /// [`RECENT_WINDOWS`]), for the players in `load`.
    recent: HashMap<i64, VecDeque<(Micros, crate::pipeline::load::Sums)>>,
}

/// The SSE event type and data of a live alert: `alert` (z-score, with
/// `"kind":"anomaly"`), `fatigue` (with `"kind":"fatigue"`), `load` (a
/// `[[load.rules]]` alert, with `"kind":"load"`) or `device`.
pub fn alert_event(origin: &Origin, a: &LiveAlert) -> (&'static str, Value) {
    let mut v = to_json(origin, a);
    let (event, kind) = match a {
        LiveAlert::ZScore(_) => ("alert", Some("anomaly")),
        LiveAlert::Fatigue(_) => ("fatigue", Some("fatigue")),
        LiveAlert::Load(_) => ("load", Some("load")),
        LiveAlert::Device(_) => ("device", None),
    };
    if let (Some(kind), Some(o)) = (kind, v.as_object_mut()) {
        o.insert("kind".into(), kind.into());
    }
    (event, v)
}

/// The JSON of an ack (`ack` event, the ack endpoint's answer, `acks` in the feed).
pub fn ack_json(a: &AckRecord, with_id: bool) -> Value {
    let mut v = json!({"by": a.by, "note": a.note, "acked_at": format_rfc3339(a.acked_at)});
    if with_id {
        v["alert_id"] = a.alert_id.clone().into();
    }
    v
}

impl Doc {
    /// An empty doc for this gateway.
    pub fn new(origin: Origin, silent_after: Micros) -> Doc {
        Doc {
            origin,
            silent_after,
            alerts: VecDeque::with_capacity(ALERTS_KEPT),
            acks: HashMap::new(),
            acked_order: VecDeque::new(),
            devices: Vec::new(),
            paused: false,
            load: Vec::new(),
            recent: HashMap::new(),
        }
    }

    /// Who the alerts come from.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Puts a z-score or fatigue alert at the top of the feed (device events
    /// are not in the feed: the device list shows them).
    pub fn alert(&mut self, a: &LiveAlert, json: &Value) {
        let (alert_id, player_id, fatigue) = match a {
            LiveAlert::ZScore(z) => (&z.alert_id, z.identity.player_id, false),
            LiveAlert::Fatigue(f) => (&f.alert_id, Some(f.player_id), true),
            LiveAlert::Load(l) => (&l.alert_id, Some(l.player_id), false),
            LiveAlert::Device(_) => return,
        };
        if self.alerts.len() == ALERTS_KEPT {
            self.alerts.pop_back();
        }
        self.alerts.push_front(FeedAlert {
            alert_id: alert_id.clone(),
            player_id,
            fatigue,
            json: json.as_object().cloned().unwrap_or_default(),
        });
    }

    /// Records an ack (of an alert in the feed or not: it may be older);
    /// `false` when that very ack is known (a repeated request).
    pub fn ack(&mut self, a: &AckRecord) -> bool {
        if let Some(list) = self.acks.get_mut(&a.alert_id) {
            if list.contains(a) {
                return false;
            }
            if list.len() < ACKS_PER_ALERT {
                list.push(a.clone());
            }
            return true;
        }
        if self.acked_order.len() == ACKED_KEPT {
            if let Some(old) = self.acked_order.pop_front() {
                self.acks.remove(&old);
            }
        }
        self.acked_order.push_back(a.alert_id.clone());
        self.acks.insert(a.alert_id.clone(), vec![a.clone()]);
        true
    }

    /// The players' load now; a window emitted since the last is added to
    /// the player's recent ones.
    pub fn load(&mut self, load: Vec<PlayerLoadStatus>) {
        let mut recent = std::mem::take(&mut self.recent);
        self.recent = load
            .iter()
            .map(|l| {
                let mut r = recent.remove(&l.player_id).unwrap_or_default();
                if let Some((start, w)) = l.last_window {
                    if r.back().is_none_or(|(s, _)| *s != start) {
                        if r.len() == RECENT_WINDOWS {
                            r.pop_front();
                        }
                        r.push_back((start, w));
                    }
                }
                (l.player_id, r)
            })
            .collect();
        self.load = load;
    }

    /// One player's detail (`GET /api/players/{player_id}`): the load of
    /// its card and its last windows, newest first; `None` for a player
    /// without load.
    pub fn player(&self, player_id: i64) -> Option<Value> {
        let i = self
            .load
            .binary_search_by_key(&player_id, |l| l.player_id)
            .ok()?;
        let l = &self.load[i];
        Some(json!({"player_id": player_id, "player_name": l.name,
                    "load": load_json(l), "recent": recent_json(self.recent.get(&player_id))}))
    }

    /// The latest device statuses and whether health checks are paused.
    pub fn devices(&mut self, mut devices: Vec<DeviceStatus>, paused: bool) {
        // Silent first, then by sensor and id.
        devices.sort_by(|a, b| {
            (!a.silent, a.sensor.index(), &a.device_id).cmp(&(
                !b.silent,
                b.sensor.index(),
                &b.device_id,
            ))
        });
        self.devices = devices;
        self.paused = paused;
    }

    /// Health checks paused or resumed.
    pub fn paused(&mut self, paused: bool) {
        self.paused = paused;
    }

    fn acked(&self, alert_id: &str) -> bool {
        self.acks.contains_key(alert_id)
    }

    /// The whole document at `now`.
    pub fn render(&self, now: Micros, m: &MetricsSnapshot) -> Value {
        let since = |t: Micros| (now - t) as f64 / 1e6;
        let alerts: Vec<Value> = self
            .alerts
            .iter()
            .map(|a| {
                let mut o = a.json.clone();
                let acks = self.acks.get(&a.alert_id).map_or(&[][..], |v| v);
                let acks = acks.iter().map(|k| ack_json(k, false)).collect();
                o.insert("acks".into(), Value::Array(acks));
                Value::Object(o)
            })
            .collect();
        let devices: Vec<Value> = self
            .devices
            .iter()
            .map(|d| {
                json!({"sensor": d.sensor.as_str(), "device_id": d.device_id, "player_id": d.player_id,
                       "zone_id": d.zone_id, "last_seen": format_rfc3339(d.last_seen),
                       "seconds_since": since(d.last_seen), "silent": d.silent})
            })
            .collect();
        let silent = self.devices.iter().filter(|d| d.silent).count();
        json!({
            "venue_id": self.origin.venue_id,
            "gateway_id": self.origin.gateway_id,
            "now": format_rfc3339(now),
            "players": self.players(now),
            "pitch": self.of_kind(SensorKind::Pitch, now, &["ball_speed", "spin_rate"]),
            "crowd": self.of_kind(SensorKind::Crowd, now, &["decibels", "density"]),
            "alerts": alerts,
            "devices": devices,
            "health": {"paused": self.paused, "silent_after_s": self.silent_after as f64 / 1e6,
                       "devices": self.devices.len(), "silent": silent},
            "gateway": gateway(now, m),
        })
    }

    /// One entry per player, by player_id: from the wearables the health
    /// tracker knows, and from alerts in the feed naming a player it does not.
    fn players(&self, now: Micros) -> Vec<Value> {
        let mut by_id: std::collections::BTreeMap<i64, Value> = Default::default();
        for d in self
            .devices
            .iter()
            .filter(|d| d.sensor == SensorKind::Wearable)
        {
            let Some(id) = d.player_id else { continue };
            let mut v = json!({"player_id": id, "player_name": d.player_name, "device_id": d.device_id,
                "last_seen": format_rfc3339(d.last_seen), "seconds_since": (now - d.last_seen) as f64 / 1e6,
                "silent": d.silent});
            v["heart_rate"] = latest(d, "heart_rate");
            by_id.insert(id, v);
        }
        for l in &self.load {
            by_id.entry(l.player_id).or_insert_with(|| {
                json!({"player_id": l.player_id, "player_name": l.name, "device_id": null,
                       "heart_rate": null, "last_seen": null, "seconds_since": null, "silent": false})
            });
        }
        for a in &self.alerts {
            let Some(id) = a.player_id else { continue };
            by_id.entry(id).or_insert_with(|| {
                json!({"player_id": id, "player_name": a.json.get("player_name"),
                       "device_id": a.json.get("device_id"), "heart_rate": null,
                       "last_seen": null, "seconds_since": null, "silent": false})
            });
        }
        for (id, v) in by_id.iter_mut() {
            let open = self
                .alerts
                .iter()
                .filter(|a| a.player_id == Some(*id) && !self.acked(&a.alert_id));
            let (mut count, mut fatigue) = (0, false);
            for a in open {
                count += 1;
                fatigue |= a.fatigue;
            }
            v["open_alerts"] = count.into();
            v["fatigue"] = fatigue.into();
            if let Ok(i) = self.load.binary_search_by_key(id, |l| l.player_id) {
                v["load"] = load_json(&self.load[i]);
                if v["player_name"].is_null() {
                    v["player_name"] = self.load[i].name.clone().into();
                }
            }
        }
        by_id.into_values().collect()
    }

    /// Pitch or crowd devices with the latest value of `metrics`.
    fn of_kind(&self, kind: SensorKind, now: Micros, metrics: &[&str]) -> Vec<Value> {
        let mut out: Vec<&DeviceStatus> =
            self.devices.iter().filter(|d| d.sensor == kind).collect();
        out.sort_by(|a, b| (&a.zone_id, &a.device_id).cmp(&(&b.zone_id, &b.device_id)));
        out.into_iter()
            .map(|d| {
                let mut v = json!({"device_id": d.device_id, "last_seen": format_rfc3339(d.last_seen),
                    "seconds_since": (now - d.last_seen) as f64 / 1e6, "silent": d.silent});
                if kind == SensorKind::Crowd {
                    v["zone_id"] = d.zone_id.clone().into();
                }
                for m in metrics {
                    v[*m] = latest(d, m);
                }
                v
            })
            .collect()
    }
}

/// The words of heart-rate zones 0 (below zone 1) to 5, as Polar names them.
pub const ZONE_NAMES: [&str; 6] = [
    "Resting",
    "Very light",
    "Light",
    "Moderate",
    "Hard",
    "Maximum",
];

/// A player's load for the console's cards: the zone now and the match so
/// far against the target. (The last windows are the player's detail,
/// [`Doc::player`]: every card's would multiply the state sent each second.)
fn load_json(l: &PlayerLoadStatus) -> Value {
    let s = &l.so_far;
    json!({
        "match_id": l.match_id,
        "position": l.position,
        "hr_pct": l.hr_pct,
        "zone": l.zone,
        "zone_name": l.zone.map(|z| ZONE_NAMES[z as usize]),
        "trimp": s.trimp_edwards,
        "target_trimp": l.target_trimp,
        "target_pct": l.target_trimp.filter(|t| *t > 0.0).map(|t| 100.0 * s.trimp_edwards / t),
        "sprints": s.sprints,
        "distance_m": s.distance,
        "hsr_distance_m": s.hsr_distance,
    })
}

/// A player's last windows, newest first.
fn recent_json(recent: Option<&VecDeque<(Micros, crate::pipeline::load::Sums)>>) -> Value {
    recent
        .into_iter()
        .flatten()
        .rev()
        .map(|(start, w)| {
            json!({"window_start": format_rfc3339(*start),
                   "zone_s": (0..5).map(|k| w.zone_s(k)).collect::<Vec<f64>>(),
                   "trimp": w.trimp_edwards(), "distance_m": w.distance,
                   "hsr_distance_m": w.hsr_distance, "sprints": w.sprints})
        })
        .collect()
}

/// The latest value of `metric` on `d`, or null.
fn latest(d: &DeviceStatus, metric: &str) -> Value {
    d.latest
        .iter()
        .find(|(m, _)| *m == metric)
        .map_or(Value::Null, |(_, v)| json!(v))
}

/// Sources, spool, uploads, rate and watermark lag from the metrics snapshot.
fn gateway(now: Micros, m: &MetricsSnapshot) -> Value {
    let p = &m.progress;
    let mut lag = Map::new();
    for k in SensorKind::ALL {
        let v = p.watermarks[k.index()].map_or(Value::Null, |w| json!((now - w) as f64 / 1e6));
        lag.insert(k.as_str().into(), v);
    }
    json!({
        "sources_down": crate::sources::SourceStats::get(&m.sources.sources_down),
        "spool_files": p.spool_files, "spool_bytes": p.spool_bytes,
        "uploaded_files": m.uploaded_files_total, "upload_failures": m.upload_failures_total,
        "last_upload_at": p.last_upload_at.map(format_rfc3339),
        "input_rows_per_second": p.input_rows_per_second,
        "watermark_lag_s": lag,
        "clock_synchronized": !m.counters.clock_unsynchronized,
        "clock_unvouched_events": m.counters.clock_unvouched_events,
    })
}

#[cfg(test)]
mod tests;
