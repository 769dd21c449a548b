//! Checkpoints of the pipeline's state: detector windows, open event-time
//! windows and watermarks, fatigue history. Written atomically (a temporary
//! file, fsync, rename) right after a flush has made every table file
//! durable, so state and files always agree, and read back at start-up so a
//! restart keeps its baselines.
//!
//! `spool_dir/state/checkpoint.bin`, a header and one frame of
//! [`super::frame`] (little-endian):
//!
//! ```text
//! offset  bytes  field
//!      0      8  magic "PSCKPT\0\0"
//!      8      4  format version, u32 = 2
//!     12      8  body length n, u64
//!     20      4  CRC-32 of the body, u32
//!     24      n  body: the pipeline's snapshot (util::codec encoding)
//! ```
//!
//! Version 1 (builds before issue 11) had an FNV-1a 64 checksum, `u64` at
//! 20..28, and the body at 28. A version 1 file is still read at start-up,
//! so an upgrade keeps its baselines; the next checkpoint is version 2.
//!
//! A file of another version, a bad checksum or a body that does not parse
//! is moved aside with an ERROR and a counter, and the gateway starts fresh
//! rather than crash-loop.

use super::frame::{self, FrameError, Framing, Header};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Current format version.
pub const VERSION: u32 = 2;
/// The version before, read once after an upgrade and never written.
const LEGACY_VERSION: u32 = 1;
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

/// Wraps a body in the header.
pub fn seal(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(frame::HEADER_LEN + frame::CURRENT.head_len() + body.len());
    frame::put_header(&mut out, MAGIC, VERSION);
    frame::CURRENT.put(&mut out, body);
    out
}

/// Checks the header and returns the body (of this version or the one before).
pub fn open(bytes: &[u8]) -> Result<&[u8], String> {
    let Header::Ours { version, rest } = frame::header(bytes, MAGIC) else {
        return Err("not a pitchside checkpoint".into());
    };
    let framing: &Framing = match version {
        VERSION => &frame::CURRENT,
        LEGACY_VERSION => &frame::LEGACY_CHECKPOINT,
        v => {
            return Err(format!(
                "format version {v}, this build reads {VERSION} (and {LEGACY_VERSION})"
            ))
        }
    };
    match framing.split(rest) {
        Ok((body, [])) => Ok(body),
        Ok((body, tail)) => Err(too_short(body.len() + tail.len(), body.len() as u64)),
        Err(FrameError::Torn { want, have }) => Err(too_short(have, want)),
        Err(FrameError::CutHead) => Err("header is cut short (truncated?)".into()),
        Err(FrameError::Damaged) => Err("checksum mismatch (damaged)".into()),
    }
}

fn too_short(have: usize, want: u64) -> String {
    format!("body is {have} bytes, header says {want} (truncated?)")
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
        let mut v3 = good.clone();
        v3[8] = 3;
        assert!(open(&v3).unwrap_err().contains("version 3"));
        for cut in [good.len() - 1, 20, 12] {
            assert!(open(&good[..cut]).unwrap_err().contains("truncated"));
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(open(&longer).unwrap_err().contains("header says 5"));
        assert!(open(b"garbage").is_err());
        assert!(open(b"PSCKPT").is_err());
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
