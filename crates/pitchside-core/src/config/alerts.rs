//! `[alerts]`: the real-time alert output, with an `[alerts.mqtt]` broker
//! table of the same shape as a source's.

use super::broker::{topic_ok, MqttBroker};
use super::error::Problems;
use crate::util::bounded::WhenFull;

crate::config::section! {
    /// `[alerts]`: real-time alert output.
    #[serde(deny_unknown_fields)]
    pub struct AlertsSection {
        /// Alerts go to `{topic_prefix}/{sensor}/{device_id}` and
        /// `{topic_prefix}/fatigue/{player_id}`.
        topic_prefix: String = "pitchside/alerts".into(),
        /// Alerts held while the broker is away, at least 1.
        queue: u32 = 10_000,
        /// Which alert is dropped when the queue is full: `drop-oldest` or `drop-newest`.
        when_full: String = WhenFull::DropOldest.as_str().into(),
        /// Alerts handed to the broker and not yet acknowledged, at most (1 to
        /// 65535); after a reconnect these are sent again first.
        max_inflight: u32 = 64,
        /// Alerts on their way from the pipeline to the output; past it the
        /// pipeline drops them, counted in `pitchside_alerts_dropped_total`; it
        /// never waits.
        input_queue: u32 = 4096,
        /// Per key (device and metric, player, or device for device events),
        /// at most one notification per this long on the outputs people read:
        /// log lines, MQTT and the console ("0s": off). The `alerts` table
        /// still holds every alert.
        notify_cooldown: String [Duration] = "0s".into(),
        /// `[alerts.mqtt]`: the broker to publish to; absent means no MQTT output.
        #[serde(skip_serializing_if = "Option::is_none")]
        mqtt: Option<MqttBroker> = None,
    }
}

/// `[alerts]`, checked: capacities as `usize`, the queue rule typed.
#[derive(Debug, Clone)]
pub struct AlertsConfig {
    /// Topic prefix.
    pub topic_prefix: String,
    /// Alerts held while the broker is away.
    pub queue: usize,
    /// Which alert a full queue drops.
    pub when_full: WhenFull,
    /// Unacknowledged alerts at most.
    pub max_inflight: usize,
    /// Capacity of the pipeline → output channel.
    pub input_queue: usize,
    /// At most one notification per key per this long, µs (0: off).
    pub notify_cooldown: crate::model::Micros,
    /// The broker; `None` means no MQTT output.
    pub mqtt: Option<MqttBroker>,
}

impl AlertsSection {
    /// Checks every key and types the queue rule.
    pub fn validate(&self) -> Result<AlertsConfig, Vec<String>> {
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
        let when_full = WhenFull::parse(&self.when_full)
            .map_err(|e| p.push(format!("alerts.when_full: {e}")))
            .unwrap_or_default();
        p.check((1..=65_535).contains(&self.max_inflight), || {
            format!("alerts.max_inflight: {} must be 1-65535", self.max_inflight)
        });
        p.check(self.input_queue != 0, || {
            "alerts.input_queue: must be at least 1".into()
        });
        let notify_cooldown = p.duration("alerts.notify_cooldown", &self.notify_cooldown, 0);
        p.finish(AlertsConfig {
            topic_prefix: self.topic_prefix.clone(),
            queue: self.queue as usize,
            when_full,
            max_inflight: self.max_inflight as usize,
            input_queue: self.input_queue as usize,
            notify_cooldown,
            mqtt: self.mqtt.clone(),
        })
    }
}
