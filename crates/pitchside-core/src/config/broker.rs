//! An MQTT broker table and MQTT topic rules, shared by `[[sources.mqtt]]`
//! (as its `broker` table) and `[alerts.mqtt]`.

use super::error::Problems;
use crate::util::time::MICROS_PER_SEC;
use crate::util::units::parse_duration;

crate::config::section! {
    /// An MQTT broker connection, used by `[[sources.mqtt]]` (as its `broker`
    /// table) and by `[alerts.mqtt]`.
    #[serde(deny_unknown_fields)]
    pub struct MqttBroker {
        /// Host name or IP address: not a URL, and without the port.
        host: String,
        /// Port, 1 to 65535 (unset: 1883, or 8883 with `tls`).
        #[serde(skip_serializing_if = "Option::is_none")]
        port: Option<u16> = None,
        /// Client id; keep it stable, the broker keeps the session under it
        /// (unset: `pitchside-{venue}-{gateway}`, `…-alerts` for the alert output).
        #[serde(skip_serializing_if = "Option::is_none")]
        client_id: Option<String> = None,
        /// User name, if the broker wants one.
        #[serde(skip_serializing_if = "Option::is_none")]
        username: Option<String> = None,
        /// Name of an environment variable holding the password (or `password_file`, not both).
        #[serde(skip_serializing_if = "Option::is_none")]
        password_env: Option<String> = None,
        /// Path of a file holding the password (one trailing newline is ignored).
        #[serde(skip_serializing_if = "Option::is_none")]
        password_file: Option<String> = None,
        /// MQTT keep-alive, 1s to 65535s; a connection silent for twice this is
        /// dropped and re-made.
        keep_alive: String [Duration] = "30s".into(),
        /// TLS; absent means plain TCP.
        #[serde(skip_serializing_if = "Option::is_none")]
        tls: Option<MqttTls> = None,
    }
}

crate::config::section! {
    /// `tls` of a broker: rustls with the CA given (the system roots are not used).
    #[serde(deny_unknown_fields)]
    pub struct MqttTls {
        /// PEM file of the CA certificate(s) that signed the broker's certificate.
        ca_file: String,
        /// PEM client certificate chain, for brokers that require client certificates.
        #[serde(skip_serializing_if = "Option::is_none")]
        client_cert: Option<String> = None,
        /// PEM private key of `client_cert`.
        #[serde(skip_serializing_if = "Option::is_none")]
        client_key: Option<String> = None,
    }
}

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
