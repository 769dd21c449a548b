//! Config sections for real sources and the real-time alert output:
//! `[[sources.serial]]`, `[[sources.mqtt]]` (with a `broker` table) and
//! `[alerts]` (with an `[alerts.mqtt]` broker table of the same shape).

use crate::model::SensorKind;
use crate::util::time::MICROS_PER_SEC;
use crate::util::units::parse_duration;
use serde::{Deserialize, Serialize};

/// `[[sources.serial]]`: one serial port, one JSON event per line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SerialSection {
    /// Device path, e.g. `/dev/ttyUSB0` or `/dev/serial/by-id/…` (required).
    pub path: String,
    /// Baud rate (default 115200).
    #[serde(default = "default_baud")]
    pub baud: u32,
    /// Data bits: 5, 6, 7 or 8 (default 8).
    #[serde(default = "default_data_bits")]
    pub data_bits: u8,
    /// `none` (default), `odd` or `even`.
    #[serde(default = "default_parity")]
    pub parity: String,
    /// 1 (default) or 2.
    #[serde(default = "default_stop_bits")]
    pub stop_bits: u8,
    /// Sensor kind of lines without a `sensor` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
    /// Longest line in bytes (default `limits.max_event_bytes`); longer lines
    /// are rejected as `too_large` and the reader skips to the next newline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_line_bytes: Option<u32>,
}

fn default_baud() -> u32 {
    115_200
}
fn default_data_bits() -> u8 {
    8
}
fn default_parity() -> String {
    "none".into()
}
fn default_stop_bits() -> u8 {
    1
}

/// An MQTT broker connection, used by `[[sources.mqtt]]` (as its `broker`
/// table) and by `[alerts.mqtt]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MqttBroker {
    /// Host name or IP address (required).
    pub host: String,
    /// Port (default 1883, or 8883 with `tls`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Client id; keep it stable, the broker keeps the session under it
    /// (default `pitchside-{venue}-{gateway}`, `…-alerts` for the alert output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// User name, if the broker wants one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Name of an environment variable holding the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    /// Path of a file holding the password (one trailing newline is ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<String>,
    /// MQTT keep-alive (default "30s"); a connection silent for twice this is dropped and re-made.
    #[serde(default = "default_keep_alive")]
    pub keep_alive: String,
    /// TLS; absent means plain TCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<MqttTls>,
}

fn default_keep_alive() -> String {
    "30s".into()
}

/// `tls` of a broker: rustls with the CA given (the system roots are not used).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MqttTls {
    /// PEM file of the CA certificate(s) that signed the broker's certificate.
    pub ca_file: String,
    /// PEM client certificate chain, for brokers that require client certificates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_cert: Option<String>,
    /// PEM private key of `client_cert`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_key: Option<String>,
}

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

/// One topic filter and the sensor kind of its messages.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MqttSubscription {
    /// MQTT topic filter, `+` and `#` allowed (`venue/wearable/#`).
    pub topic: String,
    /// Sensor kind for messages without a `sensor` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
}

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

fn kind_ok(key: &str, s: &Option<String>, out: &mut Vec<String>) {
    if let Some(s) = s {
        if SensorKind::parse(s).is_none() {
            out.push(format!(
                "{key}: {s:?} is not one of wearable, pitch, crowd, generic"
            ));
        }
    }
}

fn topic_ok(s: &str, wildcards: bool) -> bool {
    !s.is_empty()
        && s.len() <= 1024
        && !s.contains('\0')
        && (if wildcards {
            rumqttc::valid_filter(s)
        } else {
            !s.contains(['+', '#'])
        })
}

