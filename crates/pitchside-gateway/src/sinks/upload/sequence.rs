//! Sequence numbers the store already holds: continuing after them when
//! the spool has no usable counter, and numbering a file anew when its key
//! is taken in the store by an object with other bytes (a counter lost
//! while the store could not be asked). Nothing in the store is replaced.

use crate::sinks::spool::{Numbering, Spool, SpoolError, SpooledFile};
use crate::sinks::store::{Store, StoreError};
use std::fs::File;

/// When the spool has no usable sequence counters (new, lost with an SD
/// card, or damaged), asks the store for the highest numbers this gateway
/// already used and continues after them.
pub async fn continue_store_sequence(
    spool: &mut Spool,
    store: &Store,
    config: &crate::config::Config,
) -> Result<(), SpoolError> {
    let unknown = spool.unknown_seq_tables();
    if unknown.is_empty() {
        return Ok(());
    }
    match store
        .highest_seqs(&config.venue.id, &config.venue.gateway_id, &unknown)
        .await
    {
        Ok(found) => {
            for &t in &unknown {
                let next = found
                    .iter()
                    .find(|(x, _)| *x == t)
                    .map_or(0, |(_, m)| m + 1);
                if next > 0 {
                    tracing::info!(
                        table = t.name(),
                        next_seq = next,
                        "Spool had no counter; continuing after the files already in the store."
                    );
                }
                spool.reserve_seq(t, next)?;
            }
        }
        Err(e) => tracing::error!(
            error = %e,
            store = %store.url(),
            "The spool has no usable sequence counters and the store cannot be listed: numbering starts from what the spool holds. Uploads never replace an object: a file whose key the store already holds is numbered anew (pitchside_upload_conflicts_total)."
        ),
    }
    Ok(())
}

/// Gives `f` the next number after both the shared counter and the highest
/// number of this gateway in the store under `f`'s table and venue, and
/// renames it in the spool. `Ok(None)` when the spool file could not be
/// renamed (logged; it is tried again later).
pub(super) async fn renumber(
    store: &Store,
    numbering: &Numbering,
    f: &SpooledFile,
) -> Result<Option<SpooledFile>, StoreError> {
    let (dir, _) = f.key.rsplit_once('/').unwrap_or(("", ""));
    let prefix = f.key.find("/date=").map_or(dir, |i| &f.key[..=i]);
    if let Some(m) = store
        .highest_seq_under(prefix, &numbering.gateway_id, &f.key)
        .await?
    {
        numbering.seqs.raise(f.table, m + 1);
    }
    let seq = numbering.seqs.take(f.table);
    let name = format!("{}-{seq:012}.parquet", numbering.gateway_id);
    let key = if dir.is_empty() {
        name.clone()
    } else {
        format!("{dir}/{name}")
    };
    let path = f.path.with_file_name(&name);
    let renamed = std::fs::rename(&f.path, &path).and_then(|()| {
        let folder = path.parent().unwrap_or(std::path::Path::new("."));
        File::open(folder)?.sync_all()
    });
    if let Err(e) = renamed {
        tracing::error!(path = %f.path.display(), error = %e, "A spool file whose key the store already holds could not be renamed; it is tried again later. Check output.spool_dir's disk.");
        return Ok(None);
    }
    Ok(Some(SpooledFile {
        table: f.table,
        seq,
        key,
        path,
        size: f.size,
    }))
}
