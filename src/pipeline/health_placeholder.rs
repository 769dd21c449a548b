//! PLACEHOLDER (issue 13, helper "console"): stands in for helper "health"'s
//! `src/pipeline/health/` until the merge. The lead deletes this file and its
//! `mod` line in `pipeline/mod.rs`; `DeviceStatus` and the four `Pipeline`
//! methods below then come from the health tracker with the same names.

use crate::model::{Micros, SensorKind};
use crate::pipeline::Pipeline;

/// One device as the console shows it (design13.md §A).
#[derive(Debug, Clone, PartialEq)]
pub struct DeviceStatus {
    /// Sensor kind.
    pub sensor: SensorKind,
    /// Device.
    pub device_id: String,
    /// Player it was last seen on.
    pub player_id: Option<i64>,
    /// That player's name.
    pub player_name: Option<String>,
    /// Zone it was last seen in.
    pub zone_id: Option<String>,
    /// Arrival time of its last input.
    pub last_seen: Micros,
    /// Silent now.
    pub silent: bool,
    /// (metric, latest value) for each metric of its kind that has had a value.
    pub latest: Vec<(&'static str, f64)>,
}

impl Pipeline {
    /// PLACEHOLDER: no devices are tracked yet.
    pub fn device_statuses(&self) -> Vec<DeviceStatus> {
        Vec::new()
    }

    /// PLACEHOLDER: does nothing.
    pub fn pause_health(&mut self, _at: Micros) {}

    /// PLACEHOLDER: does nothing.
    pub fn resume_health(&mut self, _at: Micros) {}

    /// PLACEHOLDER: never paused.
    pub fn health_paused(&self) -> bool {
        false
    }
}
