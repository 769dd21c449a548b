//! What can go wrong with the store, sorted by what the caller should do,
//! and how an `object_store` error is sorted.

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
    #[error("upload of {key} to {url} failed: the store's credentials could not be obtained from the cloud's instance metadata service ({source}); configure credentials (see output.s3 / output.azure / output.gcs; docs: configuration.md, section Cloud credentials), or on a cloud VM check its instance role or managed identity")]
    Credentials {
        /// Store URL.
        url: String,
        /// Object key.
        key: String,
        /// The store's error.
        source: object_store::Error,
    },
    /// The store holds the key with other bytes, and the spool file could
    /// not be numbered anew (renamed). Transient: tried again later.
    #[error("the store holds another object at {key} and the spool file could not be renamed to the next free number (check output.spool_dir's disk)")]
    Conflict {
        /// Object key.
        key: String,
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

    /// A failed PUT of `key`, sorted: credentials, permanent or transient.
    pub(super) fn put(url: &str, key: &str, source: object_store::Error) -> StoreError {
        let (url, key) = (url.to_string(), key.to_string());
        if from_metadata_service(&source) {
            return StoreError::Credentials { url, key, source };
        }
        StoreError::Put {
            url,
            key,
            permanent: permanent(&source),
            source,
        }
    }
}

/// A [`StoreError::Config`] for `url`.
pub(super) fn config_error(url: &str, why: impl ToString) -> StoreError {
    StoreError::Config {
        url: url.to_string(),
        why: why.to_string(),
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

/// Whether `e` needs an operator (credentials, permissions, a missing
/// bucket or an unsupported request) rather than a retry.
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
