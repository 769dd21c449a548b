//! `[[sources.mqtt]]`: one broker connection with its subscriptions.

use super::input::InputSection;
use crate::config::broker::{topic_ok, MqttBroker};
use crate::config::error::Problems;

crate::config::section! {
    /// `[[sources.mqtt]]`: one broker connection with its subscriptions.
    #[serde(deny_unknown_fields)]
    pub struct MqttSourceSection {
        /// `[sources.mqtt.broker]`: where to connect.
        broker: MqttBroker,
        /// `[[sources.mqtt.subscriptions]]`: topic filters, subscribed at QoS 1.
        subscriptions: Vec<MqttSubscription>,
        /// Messages held while the pipeline queue is full; past it messages
        /// are dropped and counted. QoS 1 messages stay unacknowledged while
        /// held, so the broker's in-flight window throttles delivery first.
        max_held: u32 = 1024,
    }
}

crate::config::section! {
    /// One topic filter and the sensor kind of its messages. Unknown keys are
    /// found by the schema walker (serde's `deny_unknown_fields` does not work
    /// with the flattened input keys).
    pub struct MqttSubscription {
        /// MQTT topic filter, `+` and `#` allowed (`venue/wearable/#`).
        topic: String,
        /// Sensor kind for messages without a `sensor` field.
        #[serde(skip_serializing_if = "Option::is_none")]
        sensor: Option<String> = None,
        /// Name, device format and map (SPEC §9).
        #[serde(flatten)]
        input: InputSection [Flatten(InputSection::KEYS)] = InputSection::default(),
    }
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
