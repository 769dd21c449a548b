//! `[console]`: the venue console, an HTTP server in the gateway (SPEC §10).
//! Off loopback a token is required; with `tls` it serves HTTPS.

use super::error::Problems;
use std::path::PathBuf;

crate::config::section! {
    /// `[console]`.
    #[serde(deny_unknown_fields)]
    pub struct ConsoleSection {
        /// `host:port` to serve on; "" turns it off.
        listen: String = "127.0.0.1:8080".into(),
        /// A file holding the access token, at least 16 characters (required
        /// when `listen` is not a loopback address). Requests carry `Authorization: Bearer {token}`, or
        /// `?token=` once, which sets an HttpOnly cookie.
        #[serde(skip_serializing_if = "Option::is_none")]
        token_file: Option<PathBuf> = None,
        /// Open event streams at most, 1 to 1024; more are refused with 503.
        max_clients: u32 = 16,
        /// Bytes of alert, ack and health events queued for one event stream at
        /// most (at least 64 KiB); one more and the stream is dropped (its page reconnects). The
        /// `state` event is not queued: a newer one replaces the one not yet sent.
        client_queue_bytes: String [Size] = "1MiB".into(),
        /// Host names (without port) the console answers to without a token,
        /// besides `localhost`, `127.0.0.1` and `[::1]`: the names operators
        /// type to reach it (e.g. through a tunnel or a local DNS name). Any
        /// other `Host` gets 421 (DNS rebinding).
        allowed_hosts: Vec<String> [TextList] = Vec::new(),
        /// `{ cert, key }`: PEM files; present means HTTPS.
        #[serde(skip_serializing_if = "Option::is_none")]
        tls: Option<ConsoleTls> = None,
    }
}

crate::config::section! {
    /// `[console.tls]`: a certificate chain and its private key, PEM.
    #[serde(deny_unknown_fields)]
    pub struct ConsoleTls {
        /// Certificate chain (PEM).
        cert: PathBuf,
        /// Private key (PEM: PKCS#8, PKCS#1 or SEC1).
        key: PathBuf,
    }
}

/// `[console]`, checked.
#[derive(Debug, Clone)]
pub struct ConsoleConfig {
    /// Where to serve; `None` means the console is off.
    pub listen: Option<String>,
    /// The token's file; `None` means no token (loopback only).
    pub token_file: Option<PathBuf>,
    /// Open event streams at most.
    pub max_clients: usize,
    /// Queued event bytes per stream at most.
    pub client_queue_bytes: usize,
    /// Host names served without a token besides loopback ones, lower case.
    pub allowed_hosts: Vec<String>,
    /// HTTPS certificate and key.
    pub tls: Option<ConsoleTls>,
}

/// `true` when `host` (of `host:port`) names this machine only.
pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl ConsoleSection {
    /// Checks every key: an address, and a token off loopback.
    pub fn validate(&self) -> Result<ConsoleConfig, Vec<String>> {
        let mut p = Problems::default();
        let host = self
            .listen
            .rsplit_once(':')
            .filter(|(h, port)| !h.is_empty() && port.parse::<u16>().is_ok())
            .map(|(h, _)| h);
        p.check(self.listen.is_empty() || host.is_some(), || {
            format!(
                "console.listen: {:?} must be host:port, e.g. 127.0.0.1:8080 or 0.0.0.0:8080, or \"\" for no console",
                self.listen
            )
        });
        if let Some(h) = host.filter(|h| !is_loopback(h)) {
            p.check(self.token_file.is_some(), || {
                format!(
                    "console.token_file: required when console.listen ({h}) is reachable from other machines; \
                     put a long random token in a file only pitchside can read \
                     (e.g. `openssl rand -hex 32 > /etc/pitchside/console.token`)"
                )
            });
        }
        p.check((1..=1024).contains(&self.max_clients), || {
            format!("console.max_clients: {} must be 1-1024", self.max_clients)
        });
        let queue = p.size(
            "console.client_queue_bytes",
            &self.client_queue_bytes,
            64 * 1024,
        );
        for h in &self.allowed_hosts {
            let ok = !h.is_empty()
                && h.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
            p.check(ok, || {
                format!(
                    "console.allowed_hosts: {h:?} must be a host name or IPv4 address without port or scheme, e.g. \"pitchside.venue.lan\""
                )
            });
        }
        p.finish(ConsoleConfig {
            listen: (!self.listen.is_empty()).then(|| self.listen.clone()),
            token_file: self.token_file.clone(),
            max_clients: self.max_clients as usize,
            client_queue_bytes: usize::try_from(queue).unwrap_or(usize::MAX),
            allowed_hosts: self
                .allowed_hosts
                .iter()
                .map(|h| h.trim_end_matches('.').to_ascii_lowercase())
                .collect(),
            tls: self.tls.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_known() {
        for h in ["127.0.0.1", "localhost", "[::1]", "::1", "127.0.0.2"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["0.0.0.0", "192.168.1.5", "gateway.local", "[::]"] {
            assert!(!is_loopback(h), "{h}");
        }
    }

    #[test]
    fn off_loopback_needs_a_token() {
        let s = ConsoleSection {
            listen: "0.0.0.0:8080".into(),
            ..ConsoleSection::default()
        };
        let e = s.validate().unwrap_err();
        assert!(e[0].starts_with("console.token_file: required"), "{e:?}");
        let s = ConsoleSection {
            token_file: Some("/etc/pitchside/console.token".into()),
            ..s
        };
        assert!(s.validate().is_ok());
        assert!(ConsoleSection::default().validate().is_ok());
        let off = ConsoleSection {
            listen: String::new(),
            ..ConsoleSection::default()
        };
        assert!(off.validate().unwrap().listen.is_none());
    }

    #[test]
    fn allowed_hosts_are_plain_names_and_the_queue_has_a_floor() {
        let s = ConsoleSection {
            allowed_hosts: vec!["Pitchside.Venue.LAN".into(), "10.0.0.7".into()],
            ..ConsoleSection::default()
        };
        let c = s.validate().unwrap();
        assert_eq!(c.allowed_hosts, ["pitchside.venue.lan", "10.0.0.7"]);
        assert_eq!(c.client_queue_bytes, 1 << 20);
        let s = ConsoleSection {
            allowed_hosts: vec!["http://x.lan:8080".into()],
            client_queue_bytes: "1KiB".into(),
            ..ConsoleSection::default()
        };
        let e = s.validate().unwrap_err();
        assert!(
            e.iter().any(|m| m.starts_with("console.allowed_hosts:")),
            "{e:?}"
        );
        assert!(
            e.iter()
                .any(|m| m.starts_with("console.client_queue_bytes:")),
            "{e:?}"
        );
    }
}
