//! Atomic commits on the local disk: write or finish a file under a
//! temporary name, fsync it, rename it into place. After a crash a file is
//! complete at its final name or not there at all.

use super::{io, SpoolError};
use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

/// Moves the finished `file` (open at `tmp`) to `dest` durably: fsync the
/// file, rename it, fsync the folder it lands in. Returns its size.
pub(super) fn commit_file(file: File, tmp: &Path, dest: &Path) -> Result<u64, SpoolError> {
    file.sync_all().map_err(io("fsync", tmp))?;
    let size = file.metadata().map_err(io("stat", tmp))?.len();
    drop(file);
    // `dest` is below the spool's `outgoing/`, so it always has a parent.
    let dir = dest.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io("create", dir))?;
    fs::rename(tmp, dest).map_err(io("rename", dest))?;
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("fsync dir", dir))?;
    Ok(size)
}

/// Replaces the small file `path` with `text`: written next to it as
/// `*.tmp`, fsynced, renamed over it, and its folder fsynced (so the new
/// name survives a power cut).
pub(super) fn replace_file(path: &Path, text: &str) -> Result<(), SpoolError> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp).map_err(io("create", &tmp))?;
        f.write_all(text.as_bytes()).map_err(io("write", &tmp))?;
        f.sync_all().map_err(io("fsync", &tmp))?;
    }
    fs::rename(&tmp, path).map_err(io("rename", path))?;
    // A counter's path is always inside `state/seq/`.
    let dir = path.parent().unwrap_or(Path::new("."));
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io("fsync dir", dir))
}
