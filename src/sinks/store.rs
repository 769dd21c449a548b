//! The object store files are uploaded to (`output.store`): a local folder,
//! S3 (and S3-compatible servers), Azure Blob Storage or Google Cloud Storage,
//! all behind `object_store`. Credentials come from the environment or from
//! files named in the config, and are never logged.
//!
//! `object_store` retries a request a little by itself (2 retries, bounded by
//! `output.upload_timeout`); longer outages are the uploader's business, with
//! its own backoff, so one stuck request never holds the spool hostage.

use crate::config::{Config, OutputSection};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Store failures, sorted by what the caller should do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL or its settings cannot work. Permanent: fix the config.
    #[error("output.store {url:?}: {why}")]
    Config {
        /// The URL.
        url: String,
        /// What to fix.
        why: String,
    },
    /// An upload failed. `permanent` errors (credentials, permissions, a
    /// missing bucket) need an operator; the others may pass on retry.
    #[error("upload of {key} to {url} failed{}: {source}", if *.permanent { " (check the store's credentials, permissions and bucket)" } else { "" })]
    Put {
        /// Store URL.
        url: String,
        /// Object key.
        key: String,
        /// Needs an operator, not a retry.
        permanent: bool,
        /// The store's error.
        source: object_store::Error,
    },
    /// An upload attempt took longer than `output.upload_timeout`.
    #[error("upload of {key} to {url} timed out after {secs} s")]
    Timeout {
        /// Store URL.
        url: String,
        /// Object key.
        key: String,
        /// The timeout.
        secs: u64,
    },
}

impl StoreError {
    /// Whether retrying soon is pointless (an operator must act).
    pub fn is_permanent(&self) -> bool {
        matches!(
            self,
            StoreError::Config { .. }
                | StoreError::Put {
                    permanent: true,
                    ..
                }
        )
    }
}

fn permanent(e: &object_store::Error) -> bool {
    use object_store::Error as E;
    matches!(
        e,
        E::PermissionDenied { .. }
            | E::Unauthenticated { .. }
            | E::NotFound { .. }
            | E::InvalidPath { .. }
            | E::NotSupported { .. }
            | E::NotImplemented { .. }
    )
}

/// A store root: an `ObjectStore` and a key prefix.
#[derive(Debug, Clone)]
pub struct Store {
    url: String,
    inner: Arc<dyn ObjectStore>,
    prefix: String,
    timeout: Duration,
}

/// `bucket` and `prefix` of `scheme://bucket/prefix`.
fn bucket_and_prefix(rest: &str) -> (String, String) {
    let rest = rest.trim_end_matches('/');
    match rest.split_once('/') {
        Some((b, p)) => (b.to_string(), p.trim_matches('/').to_string()),
        None => (rest.to_string(), String::new()),
    }
}

fn read_secret(url: &str, key: &str, path: &str) -> Result<Option<String>, StoreError> {
    if path.is_empty() {
        return Ok(None);
    }
    std::fs::read_to_string(path)
        .map(|s| Some(s.trim().to_string()))
        .map_err(|e| StoreError::Config {
            url: url.to_string(),
            why: format!("{key} {path:?} cannot be read: {e}"),
        })
}

impl Store {
    /// Opens the configured store.
    pub fn open(config: &Config) -> Result<Store, StoreError> {
        let timeout = Duration::from_micros(config.upload_timeout.max(1) as u64);
        Store::from_settings(&config.file.output, timeout)
    }

    /// Opens a store from the `[output]` section.
    pub fn from_settings(o: &OutputSection, timeout: Duration) -> Result<Store, StoreError> {
        let url = o.store.as_str();
        let cfg_err = |why: String| StoreError::Config {
            url: url.to_string(),
            why,
        };
        if let Some(path) = url.strip_prefix("file://") {
            let mut s = Store::local(PathBuf::from(path)).map_err(|e| cfg_err(e.to_string()))?;
            s.timeout = timeout;
            return Ok(s);
        }
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
        let (inner, prefix): (Arc<dyn ObjectStore>, String) = if let Some(rest) =
            url.strip_prefix("s3://")
        {
            let (bucket, prefix) = bucket_and_prefix(rest);
            let s = o.s3.clone().unwrap_or_default();
            let mut b = AmazonS3Builder::from_env()
                .with_bucket_name(bucket)
                .with_retry(retry)
                .with_client_options(client.with_allow_http(s.allow_http))
                .with_allow_http(s.allow_http);
            if !s.endpoint.is_empty() {
                b = b.with_endpoint(&s.endpoint);
            }
            if !s.region.is_empty() {
                b = b.with_region(&s.region);
            } else if std::env::var_os("AWS_REGION").is_none()
                && std::env::var_os("AWS_DEFAULT_REGION").is_none()
            {
                b = b.with_region("us-east-1");
            }
            b = b.with_virtual_hosted_style_request(!s.path_style);
            if let Some(k) =
                read_secret(url, "output.s3.access_key_id_file", &s.access_key_id_file)?
            {
                b = b.with_access_key_id(k);
            }
            if let Some(k) = read_secret(
                url,
                "output.s3.secret_access_key_file",
                &s.secret_access_key_file,
            )? {
                b = b.with_secret_access_key(k);
            }
            (
                Arc::new(b.build().map_err(|e| cfg_err(e.to_string()))?),
                prefix,
            )
        } else if let Some(rest) = url.strip_prefix("az://") {
            let (container, prefix) = bucket_and_prefix(rest);
            let s = o.azure.clone().unwrap_or_default();
            let mut b = MicrosoftAzureBuilder::from_env()
                .with_container_name(container)
                .with_retry(retry)
                .with_client_options(client.with_allow_http(s.allow_http))
                .with_allow_http(s.allow_http);
            if !s.account.is_empty() {
                b = b.with_account(&s.account);
            }
            if !s.endpoint.is_empty() {
                b = b.with_endpoint(s.endpoint.clone());
            }
            if let Some(k) = read_secret(url, "output.azure.access_key_file", &s.access_key_file)? {
                b = b.with_access_key(k);
            }
            (
                Arc::new(b.build().map_err(|e| cfg_err(e.to_string()))?),
                prefix,
            )
        } else if let Some(rest) = url.strip_prefix("gs://") {
            let (bucket, prefix) = bucket_and_prefix(rest);
            let s = o.gcs.clone().unwrap_or_default();
            let mut b = GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(bucket)
                .with_retry(retry)
                .with_client_options(client);
            if !s.service_account_file.is_empty() {
                b = b.with_service_account_path(&s.service_account_file);
            }
            (
                Arc::new(b.build().map_err(|e| cfg_err(e.to_string()))?),
                prefix,
            )
        } else {
            return Err(cfg_err(
                "use file:///path, s3://bucket/prefix, az://container/prefix or gs://bucket/prefix"
                    .into(),
            ));
        };
        Ok(Store {
            url: url.to_string(),
            inner,
            prefix,
            timeout,
        })
    }

