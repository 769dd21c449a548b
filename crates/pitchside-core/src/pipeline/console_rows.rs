//! The rows of the console tables (SPEC §10): `device_events` (a device
//! went silent or came back) and `alert_acks` (someone has seen an alert).

use crate::model::{Micros, SensorKind};
use crate::tables::{Stamp, TableBuffer};
use std::collections::{HashMap, VecDeque};

/// What happened to a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceEventKind {
    /// Nothing arrived for `health.silent_after`.
    Silent,
    /// Its first input after being silent.
    Back,
}

impl DeviceEventKind {
    /// The `event` column's text.
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceEventKind::Silent => "silent",
            DeviceEventKind::Back => "back",
        }
    }
}

/// A device event, as one `device_events` row.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceEventRecord {
    /// Sensor kind.
    pub sensor: SensorKind,
    /// Device.
    pub device_id: String,
    /// The player it was last seen on (wearables).
    pub player_id: Option<i64>,
    /// The zone it was last seen in (crowd sensors).
    pub zone_id: Option<String>,
    /// Silent or back.
    pub event: DeviceEventKind,
    /// Arrival time of its last input before this event.
    pub last_seen: Micros,
    /// When the event was raised (arrival clock).
    pub at: Micros,
}

/// An acknowledgement of an alert, as one `alert_acks` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckRecord {
    /// The alert acknowledged (`alerts.alert_id` or `fatigue_alerts.alert_id`).
    pub alert_id: String,
    /// Who acknowledged it, as they typed it.
    pub by: String,
    /// Their note, if any.
    pub note: Option<String>,
    /// When (wall clock).
    pub acked_at: Micros,
}

/// Acks remembered to make a repeated one (a client retrying after a 503 or
/// a lost answer) a no-op; past this, the oldest are forgotten first.
pub const ACKS_REMEMBERED: usize = 4096;

/// The acks written so far, by `(alert_id, by)`: one person acks one alert
/// once, however often the request is sent.
#[derive(Debug, Default)]
pub struct AckLedger {
    written: HashMap<(String, String), AckRecord>,
    order: VecDeque<(String, String)>,
}

impl AckLedger {
    /// The ack `by` wrote for `alert_id`, if remembered.
    pub fn get(&self, alert_id: &str, by: &str) -> Option<&AckRecord> {
        self.written.get(&(alert_id.to_string(), by.to_string()))
    }

    /// Remembers `a`; `false` (and nothing changes) when its pair is known.
    pub fn insert(&mut self, a: &AckRecord) -> bool {
        let key = (a.alert_id.clone(), a.by.clone());
        if self.written.contains_key(&key) {
            return false;
        }
        if self.order.len() >= ACKS_REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.written.remove(&old);
            }
        }
        self.order.push_back(key.clone());
        self.written.insert(key, a.clone());
        true
    }
}

impl Stamp {
    /// Appends a `device_events` row.
    pub fn device_event(&self, buf: &mut TableBuffer, d: &DeviceEventRecord) {
        buf.row(d.at)
            .str(&self.venue_id)
            .str(&self.gateway_id)
            .str(d.sensor.as_str())
            .str(&d.device_id)
            .opt_i64(d.player_id)
            .opt_str(d.zone_id.as_deref())
            .str(d.event.as_str())
            .i64(d.last_seen)
            .i64(d.at)
            .finish();
    }

    /// Appends an `alert_acks` row.
    pub fn ack(&self, buf: &mut TableBuffer, a: &AckRecord) {
        buf.row(a.acked_at)
            .str(&self.venue_id)
            .str(&self.gateway_id)
            .str(&a.alert_id)
            .str(&a.by)
            .opt_str(a.note.as_deref())
            .i64(a.acked_at)
            .finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(alert_id: &str, by: &str, at: Micros) -> AckRecord {
        AckRecord {
            alert_id: alert_id.into(),
            by: by.into(),
            note: None,
            acked_at: at,
        }
    }

    #[test]
    fn a_repeated_ack_by_the_same_person_is_known_and_another_person_is_not() {
        let mut l = AckLedger::default();
        assert!(l.insert(&ack("a/1", "Dr Khan", 10)));
        assert!(!l.insert(&ack("a/1", "Dr Khan", 20)));
        assert_eq!(l.get("a/1", "Dr Khan").map(|a| a.acked_at), Some(10));
        assert!(l.insert(&ack("a/1", "Physio", 30)));
        assert!(l.get("a/2", "Dr Khan").is_none());
    }

    #[test]
    fn the_oldest_acks_are_forgotten_past_the_bound() {
        let mut l = AckLedger::default();
        for i in 0..=ACKS_REMEMBERED {
            assert!(l.insert(&ack(&i.to_string(), "x", 0)));
        }
        assert!(l.get("0", "x").is_none());
        assert!(l.get("1", "x").is_some());
        assert_eq!(l.order.len(), ACKS_REMEMBERED);
    }
}
