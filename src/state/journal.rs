//! The input journal: every input the pipeline takes is appended here and
//! fsynced (group commit) before its source is acknowledged, so a crash
//! never loses an acknowledged MQTT message, and a power cut loses at most
//! `output.sync_interval` of serial lines. After a restart, the inputs since
//! the last checkpoint are replayed from the journal, rebuilding exactly the
//! state and rows the crash interrupted.
//!
//! Files are `spool_dir/journal/{generation:012}.log`; a flush starts a new
//! generation and the checkpoint written after it names that generation, so
//! older files are deleted once the checkpoint is durable. A record is
//! `u32 length, u64 FNV-1a checksum, body`; a torn record at the end of a
//! file (a crash mid-write) ends that file's replay.

use crate::model::{FramingError, Micros, RawInput, SensorKind};
use crate::util::codec::{Dec, Enc};
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// Journal failures: all about the local disk.
#[derive(Debug, thiserror::Error)]
#[error("journal {path}: {source} (check output.spool_dir's disk)")]
pub struct JournalError {
    path: PathBuf,
    source: std::io::Error,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> JournalError + '_ {
    move |source| JournalError {
        path: path.to_path_buf(),
        source,
    }
}

/// The folder of a spool's journal.
pub fn dir(spool_dir: &Path) -> PathBuf {
    spool_dir.join("journal")
}

fn file_of(dir: &Path, gen: u64) -> PathBuf {
    dir.join(format!("{gen:012}.log"))
}

fn generations(dir: &Path) -> Vec<u64> {
    let mut v: Vec<u64> = fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.strip_suffix(".log")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort_unstable();
    v
}

/// An open journal generation.
#[derive(Debug)]
pub struct Journal {
    dir: PathBuf,
    gen: u64,
    out: BufWriter<File>,
    unsynced: bool,
}

fn kind_code(k: Option<SensorKind>) -> u8 {
    k.map_or(255, |k| k as u8)
}

fn encode(input: &RawInput) -> Vec<u8> {
    let mut e = Enc::default();
    e.str(&input.source);
    e.u8(kind_code(input.sensor_hint));
    e.i64(input.received_at);
    match input.framing_error {
        Some(FramingError::TooLarge { len }) => {
            e.u8(1);
            e.u64(len as u64);
        }
        None => e.u8(0),
    }
    e.bytes(&input.payload);
    e.0
}

fn decode(body: &[u8]) -> Option<RawInput> {
    let mut d = Dec::new(body);
    let source = d.string().ok()?;
    let hint = match d.u8().ok()? {
        255 => None,
        k => Some(*SensorKind::ALL.get(k as usize)?),
    };
    let received_at: Micros = d.i64().ok()?;
    let framing_error = match d.u8().ok()? {
        0 => None,
        1 => Some(FramingError::TooLarge {
            len: d.u64().ok()? as usize,
        }),
        _ => return None,
    };
    let payload = d.bytes().ok()?.to_vec();
    d.finished().then(|| RawInput {
        source: source.into(),
        sensor_hint: hint,
        payload,
        received_at,
        framing_error,
        ack: None,
    })
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Journal {
    /// Opens generation `gen` for appending (creating the folder and file).
    pub fn open(dir: &Path, gen: u64) -> Result<Journal, JournalError> {
        fs::create_dir_all(dir).map_err(io(dir))?;
        let path = file_of(dir, gen);
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        // The new file's directory entry must survive a power cut too.
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io(dir))?;
        Ok(Journal {
            dir: dir.to_path_buf(),
            gen,
            out: BufWriter::with_capacity(256 * 1024, f),
            unsynced: false,
        })
    }

    /// The generation being written.
    pub fn generation(&self) -> u64 {
        self.gen
    }

    /// Appends an input (buffered; durable after [`Journal::sync`]).
    pub fn append(&mut self, input: &RawInput) -> Result<(), JournalError> {
        let body = encode(input);
        let path = file_of(&self.dir, self.gen);
        let mut head = [0u8; 12];
        head[..4].copy_from_slice(&(body.len() as u32).to_le_bytes());
        head[4..].copy_from_slice(&fnv(&body).to_le_bytes());
        self.out.write_all(&head).map_err(io(&path))?;
        self.out.write_all(&body).map_err(io(&path))?;
        self.unsynced = true;
        Ok(())
    }

    /// Whether appended inputs are waiting for [`Journal::sync`].
    pub fn unsynced(&self) -> bool {
        self.unsynced
    }

    /// Makes everything appended durable (write + fdatasync).
    pub fn sync(&mut self) -> Result<(), JournalError> {
        if !self.unsynced {
            return Ok(());
        }
        let path = file_of(&self.dir, self.gen);
        self.out.flush().map_err(io(&path))?;
        self.out.get_ref().sync_data().map_err(io(&path))?;
        self.unsynced = false;
        Ok(())
    }

    /// Syncs and starts the next generation; returns its number.
    pub fn rotate(&mut self) -> Result<u64, JournalError> {
        self.sync()?;
        *self = Journal::open(&self.dir, self.gen + 1)?;
        Ok(self.gen)
    }
}

