//! The input journal on a disk that fills up and frees again: it goes off,
//! says so (metrics, `/healthz`), counts what ran without it, and comes back
//! by itself once there is space. And journal files of the build before
//! issue 11 (no header, FNV-1a records), made here the old way: replayed
//! once after an upgrade, then replaced.

use crate::common;

use common::services::*;
use common::tmpfs::Tmpfs;
use common::{bytes_under, VenueConfig};
use pitchside::model::{FramingError, RawInput, SensorKind};
use pitchside::state::{journal, StateStats};
use pitchside::util::codec::Enc;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Fills the filesystem of `dir` with one file; returns its path.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.sync_all();
    path
}

#[test]
fn a_journal_that_fails_on_a_full_disk_comes_back_when_space_returns() {
    let dir = tempfile::tempdir().unwrap();
    let Some(_tmpfs) = Tmpfs::mount(&dir.path().join("spool/journal"), "1m") else {
        return;
    };
    let filler = fill(&dir.path().join("spool/journal"));
    let port = free_port();
    // No flush (so no checkpoint) during the test: after the crash below,
    // everything journaled since the start is replayed.
    let cfg = VenueConfig::fast(dir.path(), port)
        .set_str("metrics", "health_grace", "1s")
        .set_str("output", "flush_interval", "10m")
        .extra("[sources.simulator]\nrate = 400\n")
        .write();
    let gw = Gateway::start(&cfg, port, &[]);
    gw.wait_metric(
        "pitchside_unjournaled_inputs_total",
        1.0,
        Duration::from_secs(20),
    );
    let text = get_metrics(port).unwrap_or_default();
    assert!(text.contains("\npitchside_journal_enabled 0\n"), "{text}");
    // Off for longer than metrics.health_grace: unhealthy, and why.
    assert!(
        wait_until(Duration::from_secs(10), || http_get(port, "/healthz")
            .is_some_and(
                |r| r.starts_with("HTTP/1.1 503") && r.contains("journal")
            )),
        "{:?}",
        http_get(port, "/healthz")
    );

    std::fs::remove_file(&filler).unwrap();
    gw.log
        .wait_for("Journal is back", 1, Duration::from_secs(30));
    gw.wait_metric("pitchside_journal_enabled", 1.0, Duration::from_secs(10));
    assert!(wait_until(Duration::from_secs(10), || http_get(
        port, "/healthz"
    )
    .is_some_and(|r| r.starts_with("HTTP/1.1 200"))));
    let lost = gw.metric("pitchside_unjournaled_inputs_total");
    assert!(lost > 0.0);
    // Inputs are journaled again: the count stops growing.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(gw.metric("pitchside_unjournaled_inputs_total"), lost);
    assert_eq!(gw.log.count("Journal is back"), 1);
    // And they are crash-safe again: a kill -9 now replays them.
    gw.kill9();
    let gw = Gateway::start(&cfg, port, &[]);
    let (replayed, line) = replayed(&gw);
    // 400 inputs/s for the second after it came back.
    assert!(replayed >= 200, "{line}");
    gw.stop();
}

/// How many inputs a starting gateway replayed from the journal, and its
/// log line saying so.
fn replayed(gw: &Gateway) -> (u64, String) {
    let line = gw
        .log
        .wait_line("Replayed the journal", Duration::from_secs(20));
    let n = line
        .split("inputs=")
        .nth(1)
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    (n, line)
}

/// The header of a journal file this build writes.
fn header() -> Vec<u8> {
    [&b"PSJRNL\0\0"[..], &journal::VERSION.to_le_bytes()].concat()
}

fn input(i: u32) -> RawInput {
    RawInput {
        source: "serial:/dev/x".into(),
        sensor_hint: i.is_multiple_of(2).then_some(SensorKind::Crowd),
        payload: format!("line {i}").into_bytes(),
        received_at: i as i64,
        framing_error: (i == 3).then_some(FramingError::TooLarge { len: 9999 }),
        ack: None,
        mapping: None,
    }
}

