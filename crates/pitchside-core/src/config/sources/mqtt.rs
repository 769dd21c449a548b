//! `[[sources.mqtt]]`: one broker connection with its subscriptions.

use super::input::{InputSection, INPUT_KEYS};
use crate::config::broker::{self, topic_ok, MqttBroker};
use crate::config::error::Problems;
use crate::config::schema::keys::{join, k, req, Key, Ty, U32};
use serde::{Deserialize, Serialize};

/// `[[sources.mqtt]]`: one broker connection with its subscriptions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MqttSourceSection {
    /// `[sources.mqtt.broker]`: where to connect.
    pub broker: MqttBroker,
    /// `[[sources.mqtt.subscriptions]]`: topic filters, subscribed at QoS 1.
    pub subscriptions: Vec<MqttSubscription>,
    /// Messages held while the pipeline queue is full (default 1024); past it
    /// messages are dropped and counted. QoS 1 messages stay unacknowledged
    /// while held, so the broker's in-flight window throttles delivery first.
    #[serde(default = "default_max_held")]
    pub max_held: u32,
}

fn default_max_held() -> u32 {
    1024
}

/// One topic filter and the sensor kind of its messages. Unknown keys are
/// found by the schema walker (serde's `deny_unknown_fields` does not work
/// with the flattened input keys).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MqttSubscription {
    /// MQTT topic filter, `+` and `#` allowed (`venue/wearable/#`).
    pub topic: String,
    /// Sensor kind for messages without a `sensor` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
    /// Name, device format and map (SPEC §9).
    #[serde(flatten)]
    pub input: InputSection,
}

impl MqttSubscription {
    /// The source's name: `name`, else `mqtt:{topic filter}`.
    pub fn name(&self) -> String {
        self.input
            .name
            .clone()
            .unwrap_or_else(|| format!("mqtt:{}", self.topic))
    }
}

/// The keys of one `[[sources.mqtt]]`.
pub(super) const KEYS: &[Key] = &[
    req("broker", Ty::Table(broker::KEYS)),
    req(
        "subscriptions",
        Ty::Tables(&join::<9>(
            &[req("topic", Ty::Text), k("sensor", Ty::Text)],
            INPUT_KEYS,
        )),
    ),
    k("max_held", U32),
];

impl MqttSourceSection {
    /// Checks one connection (`key` is `sources.mqtt[i]`).
    pub(super) fn check(&self, key: &str, p: &mut Problems) {
        self.broker.check(&format!("{key}.broker"), p);
        p.check(!self.subscriptions.is_empty(), || {
            format!("{key}.subscriptions: at least one topic filter")
        });
        for (j, s) in self.subscriptions.iter().enumerate() {
            let k = format!("{key}.subscriptions[{j}]");
            p.check(topic_ok(&s.topic, true), || {
                format!("{k}.topic: {:?} is not a valid MQTT topic filter", s.topic)
            });
            p.sensor_kind(&format!("{k}.sensor"), &s.sensor);
        }
        p.check(self.max_held != 0, || {
            format!("{key}.max_held: must be at least 1")
        });
    }
}
