//! The create-only write: an object is written only where none is, and an
//! object found at the key is compared with the bytes to upload, so that a
//! repeated upload (a crash between the upload and the spool's delete) is
//! told apart from a clash of numbers (a spool whose counter was lost).

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutPayload};

/// What a create-only upload found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    /// The object was created.
    Created,
    /// An object with the same bytes was already there: nothing to do.
    AlreadyThere,
    /// An object with other bytes has this key: it was left alone and
    /// nothing was written.
    Conflict,
}

/// Writes `bytes` at `path` with `PutMode::Create`. A store that cannot
/// write conditionally (an S3-compatible server answering "not
/// implemented") is asked whether the key exists first instead.
pub(super) async fn put_new(
    store: &dyn ObjectStore,
    path: &ObjectPath,
    bytes: bytes::Bytes,
) -> Result<Put, object_store::Error> {
    use object_store::Error as E;
    let payload = PutPayload::from(bytes.clone());
    match store.put_opts(path, payload, PutMode::Create.into()).await {
        Ok(_) => Ok(Put::Created),
        Err(E::AlreadyExists { .. }) => compare(store, path, &bytes).await,
        Err(E::NotImplemented { .. } | E::NotSupported { .. }) => match store.head(path).await {
            Ok(_) => compare(store, path, &bytes).await,
            Err(E::NotFound { .. }) => {
                store.put(path, PutPayload::from(bytes)).await?;
                Ok(Put::Created)
            }
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    }
}

/// Whether the object at `path` holds `bytes`.
async fn compare(
    store: &dyn ObjectStore,
    path: &ObjectPath,
    bytes: &[u8],
) -> Result<Put, object_store::Error> {
    let there = store.get(path).await?.bytes().await?;
    Ok(if there.as_ref() == bytes {
        Put::AlreadyThere
    } else {
        Put::Conflict
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use object_store::local::LocalFileSystem;

    #[tokio::test]
    async fn an_object_is_created_once_and_never_replaced_by_other_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let fs = LocalFileSystem::new_with_prefix(dir.path())
            .unwrap()
            .with_fsync(true);
        let p = ObjectPath::from("raw/v/g-000000000000.parquet");
        let one = bytes::Bytes::from_static(b"one");
        assert_eq!(put_new(&fs, &p, one.clone()).await.unwrap(), Put::Created);
        assert_eq!(put_new(&fs, &p, one).await.unwrap(), Put::AlreadyThere);
        let two = bytes::Bytes::from_static(b"two");
        assert_eq!(put_new(&fs, &p, two).await.unwrap(), Put::Conflict);
        let on_disk = std::fs::read(dir.path().join("raw/v/g-000000000000.parquet")).unwrap();
        assert_eq!(on_disk, b"one");
    }
}