/// Replays every input of generations `from` and later, in order; returns
/// the next free generation number.
pub fn replay(dir: &Path, from: u64, mut each: impl FnMut(RawInput)) -> Result<u64, JournalError> {
    let gens = generations(dir);
    for &g in gens.iter().filter(|&&g| g >= from) {
        let path = file_of(dir, g);
        let bytes = fs::read(&path).map_err(io(&path))?;
        let mut i = 0;
        while i + 12 <= bytes.len() {
            let len = u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap_or([0; 4])) as usize;
            let sum = u64::from_le_bytes(bytes[i + 4..i + 12].try_into().unwrap_or([0; 8]));
            let Some(body) = bytes.get(i + 12..i + 12 + len) else {
                break;
            };
            if fnv(body) != sum {
                break;
            }
            match decode(body) {
                Some(input) => each(input),
                None => break,
            }
            i += 12 + len;
        }
        if i < bytes.len() {
            tracing::warn!(file = %path.display(), offset = i, "Journal ends in a torn record (a crash mid-write); replay stops there.");
        }
    }
    Ok(gens.last().map_or(from, |g| (g + 1).max(from)))
}

/// Deletes generations before `gen` (their inputs are in a durable checkpoint).
pub fn remove_before(dir: &Path, gen: u64) {
    for g in generations(dir).into_iter().filter(|&g| g < gen) {
        let _ = fs::remove_file(file_of(dir, g));
    }
}

/// First wait before a failed journal is opened again; doubled after each
/// failure up to [`RETRY_MAX`], reset once the journal works again.
pub const RETRY_FIRST: std::time::Duration = std::time::Duration::from_secs(1);
/// Longest wait between attempts to bring a failed journal back.
pub const RETRY_MAX: std::time::Duration = std::time::Duration::from_secs(60);

/// The pipeline's use of the journal: append every input, fsync in groups,
/// then acknowledge. Acks wait for the fsync; serial input waits at most
/// `sync_interval`.
///
/// When the journal fails (a full or broken disk), the pipeline runs on
/// without it (acknowledging MQTT on receipt), counts every input that is
/// not crash-safe (`unjournaled_inputs`), marks the journal off
/// (`journal_down_since`, behind `pitchside_journal_enabled` and `/healthz`)
/// and opens a new generation again with backoff until one is fsynced.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    journal: Option<Journal>,
    pending: Vec<crate::model::AckToken>,
    last_sync: std::time::Instant,
    sync_interval: std::time::Duration,
    /// The generation a reopened journal starts (after every existing one).
    next_gen: u64,
    retry_at: std::time::Instant,
    backoff: std::time::Duration,
    /// Reopened after a failure; "back" once its first fsync succeeds.
    recovering: bool,
    /// Inputs appended since the last successful fsync.
    unsynced_inputs: u64,
    stats: std::sync::Arc<super::StateStats>,
}