/// A journal file as builds before issue 11 wrote it: no header, records of
/// `u32 length, u64 FNV-1a 64 of the body, body`.
fn old_format_journal(inputs: impl IntoIterator<Item = RawInput>) -> Vec<u8> {
    let fnv = |b: &[u8]| {
        b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
            (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let mut out = Vec::new();
    for i in inputs {
        let mut e = Enc::default();
        e.str(&i.source);
        e.u8(i.sensor_hint.map_or(255, |k| k as u8));
        e.i64(i.received_at);
        match i.framing_error {
            Some(FramingError::TooLarge { len }) => {
                e.u8(1);
                e.u64(len as u64);
            }
            None => e.u8(0),
        }
        e.bytes(&i.payload);
        out.extend_from_slice(&(e.0.len() as u32).to_le_bytes());
        out.extend_from_slice(&fnv(&e.0).to_le_bytes());
        out.extend_from_slice(&e.0);
    }
    out
}

/// Every input of the journal in `dir` from generation 0, as text.
fn collect(dir: &Path) -> Vec<String> {
    let mut v = Vec::new();
    journal::replay(dir, 0, |r| v.push(format!("{r:?}"))).unwrap();
    v
}

fn generation(dir: &Path, gen: u64) -> PathBuf {
    dir.join(format!("{gen:012}.log"))
}

#[test]
fn an_old_format_file_is_replayed_as_before_and_stops_at_damage_as_before() {
    let new = tempfile::tempdir().unwrap();
    let mut j = journal::Journal::open(new.path(), 0).unwrap();
    for i in 0..6 {
        j.append(&input(i)).unwrap();
    }
    j.sync().unwrap();
    let old = tempfile::tempdir().unwrap();
    let mut bytes = old_format_journal((0..6).map(input));
    std::fs::write(generation(old.path(), 0), &bytes).unwrap();
    assert_eq!(collect(old.path()).len(), 6);
    assert_eq!(collect(old.path()), collect(new.path()));

    let len = bytes.len();
    std::fs::write(generation(old.path(), 0), &bytes[..len - 2]).unwrap();
    assert_eq!(collect(old.path()).len(), 5, "a torn last record");
    bytes[len - 1] ^= 1;
    std::fs::write(generation(old.path(), 0), &bytes).unwrap();
    assert_eq!(collect(old.path()).len(), 5, "a damaged last record");
}

#[test]
fn an_old_format_file_is_replayed_then_removed_after_the_next_checkpoint() {
    let spool = tempfile::tempdir().unwrap();
    let dir = journal::dir(spool.path());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(generation(&dir, 0), old_format_journal((0..4).map(input))).unwrap();
    let stats = Arc::new(StateStats::default());
    let mut seen = Vec::new();
    let (mut r, n) = journal::Recorder::start(
        spool.path(),
        0,
        (Duration::from_millis(10), u64::MAX),
        stats.clone(),
        |i| seen.push(i.received_at),
    );
    assert_eq!((n, seen), (4, vec![0, 1, 2, 3]));
    r.record(&mut input(4));
    r.commit(true);
    let new = std::fs::read(generation(&dir, 1)).unwrap();
    assert!(new.starts_with(&header()), "{new:?}");
    // A checkpoint taken now replays from the generation rotate() returns;
    // once it is durable, every generation before it goes.
    let from = r.rotate();
    journal::remove_before(&dir, from);
    assert!(!generation(&dir, 0).exists() && !generation(&dir, 1).exists());
    assert!(generation(&dir, from).exists());
    assert_eq!(stats.journal_failures.load(Ordering::Relaxed), 0);
}
#[test]
fn an_old_format_journal_is_replayed_at_start_up_and_gone_after_the_next_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = fast_config(dir.path(), port, "[sources.simulator]\nrate = 50\n");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as i64;
    let mut sim = pitchside::sources::simulator::Simulator::new(&Default::default(), now);
    let inputs = (0..300).map(|_| RawInput {
        source: "simulator".into(),
        sensor_hint: None,
        payload: sim.next_line().0.into_bytes(),
        received_at: now,
        framing_error: None,
        ack: None,
        mapping: None,
    });
    let folder = journal::dir(&dir.path().join("spool"));
    std::fs::create_dir_all(&folder).unwrap();
    let old = generation(&folder, 0);
    std::fs::write(&old, old_format_journal(inputs)).unwrap();

    let gw = Gateway::start(&cfg, port, &[]);
    let (n, line) = replayed(&gw);
    assert_eq!(n, 300, "{line}");
    assert!(
        wait_until(Duration::from_secs(20), || !old.exists()),
        "the old file is removed once a checkpoint covers it"
    );
    gw.stop();
    let logs: Vec<PathBuf> = std::fs::read_dir(&folder)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(!logs.is_empty());
    for p in logs {
        let bytes = std::fs::read(&p).unwrap();
        assert!(
            bytes.is_empty() || bytes.starts_with(&header()),
            "{} has no header",
            p.display()
        );
    }
}

/// A state folder that turns read-only while the gateway runs (ext4's
/// `errors=remount-ro` on a failing SD card): the spool's sequence files
/// live there, so every flush fails and no checkpoint is written, and no
/// journal generation is ever deleted.
/// The journal stops at `output.max_journal_bytes` instead of filling the
/// disk, and says so.
#[test]
fn checkpoints_failing_on_a_read_only_state_folder_stop_the_journal_at_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let Some(state) = Tmpfs::mount(&dir.path().join("spool/state"), "1m") else {
        return;
    };
    let port = free_port();
    let bound = 256 * 1024;
    let cfg = VenueConfig::fast(dir.path(), port)
        .set_str("output", "max_journal_bytes", "256KiB")
        .extra("[sources.simulator]\nrate = 2000\n")
        .write();
    let gw = Gateway::start(&cfg, port, &[]);
    let t = Duration::from_secs(30);
    gw.log.wait_for("pitchside running", 1, t);
    // As ext4's errors=remount-ro does to a failing SD card.
    state.read_only();
    gw.wait_metric("pitchside_unjournaled_inputs_total", 1.0, t);
    gw.log
        .wait_for("Journal reached output.max_journal_bytes", 1, t);
    let text = get_metrics(port).unwrap_or_default();
    assert!(text.contains("\npitchside_journal_enabled 0\n"), "{text}");
    // Inputs keep coming, checkpoints keep failing: still at the bound.
    std::thread::sleep(Duration::from_secs(3));
    let journal = bytes_under(&dir.path().join("spool/journal"));
    assert!(journal <= bound + 4096, "journal holds {journal} bytes");
    assert!(gw.log.count("Rows could not be written to the spool") >= 3);
    let rss = gw.peak_rss_kib();
    let log = gw.stop();
    eprintln!("journal {journal} bytes; peak RSS {rss} KiB");
    assert_eq!(
        log.matches("Journal reached output.max_journal_bytes")
            .count(),
        1,
        "said once:\n{log}"
    );
}

