//! What the cloud backends share: the HTTP client and retry policy, the
//! `bucket/prefix` part of the URL, secrets read from files, and the
//! refusal of a store that has no credentials.

use super::error::{config_error, StoreError};
use crate::config::Credentials;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};
use std::sync::Arc;
use std::time::Duration;

/// A cloud store as its builder made it.
pub(super) type Built = Arc<dyn ObjectStore>;

/// The HTTP client settings and retry policy every cloud store gets.
///
/// `object_store` retries a request a little by itself (2 retries, 100 ms
/// doubling to at most 2 s, all within `output.upload_timeout`).
pub(super) struct Http {
    /// Timeouts (and, per backend, `allow_http`).
    pub client: ClientOptions,
    /// The request-level retries.
    pub retry: RetryConfig,
}

impl Http {
    /// The settings for requests bounded by `timeout`.
    pub fn new(timeout: Duration) -> Http {
        // reqwest's rustls needs a process-wide crypto provider: ring (no aws-lc, for
        // cross builds). Installing twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = ClientOptions::new()
            .with_timeout(timeout)
            .with_connect_timeout(Duration::from_secs(10).min(timeout));
        let retry = RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(2),
                base: 2.0,
            },
            max_retries: 2,
            retry_timeout: timeout,
        };
        Http { client, retry }
    }
}

/// `bucket` and `prefix` of `scheme://bucket/prefix`.
pub(super) fn bucket_and_prefix(rest: &str) -> (String, String) {
    let rest = rest.trim_end_matches('/');
    match rest.split_once('/') {
        Some((b, p)) => (b.to_string(), p.trim_matches('/').to_string()),
        None => (rest.to_string(), String::new()),
    }
}

/// The trimmed contents of the file config key `key` names; `None` when
/// the key is empty.
pub(super) fn read_secret(url: &str, key: &str, path: &str) -> Result<Option<String>, StoreError> {
    if path.is_empty() {
        return Ok(None);
    }
    std::fs::read_to_string(path)
        .map(|s| Some(s.trim().to_string()))
        .map_err(|e| config_error(url, format!("{key} {path:?} cannot be read: {e}")))
}

/// Refuses a store without credentials: none found in the config or the
/// environment (`found`), and not left to the cloud VM (`credentials =
/// "instance"`). `advice` says where they may come from.
pub(super) fn require_credentials(
    url: &str,
    credentials: Credentials,
    found: bool,
    advice: &str,
) -> Result<(), StoreError> {
    if credentials != Credentials::Instance && !found {
        return Err(config_error(url, advice));
    }
    Ok(())
}

/// What a backend's builder made, or why it could not (a config error).
pub(super) fn built<S: ObjectStore>(
    url: &str,
    build: Result<S, object_store::Error>,
) -> Result<Built, StoreError> {
    let store = build.map_err(|e| config_error(url, e))?;
    Ok(Arc::new(store))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_and_prefix_are_split_from_the_url() {
        assert_eq!(bucket_and_prefix("b/p/q/"), ("b".into(), "p/q".into()));
        assert_eq!(bucket_and_prefix("b"), ("b".into(), String::new()));
    }
}