impl Recorder {
    /// Replays the journal from generation `from` through `each`, then opens
    /// the next generation for new inputs. Returns the recorder and how many
    /// inputs were replayed.
    pub fn start(
        spool_dir: &Path,
        from: u64,
        sync_interval: std::time::Duration,
        stats: std::sync::Arc<super::StateStats>,
        each: impl FnMut(RawInput),
    ) -> (Recorder, u64) {
        let dir = dir(spool_dir);
        let mut n = 0u64;
        let mut each = each;
        let next = match replay(&dir, from, |i| {
            n += 1;
            each(i)
        }) {
            Ok(next) => next,
            Err(e) => {
                stats.journal_failures.fetch_add(1, Ordering::Relaxed);
                tracing::error!(error = %e, "Journal could not be read: inputs since the last checkpoint are lost (counted in pitchside_journal_failures_total).");
                generations(&dir).last().map_or(from, |g| g + 1)
            }
        };
        let mut r = Recorder {
            dir,
            journal: None,
            pending: Vec::new(),
            last_sync: std::time::Instant::now(),
            sync_interval,
            next_gen: next,
            retry_at: std::time::Instant::now(),
            backoff: RETRY_FIRST,
            recovering: false,
            unsynced_inputs: 0,
            stats,
        };
        match Journal::open(&r.dir, next) {
            Ok(j) => r.journal = Some(j),
            Err(e) => r.fail(&e, "open"),
        }
        (r, n)
    }

    /// The journal failed: run without it, count, and schedule a retry.
    fn fail(&mut self, e: &JournalError, what: &str) {
        if let Some(j) = self.journal.take() {
            // Never reuse a generation that may end in a torn record.
            self.next_gen = self.next_gen.max(j.generation() + 1);
        }
        let lost = std::mem::take(&mut self.unsynced_inputs);
        let s = &self.stats;
        s.unjournaled_inputs.fetch_add(lost, Ordering::Relaxed);
        s.journal_failures.fetch_add(1, Ordering::Relaxed);
        let first = s
            .journal_down_since
            .compare_exchange(
                0,
                crate::util::time::now_micros(),
                Ordering::Relaxed,
                Ordering::Relaxed,
            )
            .is_ok();
        let retry_s = self.backoff.as_secs_f64();
        if first {
            tracing::error!(error = %e, retry_s, "Journal {what} failed: running without it (a crash loses the inputs since the last checkpoint; MQTT is acknowledged on receipt; counted in pitchside_unjournaled_inputs_total). Free space on output.spool_dir's disk; it is retried with backoff.");
        } else {
            tracing::warn!(error = %e, retry_s, "Journal {what} failed again; retrying with backoff.");
        }
        self.recovering = false;
        self.retry_at = std::time::Instant::now() + self.backoff;
        self.backoff = (self.backoff * 2).min(RETRY_MAX);
    }

    /// While the journal is off, opens a new generation once the backoff has passed.
    fn retry(&mut self) {
        if self.journal.is_some() || std::time::Instant::now() < self.retry_at {
            return;
        }
        match Journal::open(&self.dir, self.next_gen) {
            Ok(j) => {
                self.next_gen = j.generation() + 1;
                self.journal = Some(j);
                self.recovering = true;
            }
            Err(e) => self.fail(&e, "open"),
        }
    }

    /// Appends an input and keeps its acknowledgement until the next sync.
    pub fn record(&mut self, input: &mut RawInput) {
        match self.journal.as_mut().map(|j| j.append(input)) {
            Some(Ok(())) => self.unsynced_inputs += 1,
            Some(Err(e)) => {
                self.fail(&e, "write");
                self.stats
                    .unjournaled_inputs
                    .fetch_add(1, Ordering::Relaxed);
            }
            None => {
                self.stats
                    .unjournaled_inputs
                    .fetch_add(1, Ordering::Relaxed);
            }
        }
        if let Some(a) = input.ack.take() {
            self.pending.push(a);
        }
    }