    /// A store in a local folder (created if missing).
    pub fn local(root: PathBuf) -> Result<Store, std::io::Error> {
        std::fs::create_dir_all(&root)?;
        let fs = LocalFileSystem::new_with_prefix(&root).map_err(std::io::Error::other)?;
        Ok(Store {
            url: format!("file://{}", root.display()),
            inner: Arc::new(fs),
            prefix: String::new(),
            timeout: Duration::from_secs(30),
        })
    }

    /// The store's URL (never contains credentials: they are not in the URL).
    pub fn url(&self) -> &str {
        &self.url
    }

    fn path(&self, key: &str) -> ObjectPath {
        if self.prefix.is_empty() {
            ObjectPath::from(key)
        } else {
            ObjectPath::from(format!("{}/{key}", self.prefix))
        }
    }

    /// Writes `bytes` at `key`: a complete object or nothing (cloud stores
    /// publish an object only when the PUT completes; the local store writes
    /// a temporary file and renames it). Writing the same key twice with the
    /// same bytes is harmless: re-uploads after a crash are idempotent.
    pub async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let path = self.path(key);
        let put = self.inner.put(&path, PutPayload::from(bytes));
        match tokio::time::timeout(self.timeout, put).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(source)) => Err(StoreError::Put {
                url: self.url.clone(),
                key: key.to_string(),
                permanent: permanent(&source),
                source,
            }),
            Err(_) => Err(StoreError::Timeout {
                url: self.url.clone(),
                key: key.to_string(),
                secs: self.timeout.as_secs(),
            }),
        }
    }

    /// The highest sequence number `gateway_id` already used for each of
    /// `tables` in this store (tables without files are left out). Used when
    /// the spool lost its counters, so that no object is ever overwritten
    /// with different bytes.
    pub async fn highest_seqs(
        &self,
        venue_id: &str,
        gateway_id: &str,
        tables: &[crate::tables::TableId],
    ) -> Result<Vec<(crate::tables::TableId, u64)>, object_store::Error> {
        let mut out = Vec::new();
        for &t in tables {
            let keys = self
                .list(&format!("{}/venue_id={venue_id}/", t.name()))
                .await?;
            let max = keys
                .iter()
                .filter_map(|k| {
                    super::spool::seq_of(k.rsplit('/').next().unwrap_or(""), gateway_id)
                })
                .max();
            if let Some(m) = max {
                out.push((t, m));
            }
        }
        Ok(out)
    }

    /// Reads an object back (tests and tools).
    pub async fn get(&self, key: &str) -> Result<Vec<u8>, object_store::Error> {
        let r = self.inner.get(&self.path(key)).await?;
        Ok(r.bytes().await?.to_vec())
    }

    /// Lists every key under `prefix` (relative to the store root).
    pub async fn list(&self, prefix: &str) -> Result<Vec<String>, object_store::Error> {
        use futures::TryStreamExt;
        let p = self.path(prefix);
        let items: Vec<_> = self.inner.list(Some(&p)).try_collect().await?;
        let strip = if self.prefix.is_empty() {
            0
        } else {
            self.prefix.len() + 1
        };
        let mut keys: Vec<String> = items
            .into_iter()
            .map(|m| m.location.as_ref()[strip..].to_string())
            .collect();
        keys.sort();
        Ok(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_and_prefix_are_split_from_the_url() {
        assert_eq!(bucket_and_prefix("b/p/q/"), ("b".into(), "p/q".into()));
        assert_eq!(bucket_and_prefix("b"), ("b".into(), String::new()));
    }

    #[test]
    fn permission_errors_are_permanent_and_io_errors_are_not() {
        let denied = object_store::Error::PermissionDenied {
            path: "x".into(),
            source: "no".into(),
        };
        assert!(permanent(&denied));
        let generic = object_store::Error::Generic {
            store: "S3",
            source: "connection refused".into(),
        };
        assert!(!permanent(&generic));
    }
}
