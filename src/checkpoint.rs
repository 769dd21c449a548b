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

/// A malformed body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

/// Appends values to a body.
#[derive(Debug, Default)]
pub struct Enc(pub Vec<u8>);

impl Enc {
    /// A `u8`.
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    /// A `u32`.
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// An `i64`.
    pub fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// An `f64` (bit-exact).
    pub fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_bits().to_le_bytes());
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
    /// A string.
    pub fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    /// An optional `i64`.
    pub fn opt_i64(&mut self, v: Option<i64>) {
        match v {
            Some(x) => {
                self.u8(1);
                self.i64(x);
            }
            None => self.u8(0),
        }
    }
    /// An optional string.
    pub fn opt_str(&mut self, v: Option<&str>) {
        match v {
            Some(x) => {
                self.u8(1);
                self.str(x);
            }
            None => self.u8(0),
        }
    }
}

/// Reads values from a body; every read checks bounds.
#[derive(Debug)]
pub struct Dec<'a> {
    b: &'a [u8],
    i: usize,
}

type R<T> = Result<T, DecodeError>;

impl<'a> Dec<'a> {
    /// A reader over `b`.
    pub fn new(b: &'a [u8]) -> Dec<'a> {
        Dec { b, i: 0 }
    }
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self
            .i
            .checked_add(n)
            .ok_or(DecodeError("length overflow"))?;
        let s = self.b.get(self.i..end).ok_or(DecodeError("truncated"))?;
        self.i = end;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> R<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    /// A `u8`.
    pub fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }
    /// A `u32`.
    pub fn u32(&mut self) -> R<u32> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    /// A `u64`.
    pub fn u64(&mut self) -> R<u64> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    /// An `i64`.
    pub fn i64(&mut self) -> R<i64> {
        Ok(i64::from_le_bytes(self.arr()?))
    }
    /// An `f64`.
    pub fn f64(&mut self) -> R<f64> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// Length-prefixed bytes.
    pub fn bytes(&mut self) -> R<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    /// A string.
    pub fn string(&mut self) -> R<String> {
        String::from_utf8(self.bytes()?.to_vec()).map_err(|_| DecodeError("string is not UTF-8"))
    }
    /// An optional `i64`.
    pub fn opt_i64(&mut self) -> R<Option<i64>> {
        Ok(match self.u8()? {
            0 => None,
            1 => Some(self.i64()?),
            _ => return Err(DecodeError("bad option tag")),
        })
    }
    /// An optional string.
    pub fn opt_string(&mut self) -> R<Option<String>> {
        Ok(match self.u8()? {
            0 => None,
            1 => Some(self.string()?),
            _ => return Err(DecodeError("bad option tag")),
        })
    }
    /// A count of items that each take at least `min_item` bytes (guards
    /// against absurd counts in damaged files).
    pub fn count(&mut self, min_item: usize) -> R<usize> {
        let n = self.u64()? as usize;
        if n.saturating_mul(min_item.max(1)) > self.b.len() - self.i {
            return Err(DecodeError("count larger than the file"));
        }
        Ok(n)
    }
    /// Whether everything was read.
    pub fn finished(&self) -> bool {
        self.i == self.b.len()
    }
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
    let aside = p.with_extension(format!("bin.bad-{}", crate::timefmt::now_micros()));
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
    fn values_round_trip_through_the_codec() {
        let mut e = Enc::default();
        e.u8(7);
        e.i64(-5);
        e.f64(1e9 + 0.001);
        e.str("é");
        e.opt_i64(None);
        e.opt_str(Some("x"));
        let body = seal(&e.0);
        let b = open(&body).unwrap();
        let mut d = Dec::new(b);
        assert_eq!(d.u8().unwrap(), 7);
        assert_eq!(d.i64().unwrap(), -5);
        assert_eq!(d.f64().unwrap(), 1e9 + 0.001);
        assert_eq!(d.string().unwrap(), "é");
        assert_eq!(d.opt_i64().unwrap(), None);
        assert_eq!(d.opt_string().unwrap().as_deref(), Some("x"));
        assert!(d.finished());
    }

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

    fn pipeline(max_keys: u32) -> crate::pipeline::Pipeline {
        let text = format!(
            "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[detector]\nmax_keys = {max_keys}\n[windows]\nwatermark_delay = \"5s\"\n[output]\nstore = \"file:///tmp/x\"\nspool_dir = \"/tmp/y\"\n"
        );
        let c = crate::config::parse(&text, "test")
            .unwrap()
            .validate()
            .unwrap();
        crate::pipeline::Pipeline::new(&c, false)
    }

    fn feed(
        p: &mut crate::pipeline::Pipeline,
        lines: &[String],
    ) -> (Vec<crate::pipeline::LiveAlert>, String) {
        for l in lines {
            p.process_bytes("test", None, l.as_bytes(), 0, 0);
        }
        (p.drain_alerts(), format!("{:?}", p.take_tables(1)))
    }

    #[test]
    fn a_restored_pipeline_continues_exactly_like_the_original() {
        let sim_cfg = crate::config::SimulatorSection {
            anomaly_rate: 0.01,
            fatigue_rate: 0.3,
            ..Default::default()
        };
        let mut sim = crate::sources::simulator::Simulator::new(&sim_cfg, 1_795_980_600_000_000);
        let lines: Vec<String> = (0..40_000).map(|_| sim.next_line().0).collect();
        for max_keys in [10_000, 50] {
            let mut a = pipeline(max_keys);
            feed(&mut a, &lines[..20_000]);
            let sealed = a.checkpoint(7);
            let mut b = pipeline(max_keys);
            assert_eq!(b.restore(open(&sealed).unwrap()).unwrap(), 7);
            let (alerts_a, tables_a) = feed(&mut a, &lines[20_000..]);
            let (alerts_b, tables_b) = feed(&mut b, &lines[20_000..]);
            assert!(!alerts_a.is_empty());
            assert!(alerts_a
                .iter()
                .any(|x| matches!(x, crate::pipeline::LiveAlert::Fatigue(_))));
            assert_eq!(alerts_a.len(), alerts_b.len(), "max_keys {max_keys}");
            if let Some(i) = (0..alerts_a.len()).find(|&i| alerts_a[i] != alerts_b[i]) {
                panic!(
                    "max_keys {max_keys}: alert {i} differs:\n{:?}\n{:?}",
                    alerts_a[i], alerts_b[i]
                );
            }
            assert!(tables_a == tables_b, "max_keys {max_keys}: tables differ");
            assert_eq!(a.detector().keys(), b.detector().keys());
        }
    }

    #[test]
    fn a_truncated_body_is_a_decode_error_not_a_panic() {
        let mut a = pipeline(100);
        let mut sim =
            crate::sources::simulator::Simulator::new(&Default::default(), 1_795_980_600_000_000);
        let lines: Vec<String> = (0..2000).map(|_| sim.next_line().0).collect();
        feed(&mut a, &lines);
        let sealed = a.checkpoint(0);
        let body = open(&sealed).unwrap();
        for cut in [0, 1, 9, body.len() / 3, body.len() - 1] {
            let mut b = pipeline(100);
            assert!(b.restore(&body[..cut]).is_err(), "cut at {cut}");
        }
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
