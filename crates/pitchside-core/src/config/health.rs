//! `[health]`: device health (SPEC §10). A device that has sent at least
//! once and then nothing for `silent_after` of arrival time is `silent`;
//! its next input makes it `back`.

use super::error::Problems;
use super::schema::keys::{k, Key, Ty, U32};
use crate::model::Micros;
use crate::util::time::MICROS_PER_SEC;
use serde::{Deserialize, Serialize};

/// `[health]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HealthSection {
    /// Arrival-time silence after which a device is `silent` (default "15s").
    pub silent_after: String,
    /// Devices tracked at most (default 10000); past it the least recently
    /// seen is forgotten, counted.
    pub max_devices: u32,
}

impl Default for HealthSection {
    fn default() -> Self {
        HealthSection {
            silent_after: "15s".into(),
            max_devices: 10_000,
        }
    }
}

/// The keys of `[health]`.
pub(super) const KEYS: &[Key] = &[k("silent_after", Ty::Duration), k("max_devices", U32)];

/// `[health]`, checked.
#[derive(Debug, Clone)]
pub struct HealthConfig {
    /// Silence that makes a device `silent`, µs of arrival time.
    pub silent_after: Micros,
    /// Devices tracked at most.
    pub max_devices: usize,
}

impl HealthSection {
    /// Checks every key.
    pub fn validate(&self) -> Result<HealthConfig, Vec<String>> {
        let mut p = Problems::default();
        let silent_after = p.duration("health.silent_after", &self.silent_after, MICROS_PER_SEC);
        p.check(self.max_devices != 0, || {
            "health.max_devices: must be at least 1".into()
        });
        p.finish(HealthConfig {
            silent_after,
            max_devices: self.max_devices as usize,
        })
    }
}