/// Checks a broker table; every problem names its key under `key`.
pub fn check_broker(key: &str, b: &MqttBroker, out: &mut Vec<String>) {
    if b.host.is_empty() {
        out.push(format!("{key}.host: must name the broker"));
    }
    if b.port == Some(0) {
        out.push(format!("{key}.port: must be 1-65535"));
    }
    if let Some(id) = &b.client_id {
        if id.is_empty() || id.len() > 128 {
            out.push(format!("{key}.client_id: must be 1-128 characters"));
        }
    }
    if b.username.is_none() && (b.password_env.is_some() || b.password_file.is_some()) {
        out.push(format!(
            "{key}.username: required with a password (MQTT 3.1.1)"
        ));
    }
    if b.password_env.is_some() && b.password_file.is_some() {
        out.push(format!(
            "{key}: set password_env or password_file, not both"
        ));
    }
    match parse_duration(&b.keep_alive) {
        Ok(d) if (MICROS_PER_SEC..=65_535 * MICROS_PER_SEC).contains(&d) => {}
        Ok(_) => out.push(format!(
            "{key}.keep_alive: {:?} must be between 1s and 65535s",
            b.keep_alive
        )),
        Err(e) => out.push(format!("{key}.keep_alive: {e}")),
    }
    if let Some(t) = &b.tls {
        if t.ca_file.is_empty() {
            out.push(format!("{key}.tls.ca_file: must name a PEM file"));
        }
        if t.client_cert.is_some() != t.client_key.is_some() {
            out.push(format!("{key}.tls: client_cert and client_key go together"));
        }
    }
}

