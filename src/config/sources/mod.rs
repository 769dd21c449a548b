//! `[sources.*]`: where events come from — the built-in simulator, serial
//! ports and MQTT subscriptions.

pub mod mqtt;
pub mod serial;
pub mod simulator;

use crate::config::error::Problems;
use crate::config::schema::keys::{k, Key, Ty};
use mqtt::MqttSourceSection;
use serde::{Deserialize, Serialize};
use serial::SerialSection;
use simulator::SimulatorSection;

/// `[sources]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourcesSection {
    /// `[sources.simulator]`: the built-in simulator, off unless present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub simulator: Option<SimulatorSection>,
    /// `[[sources.serial]]`: serial ports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub serial: Vec<SerialSection>,
    /// `[[sources.mqtt]]`: MQTT broker subscriptions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mqtt: Vec<MqttSourceSection>,
}

/// The keys of `[sources]`.
pub(super) const KEYS: &[Key] = &[
    k("simulator", Ty::Table(simulator::KEYS)),
    k("serial", Ty::Tables(serial::KEYS)),
    k("mqtt", Ty::Tables(mqtt::KEYS)),
];

impl SourcesSection {
    /// Checks every source. Each source is opened from its section as it
    /// is, so the checked form is the section.
    pub fn validate(&self) -> Result<SourcesSection, Vec<String>> {
        let mut p = Problems::default();
        if let Some(s) = &self.simulator {
            s.check(&mut p);
        }
        for (i, s) in self.serial.iter().enumerate() {
            s.check(&format!("sources.serial[{i}]"), &self.serial[..i], &mut p);
        }
        for (i, m) in self.mqtt.iter().enumerate() {
            m.check(&format!("sources.mqtt[{i}]"), &mut p);
        }
        p.finish(self.clone())
    }
}

#[cfg(test)]
mod tests;
