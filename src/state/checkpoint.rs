//! Checkpoints of the pipeline's state: detector windows, open event-time
//! windows and watermarks, fatigue history. Written atomically (a temporary
//! file, fsync, rename) right after a flush has made every table file
//! durable, so state and files always agree, and read back at start-up so a
//! restart keeps its baselines.
//!
//! Format (little-endian): magic `PSCKPT\0\0`, version `u32`, body length
//! `u64`, FNV-1a 64 checksum of the body `u64`, body. A file of another
//! version, a bad checksum or a body that does not parse is moved aside with
//! an ERROR and a counter, and the gateway starts fresh rather than crash-loop.

use crate::util::codec::Dec;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Current format version.
pub const VERSION: u32 = 1;
const MAGIC: &[u8; 8] = b"PSCKPT\0\0";

/// Why a checkpoint could not be used or written.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// Not a checkpoint, another version, or damaged.
    #[error("checkpoint {path} is unusable: {why}")]
    Invalid {
        /// File.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// Disk trouble.
    #[error("checkpoint {path}: {source} (check output.spool_dir's disk)")]
    Io {
        /// File.
        path: PathBuf,
        /// OS error.
        source: std::io::Error,
    },
}

fn fnv1a(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Wraps a body in the header.
pub fn seal(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + 28);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv1a(body).to_le_bytes());
    out.extend_from_slice(body);
    out
}

/// Checks the header and returns the body.
pub fn open(bytes: &[u8]) -> Result<&[u8], String> {
    if bytes.len() < 28 || &bytes[..8] != MAGIC {
        return Err("not a pitchside checkpoint".into());
    }
    let mut d = Dec::new(&bytes[8..28]);
    let (version, len, sum) = (
        d.u32().unwrap_or(0),
        d.u64().unwrap_or(0),
        d.u64().unwrap_or(0),
    );
    if version != VERSION {
        return Err(format!(
            "format version {version}, this build reads {VERSION}"
        ));
    }
    let body = &bytes[28..];
    if body.len() as u64 != len {
        return Err(format!(
            "body is {} bytes, header says {len} (truncated?)",
            body.len()
        ));
    }
    if fnv1a(body) != sum {
        return Err("checksum mismatch (damaged)".into());
    }
    Ok(body)
}

/// The checkpoint file of a spool.
pub fn path(spool_dir: &Path) -> PathBuf {
    spool_dir.join("state").join("checkpoint.bin")
}

/// Writes `sealed` bytes atomically (temp + fsync + rename + fsync folder).
pub fn write(spool_dir: &Path, sealed: &[u8]) -> Result<(), CheckpointError> {
    let p = path(spool_dir);
    let tmp = p.with_extension("tmp");
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CheckpointError::Io { path, source }
    };
    if let Some(dir) = p.parent() {
        fs::create_dir_all(dir).map_err(io(dir))?;
    }
    {
        let mut f = File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(sealed).map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
    }
    fs::rename(&tmp, &p).map_err(io(&p))?;
    if let Some(dir) = p.parent() {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io(dir))?;
    }
    Ok(())
}

/// Reads the checkpoint's body if there is one. An unusable file is moved
/// aside (`checkpoint.bin.bad-{µs}`) and reported as `Invalid`.
pub fn read(spool_dir: &Path) -> Result<Option<Vec<u8>>, CheckpointError> {
    let p = path(spool_dir);
    let bytes = match fs::read(&p) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(CheckpointError::Io { path: p, source }),
    };
    match open(&bytes) {
        Ok(body) => Ok(Some(body.to_vec())),
        Err(why) => Err(set_aside(&p, why)),
    }
}

/// Moves an unusable checkpoint out of the way, keeping it for inspection.
pub fn set_aside(p: &Path, why: String) -> CheckpointError {
    let aside = p.with_extension(format!("bin.bad-{}", crate::util::time::now_micros()));
    let _ = fs::rename(p, &aside);
    CheckpointError::Invalid {
        path: p.to_path_buf(),
        why: format!("{why}; moved to {}", aside.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damaged_or_foreign_files_are_refused() {
        let good = seal(b"hello");
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(open(&flipped).unwrap_err().contains("checksum"));
        let mut v2 = good.clone();
        v2[8] = 2;
        assert!(open(&v2).unwrap_err().contains("version 2"));
        assert!(open(&good[..good.len() - 1])
            .unwrap_err()
            .contains("truncated"));
        assert!(open(b"garbage").is_err());
    }

    #[test]
    fn an_unusable_checkpoint_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("state")).unwrap();
        std::fs::write(path(dir.path()), b"not a checkpoint at all, really").unwrap();
        assert!(matches!(
            read(dir.path()),
            Err(CheckpointError::Invalid { .. })
        ));
        assert!(!path(dir.path()).exists());
        assert_eq!(read(dir.path()).unwrap(), None, "next start is fresh");
    }
}
