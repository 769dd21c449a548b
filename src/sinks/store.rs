//! The object store files are uploaded to (`output.store`), behind
//! `object_store` so that S3, GCS and Azure plug in beside `file://`.

use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use std::path::PathBuf;
use std::sync::Arc;

/// Store failures, sorted by what the caller should do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL names a store this build cannot reach. Permanent: fix the config.
    #[error("output.store {url:?}: {why}")]
    Unsupported {
        /// The URL.
        url: String,
        /// Why.
        why: String,
    },
    /// The upload failed; may succeed on retry.
    #[error("upload of {key} to {url} failed: {source}")]
    Put {
        /// Store URL.
        url: String,
        /// Object key.
        key: String,
        /// The store's error.
        source: object_store::Error,
    },
}

/// A store root: an `ObjectStore` and a key prefix.
#[derive(Debug, Clone)]
pub struct Store {
    url: String,
    inner: Arc<dyn ObjectStore>,
    prefix: String,
}

impl Store {
    /// Opens a store from `output.store`.
    pub fn open(url: &str) -> Result<Store, StoreError> {
        let unsupported = |why: String| StoreError::Unsupported {
            url: url.to_string(),
            why,
        };
        if let Some(path) = url.strip_prefix("file://") {
            return Store::local(PathBuf::from(path)).map_err(|e| unsupported(e.to_string()));
        }
        Err(unsupported(
            "this build uploads to file:// stores only; s3://, gs:// and az:// come with the cloud upload support"
                .into(),
        ))
    }

    /// A store in a local folder (created if missing).
    pub fn local(root: PathBuf) -> Result<Store, std::io::Error> {
        std::fs::create_dir_all(&root)?;
        let fs = LocalFileSystem::new_with_prefix(&root).map_err(std::io::Error::other)?;
        Ok(Store {
            url: format!("file://{}", root.display()),
            inner: Arc::new(fs),
            prefix: String::new(),
        })
    }

    /// The store's URL (without credentials).
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

    /// Writes `bytes` at `key`: a complete object or nothing (the local store
    /// writes a temporary file and renames it).
    pub async fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        self.inner
            .put(&self.path(key), PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(|source| StoreError::Put {
                url: self.url.clone(),
                key: key.to_string(),
                source,
            })
    }
}