/// Checks `[[sources.serial]]`, `[[sources.mqtt]]` and `[alerts]`.
pub fn check(
    serial: &[SerialSection],
    mqtt: &[MqttSourceSection],
    alerts: &AlertsSection,
) -> Vec<String> {
    let mut out = Vec::new();
    for (i, s) in serial.iter().enumerate() {
        let key = format!("sources.serial[{i}]");
        if s.path.is_empty() {
            out.push(format!("{key}.path: must name a device"));
        }
        if serial[..i].iter().any(|o| o.path == s.path) {
            out.push(format!("{key}.path: {:?} is configured twice", s.path));
        }
        if !(50..=4_000_000).contains(&s.baud) {
            out.push(format!("{key}.baud: {} must be 50-4000000", s.baud));
        }
        if !(5..=8).contains(&s.data_bits) {
            out.push(format!("{key}.data_bits: {} must be 5-8", s.data_bits));
        }
        if !matches!(s.parity.as_str(), "none" | "odd" | "even") {
            out.push(format!(
                "{key}.parity: {:?} must be none, odd or even",
                s.parity
            ));
        }
        if !matches!(s.stop_bits, 1 | 2) {
            out.push(format!("{key}.stop_bits: {} must be 1 or 2", s.stop_bits));
        }
        kind_ok(&format!("{key}.sensor"), &s.sensor, &mut out);
        if let Some(m) = s.max_line_bytes {
            if !(64..=1 << 20).contains(&m) {
                out.push(format!(
                    "{key}.max_line_bytes: {m} must be between 64 and 1048576"
                ));
            }
        }
    }
    for (i, m) in mqtt.iter().enumerate() {
        let key = format!("sources.mqtt[{i}]");
        check_broker(&format!("{key}.broker"), &m.broker, &mut out);
        if m.subscriptions.is_empty() {
            out.push(format!("{key}.subscriptions: at least one topic filter"));
        }
        for (j, s) in m.subscriptions.iter().enumerate() {
            let k = format!("{key}.subscriptions[{j}]");
            if !topic_ok(&s.topic, true) {
                out.push(format!(
                    "{k}.topic: {:?} is not a valid MQTT topic filter",
                    s.topic
                ));
            }
            kind_ok(&format!("{k}.sensor"), &s.sensor, &mut out);
        }
        if m.max_held == 0 {
            out.push(format!("{key}.max_held: must be at least 1"));
        }
    }
    if let Some(b) = &alerts.mqtt {
        check_broker("alerts.mqtt", b, &mut out);
    }
    if !topic_ok(&alerts.topic_prefix, false) || alerts.topic_prefix.ends_with('/') {
        out.push(format!(
            "alerts.topic_prefix: {:?} must be a topic without wildcards or a trailing '/'",
            alerts.topic_prefix
        ));
    }
    if alerts.queue == 0 {
        out.push("alerts.queue: must be at least 1".into());
    }
    if !matches!(alerts.when_full.as_str(), "drop-oldest" | "drop-newest") {
        out.push(format!(
            "alerts.when_full: {:?} must be \"drop-oldest\" or \"drop-newest\"",
            alerts.when_full
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    const HEAD: &str = "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/o\"\nspool_dir = \"/tmp/s\"\n";

    fn check(extra: &str) -> Result<crate::config::Config, String> {
        crate::config::parse(&format!("{HEAD}{extra}"), "test")
            .map_err(|e| e.to_string())?
            .validate()
            .map_err(|e| e.to_string())
    }

    #[test]
    fn serial_mqtt_and_alert_sections_parse_with_their_defaults() {
        let c = check(
            r#"
[[sources.serial]]
path = "/dev/ttyUSB0"
sensor = "wearable"
[[sources.mqtt]]
broker = { host = "10.0.0.5", username = "gw", password_env = "MQTT_PW" }
subscriptions = [{ topic = "venue/wearable/#", sensor = "wearable" }, { topic = "venue/+/raw" }]
[alerts]
topic_prefix = "venue/alerts"
[alerts.mqtt]
host = "10.0.0.5"
tls = { ca_file = "/etc/pitchside/ca.pem" }
"#,
        )
        .unwrap();
        let s = &c.file.sources.serial[0];
        assert_eq!((s.baud, s.data_bits, s.stop_bits), (115_200, 8, 1));
        assert_eq!(s.parity, "none");
        assert_eq!(c.file.sources.mqtt[0].max_held, 1024);
        assert_eq!(c.file.sources.mqtt[0].broker.keep_alive, "30s");
        assert_eq!(c.file.alerts.when_full, "drop-oldest");
        assert_eq!(c.file.alerts.queue, 10_000);
        // Printed back, it still parses (check-config output).
        let again = crate::config::parse(&c.to_toml(), "printed").unwrap();
        assert_eq!(again.validate().unwrap().file.sources.mqtt.len(), 1);
    }

    #[test]
    fn bad_source_and_alert_values_are_reported_with_their_keys() {
        let err = check(
            r#"
[[sources.serial]]
path = "/dev/ttyUSB0"
baud = 0
parity = "mark"
sensor = "boat"
[[sources.mqtt]]
broker = { host = "", password_env = "X", password_file = "/x", keep_alive = "0s", tls = { ca_file = "/ca", client_cert = "/c" } }
subscriptions = [{ topic = "a/#/b" }]
max_held = 0
[alerts]
topic_prefix = "alerts/#"
when_full = "block"
"#,
        )
        .unwrap_err();
        for key in [
            "sources.serial[0].baud",
            "sources.serial[0].parity",
            "sources.serial[0].sensor",
            "sources.mqtt[0].broker.host",
            "sources.mqtt[0].broker.username",
            "sources.mqtt[0].broker: set password_env or password_file",
            "sources.mqtt[0].broker.keep_alive",
            "sources.mqtt[0].broker.tls: client_cert and client_key",
            "sources.mqtt[0].subscriptions[0].topic",
            "sources.mqtt[0].max_held",
            "alerts.topic_prefix",
            "alerts.when_full",
        ] {
            assert!(err.contains(key), "missing {key} in:\n{err}");
        }
    }

    #[test]
    fn a_password_in_the_toml_is_refused() {
        let err = check("[[sources.mqtt]]\nbroker = { host = \"h\", username = \"u\", password = \"p\" }\nsubscriptions = [{ topic = \"t\" }]\n").unwrap_err();
        assert!(err.contains("password"), "{err}");
    }
}
