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
    /// No credentials were configured, so the store's client asked the
    /// cloud's instance metadata service, which gave none. Permanent.
    #[error("upload of {key} to {url} failed: the store's credentials could not be obtained from the cloud's instance metadata service ({source}); configure credentials (see output.s3 / output.azure / output.gcs in the README), or on a cloud VM check its instance role or managed identity")]
    Credentials {
        /// Store URL.
        url: String,
        /// Object key.
        key: String,
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
                | StoreError::Credentials { .. }
                | StoreError::Put {
                    permanent: true,
                    ..
                }
        )
    }
}

/// Addresses and paths of the clouds' instance metadata services (AWS IMDS
/// and ECS, Azure IMDS, GCE metadata server). An error from one of them is
/// about credentials: retrying soon does not help.
const METADATA_SERVICE: [&str; 8] = [
    "169.254.169.254",
    "169.254.170.2",
    "fd00:ec2::254",
    "metadata.google.internal",
    "/latest/api/token",
    "/latest/meta-data/",
    "/computeMetadata/",
    "/metadata/identity/oauth2/token",
];

/// Whether `e` (or a cause of it) is a request to an instance metadata service.
fn from_metadata_service(e: &object_store::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        let text = c.to_string();
        if METADATA_SERVICE.iter().any(|m| text.contains(m)) {
            return true;
        }
        cause = c.source();
    }
    false
}

/// How credentials may be given for each cloud, for the error when none are.
const S3_CREDENTIALS: &str = "no credentials for this S3 store: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary keys) in the service's environment, or name files holding them with output.s3.access_key_id_file and output.s3.secret_access_key_file (web identity, AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, and ECS task roles, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI, work too); on an EC2 instance with an instance profile, set output.s3.credentials = \"instance\"";
const AZURE_CREDENTIALS: &str = "no credentials for this Azure store: set AZURE_STORAGE_ACCOUNT_KEY (or AZURE_STORAGE_SAS_TOKEN, or a service principal: AZURE_CLIENT_ID, AZURE_CLIENT_SECRET and AZURE_TENANT_ID) in the service's environment, or name a file holding the account key with output.azure.access_key_file; on an Azure VM with a managed identity, set output.azure.credentials = \"instance\"";
const GCS_CREDENTIALS: &str = "no credentials for this GCS store: set GOOGLE_SERVICE_ACCOUNT (the path of a service account JSON key), GOOGLE_SERVICE_ACCOUNT_KEY (the key itself) or GOOGLE_APPLICATION_CREDENTIALS in the service's environment, or name the key file with output.gcs.service_account_file; on a Compute Engine VM with a service account, set output.gcs.credentials = \"instance\"";

fn s3_has_credentials(b: &AmazonS3Builder) -> bool {
    use object_store::aws::AmazonS3ConfigKey as K;
    let has = |k: K| b.get_config_value(&k).is_some_and(|v| !v.is_empty());
    has(K::AccessKeyId)
        || has(K::SecretAccessKey)
        || (has(K::WebIdentityTokenFile) && has(K::RoleArn))
        || has(K::ContainerCredentialsRelativeUri)
        || has(K::ContainerCredentialsFullUri)
        || b.get_config_value(&K::SkipSignature).as_deref() == Some("true")
}

fn azure_has_credentials(b: &MicrosoftAzureBuilder) -> bool {
    use object_store::azure::AzureConfigKey as K;
    let has = |k: K| b.get_config_value(&k).is_some_and(|v| !v.is_empty());
    let on = |k: K| b.get_config_value(&k).as_deref() == Some("true");
    has(K::AccessKey)
        || has(K::Token)
        || has(K::SasKey)
        || (has(K::ClientId)
            && has(K::AuthorityId)
            && (has(K::ClientSecret) || has(K::FederatedTokenFile)))
        || has(K::MsiEndpoint)
        || has(K::CredentialType)
        || on(K::UseAzureCli)
        || on(K::UseEmulator)
        || on(K::SkipSignature)
}

fn gcs_has_credentials(b: &GoogleCloudStorageBuilder) -> bool {
    use object_store::gcp::GoogleConfigKey as K;
    let has = |k: K| b.get_config_value(&k).is_some_and(|v| !v.is_empty());
    // gcloud's application default credentials, which the builder reads too.
    let adc = std::env::var_os("HOME").is_some_and(|h| {
        std::path::Path::new(&h)
            .join(".config/gcloud/application_default_credentials.json")
            .exists()
    });
    has(K::ServiceAccount)
        || has(K::ServiceAccountKey)
        || has(K::ApplicationCredentials)
        || b.get_config_value(&K::SkipSignature).as_deref() == Some("true")
        || adc
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
        let timeout = Duration::from_micros(config.output.upload_timeout.max(1) as u64);
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
            if s.credentials != "instance" && !s3_has_credentials(&b) {
                return Err(cfg_err(S3_CREDENTIALS.into()));
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
            if s.credentials != "instance" && !azure_has_credentials(&b) {
                return Err(cfg_err(AZURE_CREDENTIALS.into()));
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
                // Read here too, so that a missing file is named with its key.
                read_secret(
                    url,
                    "output.gcs.service_account_file",
                    &s.service_account_file,
                )?;
                b = b.with_service_account_path(&s.service_account_file);
            }
            if s.credentials != "instance" && !gcs_has_credentials(&b) {
                return Err(cfg_err(GCS_CREDENTIALS.into()));
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
            Ok(Err(source)) if from_metadata_service(&source) => Err(StoreError::Credentials {
                url: self.url.clone(),
                key: key.to_string(),
                source,
            }),
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

    #[test]
    fn an_instance_metadata_error_is_a_permanent_credentials_error() {
        // As seen in the field: no credentials configured, so IMDS was asked.
        let e = object_store::Error::Generic {
            store: "S3",
            source: "Error performing PUT http://169.254.169.254/latest/api/token in 2.1ms - Server returned non-2xx status code: 403 Forbidden".into(),
        };
        assert!(from_metadata_service(&e));
        let not = object_store::Error::Generic {
            store: "S3",
            source: "Error performing PUT https://bucket.s3.amazonaws.com/raw/x in 30s - error sending request".into(),
        };
        assert!(
            !from_metadata_service(&not),
            "an ordinary outage stays transient"
        );
    }

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
