//! Where spooled files go and how they are found again: the object key
//! (SPEC §5 layout), the sequence number in a file's name, and the scans
//! of a table's folder for this gateway's files.

use super::{io, SpoolError, SpooledFile};
use crate::tables::TableId;
use std::fs;
use std::path::Path;

/// `{table}/venue_id={venue}/date={date}/{gateway}-{seq:012}.parquet`.
pub fn object_key(
    table: TableId,
    venue_id: &str,
    date: &str,
    gateway_id: &str,
    seq: u64,
) -> String {
    format!(
        "{}/venue_id={venue_id}/date={date}/{gateway_id}-{seq:012}.parquet",
        table.name()
    )
}

/// Parses `{gateway}-{seq}.parquet` of our own gateway; `None` for anything else.
pub fn seq_of(file_name: &str, gateway_id: &str) -> Option<u64> {
    let rest = file_name.strip_prefix(gateway_id)?.strip_prefix('-')?;
    let digits = rest.strip_suffix(".parquet")?;
    (digits.len() == 12).then(|| digits.parse().ok()).flatten()
}

/// Every complete file of `gateway_id` in `outgoing/`, in upload order
/// (table priority, then sequence).
pub(super) fn outgoing_files(
    outgoing: &Path,
    gateway_id: &str,
) -> Result<Vec<SpooledFile>, SpoolError> {
    let mut out = Vec::new();
    for table in TableId::ALL {
        own_files(
            &outgoing.join(table.name()),
            gateway_id,
            &mut |path, seq, size| {
                let key = path
                    .strip_prefix(outgoing)
                    .map(|k| k.to_string_lossy().replace('\\', "/"))
                    .unwrap_or_default();
                out.push(SpooledFile {
                    table,
                    seq,
                    key,
                    path: path.to_path_buf(),
                    size,
                });
            },
        )?;
    }
    out.sort();
    Ok(out)
}

/// The highest sequence number of `gateway_id` for each table found under a
/// local store folder (replay into an existing `--output` folder continues
/// after it instead of overwriting).
pub fn max_seq_in_folder(root: &Path, gateway_id: &str) -> Vec<(TableId, u64)> {
    let mut out = Vec::new();
    for t in TableId::ALL {
        let mut max = None;
        // A folder that cannot be read is passed over: what was found counts.
        let _ = own_files(&root.join(t.name()), gateway_id, &mut |_, s, _| {
            max = Some(max.map_or(s, |m: u64| m.max(s)));
        });
        if let Some(m) = max {
            out.push((t, m));
        }
    }
    out
}

/// Calls `f(path, seq, size)` for each file of `gateway_id` below a
/// table's folder `dir`, if there is one.
fn own_files(
    dir: &Path,
    gateway_id: &str,
    f: &mut dyn FnMut(&Path, u64, u64),
) -> Result<(), SpoolError> {
    if !dir.exists() {
        return Ok(());
    }
    walk(dir, &mut |path, size| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(seq) = seq_of(name, gateway_id) {
            f(path, seq, size);
        }
    })
}

fn walk(dir: &Path, f: &mut dyn FnMut(&Path, u64)) -> Result<(), SpoolError> {
    for entry in fs::read_dir(dir).map_err(io("list", dir))? {
        let entry = entry.map_err(io("list", dir))?;
        let path = entry.path();
        let meta = entry.metadata().map_err(io("stat", &path))?;
        if meta.is_dir() {
            walk(&path, f)?;
        } else {
            f(&path, meta.len());
        }
    }
    Ok(())
}

/// Removes an uploaded file and the date/venue folders it leaves empty.
pub fn remove_uploaded(file: &SpooledFile) -> Result<(), SpoolError> {
    fs::remove_file(&file.path).map_err(io("remove", &file.path))?;
    let mut dir = file.path.parent();
    for _ in 0..2 {
        match dir {
            Some(d) if fs::remove_dir(d).is_ok() => dir = d.parent(),
            _ => break,
        }
    }
    Ok(())
}
