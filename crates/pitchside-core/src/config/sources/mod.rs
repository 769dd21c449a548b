//! `[sources.*]`: where events come from — the built-in simulator, serial
//! ports and MQTT subscriptions.

pub mod check;
pub mod format;
pub mod input;
pub mod mqtt;
pub mod serial;
pub mod simulator;

use crate::config::error::Problems;
use crate::model::SensorKind;
use format::SourceFormat;
use mqtt::MqttSourceSection;
use serial::SerialSection;
use simulator::SimulatorSection;
use std::sync::Arc;

crate::config::section! {
    /// `[sources]`.
    #[serde(deny_unknown_fields)]
    pub struct SourcesSection {
        /// `[sources.simulator]`: the built-in simulator, off unless present.
        #[serde(skip_serializing_if = "Option::is_none")]
        simulator: Option<SimulatorSection> = None,
        /// `[[sources.serial]]`: serial ports.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        serial: Vec<SerialSection> = Vec::new(),
        /// `[[sources.mqtt]]`: MQTT broker subscriptions.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        mqtt: Vec<MqttSourceSection> = Vec::new(),
    }
}

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

/// One named input source (a serial port or an MQTT subscription): how
/// its inputs are decoded.
#[derive(Debug, Clone)]
pub struct InputSource {
    /// Its name (`name`, default `serial:{path}` / `mqtt:{filter}`).
    pub name: Arc<str>,
    /// Its `sensor` key.
    pub sensor: Option<SensorKind>,
    /// Its device format and map; `None` for `pitchside` (SPEC §1).
    pub format: Option<Arc<SourceFormat>>,
}

/// Every configured serial port and MQTT subscription, by name, in config
/// order (serial ports first).
#[derive(Debug, Clone, Default)]
pub struct Inputs(pub Vec<InputSource>);

impl Inputs {
    /// The source named `name`.
    pub fn get(&self, name: &str) -> Option<&InputSource> {
        self.0.iter().find(|s| &*s.name == name)
    }

    /// The device formats, for the decoder.
    pub fn formats(&self) -> Vec<Arc<SourceFormat>> {
        self.0.iter().filter_map(|s| s.format.clone()).collect()
    }

    /// The names, for messages ("the sources are …").
    pub fn names(&self) -> String {
        let names: Vec<&str> = self.0.iter().map(|s| &*s.name).collect();
        if names.is_empty() {
            "none: add a [[sources.serial]] or [[sources.mqtt]]".into()
        } else {
            names.join(", ")
        }
    }
}

impl SourcesSection {
    /// Every serial port and MQTT subscription with its checked format and
    /// map; names must be unique.
    pub fn inputs(&self) -> Result<Inputs, Vec<String>> {
        let mut p = Problems::default();
        let mut out: Vec<InputSource> = Vec::new();
        let mut add = |key: String,
                       name: String,
                       sensor: &Option<String>,
                       filter: Option<&str>,
                       input: &input::InputSection,
                       p: &mut Problems| {
            p.check(!name.is_empty() && name.len() <= 128, || {
                format!("{key}.name: must be 1-128 characters")
            });
            p.check(out.iter().all(|s| *s.name != *name), || {
                format!("{key}.name: {name:?} is the name of another source; names must be unique")
            });
            let sensor = sensor.as_deref().and_then(SensorKind::parse);
            let src = check::Source {
                key: &key,
                name: &name,
                sensor,
                filter,
            };
            let format = check::check(input, &src, p).map(Arc::new);
            out.push(InputSource {
                name: name.as_str().into(),
                sensor,
                format,
            });
        };
        for (i, s) in self.serial.iter().enumerate() {
            add(
                format!("sources.serial[{i}]"),
                s.name(),
                &s.sensor,
                None,
                &s.input,
                &mut p,
            );
        }
        for (i, m) in self.mqtt.iter().enumerate() {
            for (j, s) in m.subscriptions.iter().enumerate() {
                let key = format!("sources.mqtt[{i}].subscriptions[{j}]");
                add(key, s.name(), &s.sensor, Some(&s.topic), &s.input, &mut p);
            }
        }
        p.finish(Inputs(out))
    }
}

#[cfg(test)]
mod tests;
