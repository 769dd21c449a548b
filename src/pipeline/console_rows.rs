//! The rows of the console tables (SPEC §10): `device_events` (a device
//! went silent or came back) and `alert_acks` (someone has seen an alert).

use crate::model::{Micros, SensorKind};
use crate::tables::{Stamp, TableBuffer};

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