    /// Fsyncs when acknowledgements wait or `sync_interval` has passed, then
    /// acknowledges. While the journal is off, tries to bring it back.
    pub fn commit(&mut self, force: bool) {
        let due =
            force || !self.pending.is_empty() || self.last_sync.elapsed() >= self.sync_interval;
        if !due {
            return;
        }
        self.retry();
        if let Some(j) = self.journal.as_mut() {
            let r = if j.unsynced() {
                match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
                    Ok(tokio::runtime::RuntimeFlavor::MultiThread) => {
                        tokio::task::block_in_place(|| j.sync())
                    }
                    _ => j.sync(),
                }
            } else {
                Ok(())
            };
            match r {
                Ok(()) => {
                    self.unsynced_inputs = 0;
                    if std::mem::take(&mut self.recovering) {
                        self.back();
                    }
                }
                Err(e) => self.fail(&e, "fsync"),
            }
        }
        self.last_sync = std::time::Instant::now();
        // Durable now (or the journal is gone, and waiting longer would only
        // stall the broker): acknowledge.
        for a in self.pending.drain(..) {
            a.ack();
        }
    }

    /// A reopened journal was fsynced: it works again.
    fn back(&mut self) {
        let since = self.stats.journal_down_since.swap(0, Ordering::Relaxed);
        let off_s = if since > 0 {
            (crate::util::time::now_micros() - since) / 1_000_000
        } else {
            0
        };
        tracing::info!(
            off_s,
            unjournaled_inputs = self.stats.unjournaled_inputs.load(Ordering::Relaxed),
            generation = self.next_gen.saturating_sub(1),
            "Journal is back: inputs are crash-safe again."
        );
        self.backoff = RETRY_FIRST;
    }

    /// Commits, then starts the next generation; returns its number (the one
    /// a checkpoint taken now replays from).
    pub fn rotate(&mut self) -> u64 {
        self.commit(true);
        match self.journal.as_mut().map(|j| j.rotate()) {
            Some(Ok(g)) => {
                self.next_gen = g + 1;
                g
            }
            Some(Err(e)) => {
                self.fail(&e, "rotation");
                self.next_gen
            }
            // Nothing is journaled now: a checkpoint taken now covers every
            // generation so far, and a reopened journal starts at next_gen.
            None => self.next_gen,
        }
    }

    /// The journal folder (for deleting generations a checkpoint covers).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(i: u32) -> RawInput {
        RawInput {
            source: "serial:/dev/x".into(),
            sensor_hint: if i.is_multiple_of(2) {
                Some(SensorKind::Crowd)
            } else {
                None
            },
            payload: format!("line {i}").into_bytes(),
            received_at: i as i64,
            framing_error: (i == 3).then_some(FramingError::TooLarge { len: 9999 }),
            ack: None,
        }
    }

    fn collect(dir: &Path, from: u64) -> (Vec<String>, u64) {
        let mut v = Vec::new();
        let next = replay(dir, from, |r| {
            v.push(format!(
                "{}|{:?}|{}|{:?}|{}",
                r.source,
                r.sensor_hint,
                r.received_at,
                r.framing_error,
                String::from_utf8_lossy(&r.payload)
            ))
        })
        .unwrap();
        (v, next)
    }

    #[test]
    fn inputs_come_back_in_order_across_generations() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(dir.path(), 0).unwrap();
        for i in 0..5 {
            j.append(&input(i)).unwrap();
        }
        assert_eq!(j.rotate().unwrap(), 1);
        for i in 5..8 {
            j.append(&input(i)).unwrap();
        }
        j.sync().unwrap();
        let (all, next) = collect(dir.path(), 0);
        assert_eq!(all.len(), 8);
        assert!(all[3].contains("TooLarge { len: 9999 }"));
        assert!(all[7].ends_with("line 7"));
        assert_eq!(next, 2);
        assert_eq!(collect(dir.path(), 1).0.len(), 3);
        remove_before(dir.path(), 1);
        assert_eq!(generations(dir.path()), vec![1]);
    }

    #[test]
    fn a_torn_last_record_ends_replay_without_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = Journal::open(dir.path(), 0).unwrap();
        for i in 0..3 {
            j.append(&input(i)).unwrap();
        }
        j.sync().unwrap();
        let path = file_of(dir.path(), 0);
        let len = fs::metadata(&path).unwrap().len();
        OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(len - 3)
            .unwrap();
        assert_eq!(collect(dir.path(), 0).0.len(), 2);
    }
}
