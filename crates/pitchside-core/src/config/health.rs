//! `[health]`: device health (SPEC §10). A device that has sent at least
//! once and then nothing for `silent_after` of arrival time is `silent`;
//! its next input makes it `back`.

use super::error::Problems;
use crate::model::Micros;
use crate::util::time::MICROS_PER_SEC;

crate::config::section! {
    /// `[health]`.
    #[serde(deny_unknown_fields)]
    pub struct HealthSection {
        /// Arrival-time silence after which a device is `silent`, at least 1s.
        silent_after: String [Duration] = "15s".into(),
        /// Devices tracked at most; past it the least recently seen is
        /// forgotten, counted.
        max_devices: u32 = 10_000,
    }
}

/// `[health]`, checked: what device health runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