/// A journal of `n` generic events (about 130 bytes each) from 100 devices
/// over the last 10 minutes, as a long run without a checkpoint leaves it.
fn long_journal(spool: &Path, n: usize) {
    let mut j = journal::Journal::open(&journal::dir(spool), 0).unwrap();
    let now = pitchside::util::time::now_micros();
    let step = 600_000_000 / n as i64;
    for i in 0..n {
        let at = now - 600_000_000 + i as i64 * step;
        let line = format!(
            r#"{{"device_id":"env-{}","event_time":{},"metric":"temp","value":{}}}"#,
            i % 100,
            at / 1000,
            20.0 + (i % 7) as f64 * 0.1
        );
        j.append(&RawInput {
            source: "mqtt:venue/generic/env".into(),
            sensor_hint: Some(SensorKind::Generic),
            payload: line.into_bytes(),
            received_at: at,
            framing_error: None,
            ack: None,
            mapping: None,
        })
        .unwrap();
    }
    j.sync().unwrap();
}

/// Start-up replay of a long journal hands its rows to the encoder in row
/// groups as it goes, instead of holding every replayed row until the first
/// flush: peak memory does not grow with the journal.
#[test]
fn replaying_a_long_journal_at_start_up_does_not_hold_every_row_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let spool = dir.path().join("spool");
    let inputs = 600_000;
    long_journal(&spool, inputs);
    let journal_bytes = bytes_under(&journal::dir(&spool));
    let port = free_port();
    let cfg = VenueConfig::fast(dir.path(), port)
        .set_str("output", "flush_interval", "10m")
        .extra("[sources.simulator]\nrate = 1\n")
        .write();
    let gw = Gateway::start(&cfg, port, &[]);
    let (replayed, line) = replayed(&gw);
    assert_eq!(replayed, inputs as u64, "{line}");
    let rss = gw.peak_rss_kib();
    gw.stop();
    eprintln!("replayed {inputs} inputs ({journal_bytes} journal bytes): peak RSS {rss} KiB");
    assert!(rss < 100 * 1024, "peak RSS {rss} KiB");
    let raw = common::rows(&dir.path().join("store"), "raw");
    assert!(raw.len() >= inputs, "{} raw rows", raw.len());
}
