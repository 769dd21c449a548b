//! MQTT connection settings shared by the MQTT source, the alert output and
//! `simulate --mqtt-host`: password from the environment or a file, TLS with
//! rustls on the ring provider, and plain-language connection errors.

use crate::config::{MqttBroker, MqttTls};
use crate::util::units::parse_duration;
use rumqttc::{
    ConnectReturnCode, ConnectionError, MqttOptions, StateError, TlsConfiguration, Transport,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;
use std::time::Duration;

/// The largest `limits.max_event_bytes` (1 MiB), the payload limit of
/// connections that have no other (alert output, `simulate`).
pub const MAX_PAYLOAD: usize = 1 << 20;

/// How much of an MQTT packet is read into memory for a payload limit of
/// `max_payload` bytes: the payload, the longest topic (2 + 65535 bytes)
/// and a packet id. rumqttc (patched, `vendor/rumqttc/PITCHSIDE.md`) reads
/// past the rest of a longer PUBLISH without holding it, and hands over its
/// topic, packet id and first bytes with `oversize` set: the source
/// acknowledges it and rejects it as `too_large`, so the broker does not
/// redeliver it and the connection stays up.
pub const fn max_incoming_packet(max_payload: usize) -> usize {
    max_payload + 2 + 65_535 + 2
}

/// Why a broker connection could not be set up (start-up errors).
#[derive(Debug, thiserror::Error)]
pub enum ConnError {
    /// `password_env` names a variable that is not set.
    #[error("{key}.password_env: environment variable {var} is not set")]
    PasswordEnv {
        /// Config key of the broker.
        key: String,
        /// Variable name.
        var: String,
    },
    /// `password_file` cannot be read.
    #[error("{key}.password_file: cannot read {path}: {source}")]
    PasswordFile {
        /// Config key of the broker.
        key: String,
        /// File path.
        path: String,
        /// OS error.
        source: std::io::Error,
    },
    /// A PEM file cannot be read or holds nothing usable.
    #[error("{key}: {path}: {message}")]
    Pem {
        /// Config key (`….tls.ca_file`, …).
        key: String,
        /// File path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// rustls refused the certificates or key.
    #[error("{key}: {source}")]
    Tls {
        /// Config key of the TLS table.
        key: String,
        /// rustls error.
        source: rustls::Error,
    },
}

/// A broker connection, ready for `rumqttc::AsyncClient::new`.
#[derive(Debug, Clone)]
pub struct BrokerSettings {
    /// `host:port`, for logs and errors.
    pub addr: String,
    /// rumqttc options (credentials inside; never log them).
    pub options: MqttOptions,
    /// The keep-alive interval.
    pub keep_alive: Duration,
}

impl BrokerSettings {
    /// Builds the options for `b` (config key `key`, for errors). Reads the
    /// password and TLS files now, so that a mistake stops start-up.
    pub fn new(
        key: &str,
        b: &MqttBroker,
        default_client_id: &str,
        clean_session: bool,
    ) -> Result<BrokerSettings, ConnError> {
        let port = b.port.unwrap_or(if b.tls.is_some() { 8883 } else { 1883 });
        let client_id = b
            .client_id
            .clone()
            .unwrap_or_else(|| default_client_id.to_string());
        let mut options = MqttOptions::new(client_id, b.host.clone(), port);
        // Validated at config load; 30 s if somehow not.
        let keep_alive = parse_duration(&b.keep_alive)
            .map(|us| Duration::from_micros(us as u64))
            .unwrap_or(Duration::from_secs(30));
        options
            .set_keep_alive(keep_alive)
            .set_clean_session(clean_session)
            .set_max_packet_size(max_incoming_packet(MAX_PAYLOAD), 1 << 20);
        let password = password(key, b)?;
        if let Some(user) = &b.username {
            options.set_credentials(user.clone(), password.unwrap_or_default());
        }
        if let Some(t) = &b.tls {
            let config = tls_config(&format!("{key}.tls"), t)?;
            options.set_transport(Transport::tls_with_config(TlsConfiguration::Rustls(
                Arc::new(config),
            )));
        }
        Ok(BrokerSettings {
            addr: format!("{}:{port}", b.host),
            options,
            keep_alive,
        })
    }
}

fn password(key: &str, b: &MqttBroker) -> Result<Option<String>, ConnError> {
    if let Some(var) = &b.password_env {
        return std::env::var(var)
            .map(Some)
            .map_err(|_| ConnError::PasswordEnv {
                key: key.to_string(),
                var: var.clone(),
            });
    }
    if let Some(path) = &b.password_file {
        let text = std::fs::read_to_string(path).map_err(|source| ConnError::PasswordFile {
            key: key.to_string(),
            path: path.clone(),
            source,
        })?;
        let text = text.strip_suffix('\n').unwrap_or(&text);
        return Ok(Some(text.strip_suffix('\r').unwrap_or(text).to_string()));
    }
    Ok(None)
}

/// A rustls client config (ring provider) trusting only `t.ca_file`.
pub fn tls_config(key: &str, t: &MqttTls) -> Result<rustls::ClientConfig, ConnError> {
    let pem_err = |k: &str, path: &str, message: String| ConnError::Pem {
        key: format!("{key}.{k}"),
        path: path.to_string(),
        message,
    };
    let certs = |k: &str, path: &str| -> Result<Vec<CertificateDer<'static>>, ConnError> {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| pem_err(k, path, e.to_string()))?;
        if certs.is_empty() {
            return Err(pem_err(k, path, "no PEM certificate in the file".into()));
        }
        Ok(certs)
    };
    let tls_err = |source| ConnError::Tls {
        key: key.to_string(),
        source,
    };
    let mut roots = rustls::RootCertStore::empty();
    for c in certs("ca_file", &t.ca_file)? {
        roots.add(c).map_err(tls_err)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(tls_err)?
        .with_root_certificates(roots);
    match (&t.client_cert, &t.client_key) {
        (Some(cert), Some(key_path)) => {
            let chain = certs("client_cert", cert)?;
            let private = PrivateKeyDer::from_pem_file(key_path)
                .map_err(|e| pem_err("client_key", key_path, e.to_string()))?;
            builder
                .with_client_auth_cert(chain, private)
                .map_err(tls_err)
        }
        _ => Ok(builder.with_no_client_auth()),
    }
}

/// How bad a connection error is, for the log level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// Will likely go away by itself (broker restarting, network blip).
    Transient,
    /// Needs an operator: credentials, certificates, client id.
    Operator,
}

/// A plain-language description of a connection error, naming the broker.
pub fn describe(addr: &str, e: &ConnectionError) -> (Severity, String) {
    use Severity::*;
    match e {
        ConnectionError::ConnectionRefused(code) => {
            let why = match code {
                ConnectReturnCode::BadUserNamePassword => {
                    "bad user name or password (check username and password_env / password_file)"
                }
                // mosquitto 2 answers a wrong password with this code too.
                ConnectReturnCode::NotAuthorized => {
                    "not authorized: wrong user name or password, or not allowed by the broker (check username and password_env / password_file)"
                }
                ConnectReturnCode::BadClientId => "client id rejected (check client_id)",
                ConnectReturnCode::RefusedProtocolVersion => "MQTT 3.1.1 not supported",
                ConnectReturnCode::ServiceUnavailable => "service unavailable",
                ConnectReturnCode::Success => "unexpected refusal",
            };
            let sev = if *code == ConnectReturnCode::ServiceUnavailable { Transient } else { Operator };
            (sev, format!("MQTT broker {addr} refused the connection: {why}"))
        }
        ConnectionError::Tls(t) => (
            Operator,
            format!("TLS with MQTT broker {addr} failed: {t} (check tls.ca_file is the CA that signed the broker's certificate, and the host name matches it)"),
        ),
        ConnectionError::Io(io) => (Transient, format!("MQTT broker {addr} unreachable: {io}")),
        ConnectionError::NetworkTimeout => (Transient, format!("MQTT broker {addr} did not answer in time")),
        ConnectionError::FlushTimeout => (Transient, format!("MQTT broker {addr} stopped reading (write timed out)")),
        ConnectionError::MqttState(StateError::AwaitPingResp) => {
            (Transient, format!("MQTT broker {addr} stopped answering pings"))
        }
        ConnectionError::MqttState(StateError::Io(io)) => {
            (Transient, format!("connection to MQTT broker {addr} lost: {io}"))
        }
        ConnectionError::MqttState(StateError::ConnectionAborted) => {
            (Transient, format!("MQTT broker {addr} closed the connection"))
        }
        other => (Transient, format!("MQTT broker {addr}: {other}")),
    }
}
