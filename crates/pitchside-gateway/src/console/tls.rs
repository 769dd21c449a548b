//! HTTPS for the console (`[console.tls]`): rustls on the ring provider,
//! the certificate chain and key read once at start.

use crate::config::ConsoleTls;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;
use tokio_rustls::TlsAcceptor;

/// Why HTTPS cannot be set up.
#[derive(Debug, thiserror::Error)]
#[error("console.tls.{key} {path}: {message}")]
pub struct TlsError {
    /// `cert` or `key`.
    pub key: &'static str,
    /// The file.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

/// A TLS acceptor for the console's certificate and key (HTTP/1.1 only).
pub fn acceptor(t: &ConsoleTls) -> Result<TlsAcceptor, TlsError> {
    let err = |key, path: &std::path::Path, message: String| TlsError {
        key,
        path: path.display().to_string(),
        message,
    };
    let chain = CertificateDer::pem_file_iter(&t.cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| err("cert", &t.cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(err(
            "cert",
            &t.cert,
            "no PEM certificate in the file".into(),
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&t.key).map_err(|e| {
        err(
            "key",
            &t.key,
            format!("{e} (a PEM private key: PKCS#8, PKCS#1 or SEC1)"),
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| err("cert", &t.cert, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| {
            err(
                "key",
                &t.key,
                format!("{e} (does the key belong to console.tls.cert?)"),
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
