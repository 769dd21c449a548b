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
    name_parts(file_name).and_then(|(g, seq)| (g == gateway_id).then_some(seq))
}

/// The gateway and sequence number of `{gateway}-{seq:012}.parquet`, for
/// any `gateway_id` (`[a-z0-9-]{1,32}`); `None` for anything else.
pub(super) fn name_parts(file_name: &str) -> Option<(&str, u64)> {
    let stem = file_name.strip_suffix(".parquet")?;
    let (gateway, digits) = stem.rsplit_once('-')?;
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    let ok = digits.len() == 12
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (1..=32).contains(&gateway.len())
        && gateway.chars().all(valid);
    ok.then(|| digits.parse().ok().map(|seq| (gateway, seq)))
        .flatten()
}

/// Logs, once at start-up, the files of gateways other than `gateway_id`
/// (a gateway renamed with files still spooled): they are uploaded under
/// their own names and count in the spool's size and ceilings.
pub(super) fn log_foreign(pending: &[SpooledFile], gateway_id: &str) {
    let mut others: Vec<&str> = pending
        .iter()
        .map(SpooledFile::gateway)
        .filter(|g| *g != gateway_id)
        .collect();
    if others.is_empty() {
        return;
    }
    let files = others.len();
    others.sort_unstable();
    others.dedup();
    tracing::warn!(
        files,
        gateways = %others.join(","),
        gateway_id,
        "Spool holds files of another gateway_id (the gateway was renamed?): they are uploaded under their own names and count in the spool's size and limits."
    );
}

/// Every complete file in `outgoing/` (of any gateway), in upload order
/// (table priority, then sequence).
pub(super) fn outgoing_files(outgoing: &Path) -> Result<Vec<SpooledFile>, SpoolError> {
    let mut out = Vec::new();
    for table in TableId::ALL {
        table_files(
            &outgoing.join(table.name()),
            &mut |name| name_parts(name).map(|(_, seq)| seq),
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
        let own = &mut |name: &str| seq_of(name, gateway_id);
        let _ = table_files(&root.join(t.name()), own, &mut |_, s, _| {
            max = Some(max.map_or(s, |m: u64| m.max(s)));
        });
        if let Some(m) = max {
            out.push((t, m));
        }
    }
    out
}

/// Calls `f(path, seq, size)` for each file below a table's folder `dir`
/// (if there is one) whose name `seq` gives a number.
fn table_files(
    dir: &Path,
    seq: &mut dyn FnMut(&str) -> Option<u64>,
    f: &mut dyn FnMut(&Path, u64, u64),
) -> Result<(), SpoolError> {
    if !dir.exists() {
        return Ok(());
    }
    walk(dir, &mut |path, size| {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(seq) = seq(name) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names_of_any_gateway_are_parsed_and_others_are_not() {
        assert_eq!(
            name_parts("gw-old-000000000007.parquet"),
            Some(("gw-old", 7))
        );
        assert_eq!(seq_of("gw-old-000000000007.parquet", "gw-old"), Some(7));
        assert_eq!(seq_of("gw-old-000000000007.parquet", "gw"), None);
        for bad in [
            "gw-1-7.parquet",
            "-000000000007.parquet",
            "GW-000000000007.parquet",
            "gw-000000000007.parquet#1",
            "gw-00000000000x.parquet",
        ] {
            assert_eq!(name_parts(bad), None, "{bad}");
        }
    }
}
