//! The object store files are uploaded to (`output.store`): a local folder,
//! S3 (and S3-compatible servers), Azure Blob Storage or Google Cloud Storage,
//! all behind `object_store`. Credentials come from the environment or from
//! files named in the config, and are never logged.
//!
//! `object_store` retries a request a little by itself (2 retries, bounded by
//! `output.upload_timeout`); longer outages are the uploader's business, with
//! its own backoff, so one stuck request never holds the spool hostage.
//!
//! Uploads are create-only (`PutMode::Create`: a hard link on a local
//! folder, `If-None-Match: *` on S3 and Azure, a generation precondition on
//! GCS): an object already in the store is never replaced. A local folder
//! is written with fsync (file, then each folder whose entries changed), so
//! an upload that returned survives a power cut.
//!
//! This file is the [`Store`] every backend is used through; the
//! create-only write is in `create`; each cloud's settings are in a module
//! of their own.

mod azure;
mod client;
mod create;
mod error;
mod gcs;
mod s3;

pub use create::Put;
pub use error::StoreError;

use crate::config::{Config, OutputSection};
use error::config_error;
use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A store root: an `ObjectStore` and a key prefix.
#[derive(Debug, Clone)]
pub struct Store {
    url: String,
    inner: Arc<dyn ObjectStore>,
    prefix: String,
    timeout: Duration,
}

impl Store {
    /// Opens the configured store.
    pub fn open(config: &Config) -> Result<Store, StoreError> {
        let timeout = Duration::from_micros(config.output.upload_timeout.max(1) as u64);
        Store::from_settings(&config.file.output, timeout)
    }

    /// Opens a store from the `[output]` section.
    pub fn from_settings(o: &OutputSection, timeout: Duration) -> Result<Store, StoreError> {
        let url = o.store.as_str();
        if let Some(path) = url.strip_prefix("file://") {
            let mut s = Store::local(PathBuf::from(path)).map_err(|e| config_error(url, e))?;
            s.timeout = timeout;
            return Ok(s);
        }
        let http = client::Http::new(timeout);
        let (scheme, rest) = url.split_once("://").unwrap_or_default();
        let (bucket, prefix) = client::bucket_and_prefix(rest);
        let inner = match scheme {
            "s3" => s3::open(url, bucket, &o.s3.clone().unwrap_or_default(), http)?,
            "az" => azure::open(url, bucket, &o.azure.clone().unwrap_or_default(), http)?,
            "gs" => gcs::open(url, bucket, &o.gcs.clone().unwrap_or_default(), http)?,
            _ => return Err(config_error(
                url,
                "use file:///path, s3://bucket/prefix, az://container/prefix or gs://bucket/prefix",
            )),
        };
        Ok(Store {
            url: url.to_string(),
            inner,
            prefix,
            timeout,
        })
    }

    /// A store in a local folder (created if missing), written with fsync.
    pub fn local(root: PathBuf) -> Result<Store, std::io::Error> {
        std::fs::create_dir_all(&root)?;
        let fs = LocalFileSystem::new_with_prefix(&root)
            .map_err(std::io::Error::other)?
            .with_fsync(true);
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

    /// Writes `bytes` at `key` unless an object already has that key: a
    /// complete object or nothing (cloud stores publish an object only when
    /// the PUT completes; the local store writes a temporary file, fsyncs it
    /// and links it into place). An object already there with the same
    /// bytes (an upload repeated after a crash) is [`Put::AlreadyThere`];
    /// with other bytes it is left alone and [`Put::Conflict`] is returned.
    pub async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<Put, StoreError> {
        let path = self.path(key);
        let put = create::put_new(self.inner.as_ref(), &path, bytes::Bytes::from(bytes));
        match tokio::time::timeout(self.timeout, put).await {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(source)) => Err(StoreError::put(&self.url, key, source)),
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

    /// The highest sequence number of `gateway_id` among the keys under
    /// `prefix` (`{table}/venue_id={venue}/`); errors are reported for `key`.
    pub async fn highest_seq_under(
        &self,
        prefix: &str,
        gateway_id: &str,
        key: &str,
    ) -> Result<Option<u64>, StoreError> {
        let keys = self
            .list(prefix)
            .await
            .map_err(|e| StoreError::put(&self.url, key, e))?;
        Ok(keys
            .iter()
            .filter_map(|k| super::spool::seq_of(k.rsplit('/').next().unwrap_or(""), gateway_id))
            .max())
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
    use object_store::aws::AmazonS3Builder;
    use object_store::RetryConfig;

    /// An HTTP server on loopback that answers every request with 403, as the
    /// metadata address answers on some networks.
    fn forbidding_server() -> std::net::SocketAddr {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf);
                let _ = conn.write_all(
                    b"HTTP/1.1 403 Forbidden\r\ncontent-length: 9\r\nconnection: close\r\n\r\nforbidden",
                );
            }
        });
        addr
    }

    #[tokio::test]
    async fn an_upload_refused_by_the_metadata_service_is_permanent_and_says_credentials() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let meta = forbidding_server();
        let s3 = AmazonS3Builder::new()
            .with_bucket_name("b")
            .with_region("us-east-1")
            .with_endpoint("http://127.0.0.1:9")
            .with_allow_http(true)
            .with_metadata_endpoint(format!("http://{meta}"))
            .with_retry(RetryConfig {
                max_retries: 0,
                ..RetryConfig::default()
            })
            .build()
            .unwrap();
        let store = Store {
            url: "s3://b".into(),
            inner: Arc::new(s3),
            prefix: String::new(),
            timeout: Duration::from_secs(10),
        };
        let e = store.put("raw/x.parquet", vec![1, 2, 3]).await.unwrap_err();
        assert!(e.is_permanent(), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("credentials") && text.contains("metadata"),
            "{text}"
        );
    }

    #[test]
    fn a_cloud_store_without_credentials_is_refused_naming_where_they_come_from() {
        // Only meaningful without cloud credentials in this process's environment.
        let cloud_env = std::env::vars().any(|(k, _)| {
            k.starts_with("AWS_") || k.starts_with("AZURE_") || k.starts_with("GOOGLE_")
        });
        if cloud_env {
            eprintln!("SKIPPED: cloud credentials in the environment");
            return;
        }
        let t = Duration::from_secs(5);
        for (store, wanted) in [
            ("s3://b/p", "AWS_ACCESS_KEY_ID"),
            ("az://c/p", "AZURE_STORAGE_ACCOUNT_KEY"),
            ("gs://b/p", "GOOGLE_SERVICE_ACCOUNT"),
        ] {
            let mut o: OutputSection =
                toml::from_str(&format!("store = \"{store}\"\nspool_dir = \"/tmp/s\"\n")).unwrap();
            if store.starts_with("az") {
                o.azure = Some(crate::config::AzureSection {
                    account: "acct".into(),
                    ..Default::default()
                });
            }
            let e = Store::from_settings(&o, t).unwrap_err();
            assert!(e.is_permanent() && e.to_string().contains(wanted), "{e}");
            assert!(e.to_string().contains("credentials = \"instance\""), "{e}");
        }
    }
}
