//! An MQTT broker table and MQTT topic rules, shared by `[[sources.mqtt]]`
//! (as its `broker` table) and `[alerts.mqtt]`.

use super::error::Problems;
use super::schema::keys::{k, req, Key, Ty, U16};
use crate::util::time::MICROS_PER_SEC;
use crate::util::units::parse_duration;
use serde::{Deserialize, Serialize};

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

/// The keys of a broker table.
pub(super) const KEYS: &[Key] = &[
    req("host", Ty::Text),
    k("port", U16),
    k("client_id", Ty::Text),
    k("username", Ty::Text),
    k("password_env", Ty::Text),
    k("password_file", Ty::Text),
    k("keep_alive", Ty::Duration),
    k(
        "tls",
        Ty::Table(&[
            req("ca_file", Ty::Text),
            k("client_cert", Ty::Text),
            k("client_key", Ty::Text),
        ]),
    ),
];

impl MqttBroker {
    /// Checks the table; every problem names its key under `key`.
    pub(super) fn check(&self, key: &str, p: &mut Problems) {
        let b = self;
        p.check(!b.host.is_empty(), || {
            format!("{key}.host: must name the broker")
        });
        if let Some(problem) = host_problem(&b.host) {
            p.push(format!(
                "{key}.host: {:?} {problem} ({key}.port, {key}.tls)",
                b.host
            ));
        }
        p.check(b.port != Some(0), || format!("{key}.port: must be 1-65535"));
        if let Some(id) = &b.client_id {
            p.check(!id.is_empty() && id.len() <= 128, || {
                format!("{key}.client_id: must be 1-128 characters")
            });
        }
        p.check(
            b.username.is_some() || (b.password_env.is_none() && b.password_file.is_none()),
            || format!("{key}.username: required with a password (MQTT 3.1.1)"),
        );
        p.check(
            b.password_env.is_none() || b.password_file.is_none(),
            || format!("{key}: set password_env or password_file, not both"),
        );
        match parse_duration(&b.keep_alive) {
            Ok(d) if (MICROS_PER_SEC..=65_535 * MICROS_PER_SEC).contains(&d) => {}
            Ok(_) => p.push(format!(
                "{key}.keep_alive: {:?} must be between 1s and 65535s",
                b.keep_alive
            )),
            Err(e) => p.push(format!("{key}.keep_alive: {e}")),
        }
        if let Some(t) = &b.tls {
            p.check(!t.ca_file.is_empty(), || {
                format!("{key}.tls.ca_file: must name a PEM file")
            });
            p.check(t.client_cert.is_some() == t.client_key.is_some(), || {
                format!("{key}.tls: client_cert and client_key go together")
            });
        }
    }
}

/// What is wrong with a broker `host`, which is a name or an address: not
/// a URL (`mqtt://…`), and no port (that is `port`). An IPv6 address, with
/// its colons, is one.
fn host_problem(host: &str) -> Option<&'static str> {
    if host.contains("://") {
        Some("is a URL: write the host alone (host = \"broker.local\"); the port and TLS have keys of their own")
    } else if host.contains(char::is_whitespace) || host.contains('/') {
        Some("must be a host name or an IP address, without spaces or '/'")
    } else if host.contains(':') && host.parse::<std::net::Ipv6Addr>().is_err() {
        Some("has a ':': the port has a key of its own (an IPv6 address goes without brackets)")
    } else {
        None
    }
}

/// Whether `s` is a valid MQTT topic filter (`wildcards`) or topic name.
pub(super) fn topic_ok(s: &str, wildcards: bool) -> bool {
    !s.is_empty()
        && s.len() <= 1024
        && !s.contains('\0')
        && (if wildcards {
            filter_ok(s)
        } else {
            !s.contains(['+', '#'])
        })
}

/// MQTT's rules for wildcards in a filter: `+` fills a whole level, `#` fills
/// the whole last level (`a/+/c`, `a/#`; not `a+`, `a/#/c`, `a/b#`).
fn filter_ok(s: &str) -> bool {
    let mut levels = s.split('/').peekable();
    while let Some(level) = levels.next() {
        let last = levels.peek().is_none();
        let ok = match level {
            "+" => true,
            "#" => last,
            _ => !level.contains(['+', '#']),
        };
        if !ok {
            return false;
        }
    }
    true
}
