//! `[alerts]`: the real-time alert output, with an `[alerts.mqtt]` broker
//! table of the same shape as a source's.

use super::broker::{self, topic_ok, MqttBroker};
use super::error::Problems;
use super::schema::keys::{k, Key, Ty, U32};
use serde::{Deserialize, Serialize};

/// `[alerts]`: real-time alert output.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertsSection {
    /// Alerts go to `{topic_prefix}/{sensor}/{device_id}` and
    /// `{topic_prefix}/fatigue/{player_id}` (default "pitchside/alerts").
    #[serde(default = "default_topic_prefix")]
    pub topic_prefix: String,
    /// Alerts held while the broker is away (default 10000).
    #[serde(default = "default_alert_queue")]
    pub queue: u32,
    /// Which alert is dropped when the queue is full: `drop-oldest` (default) or `drop-newest`.
    #[serde(default = "default_when_full")]
    pub when_full: String,
    /// `[alerts.mqtt]`: the broker to publish to; absent means no MQTT output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mqtt: Option<MqttBroker>,
}

impl Default for AlertsSection {
    fn default() -> Self {
        AlertsSection {
            topic_prefix: default_topic_prefix(),
            queue: default_alert_queue(),
            when_full: default_when_full(),
            mqtt: None,
        }
    }
}

fn default_topic_prefix() -> String {
    "pitchside/alerts".into()
}
fn default_alert_queue() -> u32 {
    10_000
}
fn default_when_full() -> String {
    "drop-oldest".into()
}

/// The keys of `[alerts]`.
pub(super) const KEYS: &[Key] = &[
    k("topic_prefix", Ty::Text),
    k("queue", U32),
    k("when_full", Ty::Text),
    k("mqtt", Ty::Table(broker::KEYS)),
];

impl AlertsSection {
    /// Checks every key. The alert output takes the section as it is
    /// (its settings are reloadable), so the checked form is the section.
    pub fn validate(&self) -> Result<AlertsSection, Vec<String>> {
        let mut p = Problems::default();
        if let Some(b) = &self.mqtt {
            b.check("alerts.mqtt", &mut p);
        }
        p.check(
            topic_ok(&self.topic_prefix, false) && !self.topic_prefix.ends_with('/'),
            || {
                format!(
                    "alerts.topic_prefix: {:?} must be a topic without wildcards or a trailing '/'",
                    self.topic_prefix
                )
            },
        );
        p.check(self.queue != 0, || {
            "alerts.queue: must be at least 1".into()
        });
        p.check(
            matches!(self.when_full.as_str(), "drop-oldest" | "drop-newest"),
            || {
                format!(
                    "alerts.when_full: {:?} must be \"drop-oldest\" or \"drop-newest\"",
                    self.when_full
                )
            },
        );
        p.finish(self.clone())
    }
}
