//! What the console shows of each device: [`DeviceStatus`].

use super::{DeviceHealth, NIL};
use crate::model::{Micros, SensorKind};

/// A device as last heard from, for the console.
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceStatus {
    /// Sensor kind.
    pub sensor: SensorKind,
    /// Device.
    pub device_id: String,
    /// The player it was last seen on (wearables).
    pub player_id: Option<i64>,
    /// That player's name, as last sent.
    pub player_name: Option<String>,
    /// The zone it was last seen in (crowd sensors).
    pub zone_id: Option<String>,
    /// Arrival time of its latest input.
    pub last_seen: Micros,
    /// Silent now.
    pub silent: bool,
    /// (metric, latest value) for each metric of its kind that has had a value.
    pub latest: Vec<(&'static str, f64)>,
}

impl DeviceHealth {
    /// Every device tracked: silent ones first (most recently silenced
    /// first), then the others, most recently seen first. Allocates: for
    /// the console, once a second, never per event.
    pub fn statuses(&self) -> Vec<DeviceStatus> {
        let mut out = Vec::with_capacity(self.tracked());
        for head in [self.silent.head, self.live.head] {
            let mut id = head;
            while id != NIL {
                let d = &self.slots[id as usize];
                out.push(DeviceStatus {
                    sensor: d.sensor,
                    device_id: d.device_id.as_str().to_string(),
                    player_id: d.player_id,
                    player_name: d.player_name.as_ref().map(|n| n.as_str().to_string()),
                    zone_id: d.zone_id.as_ref().map(|z| z.as_str().to_string()),
                    last_seen: d.last_seen,
                    silent: d.silent,
                    latest: (d.sensor.metrics().iter().enumerate())
                        .filter(|(i, _)| d.has & (1 << i) != 0)
                        .map(|(i, &m)| (m, d.latest[i]))
                        .collect(),
                });
                id = d.next;
            }
        }
        out
    }
}
