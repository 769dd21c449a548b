//! The input journal on a disk that fills up and frees again: it goes off,
//! says so (metrics, `/healthz`), counts what ran without it, and comes back
//! by itself once there is space.

mod common;

use common::services::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A small tmpfs mounted on a folder for the test's lifetime.
struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` on `dir`; `None` (after a loud notice, or a
    /// panic under `PITCHSIDE_REQUIRE_SERVICES=1`) when this is not allowed.
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(dir.to_path_buf())),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                    Err(e) => e.to_string(),
                };
                let msg = format!("this test mounts a tmpfs (needs root or CAP_SYS_ADMIN): {why}");
                if std::env::var("PITCHSIDE_REQUIRE_SERVICES").as_deref() == Ok("1") {
                    panic!("PITCHSIDE_REQUIRE_SERVICES=1 but {msg}");
                }
                eprintln!("\n!!!!!!!! SKIPPED: {msg} !!!!!!!!\n");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

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
    let cfg = fast_config(
        dir.path(),
        port,
        "health_grace = \"1s\"\n[sources.simulator]\nrate = 400\n",
    );
    // No flush (so no checkpoint) during the test: after the crash below,
    // everything journaled since the start is replayed.
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("flush_interval = \"500ms\"", "flush_interval = \"10m\"");
    std::fs::write(&cfg, text).unwrap();
    let gw = Gateway::start(&cfg, port, &[]);
    gw.wait_metric(
        "pitchside_unjournaled_inputs_total",
        1.0,
        Duration::from_secs(20),
    );
    let text = http_get(port, "/metrics").unwrap_or_default();
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
    gw.log
        .wait_for("Replayed the journal", 1, Duration::from_secs(20));
    let line = gw
        .log
        .all()
        .into_iter()
        .find(|l| l.contains("Replayed the journal"))
        .unwrap();
    let replayed: u64 = line
        .split("inputs=")
        .nth(1)
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    // 400 inputs/s for the second after it came back.
    assert!(replayed >= 200, "{line}");
    gw.stop();
}

/// A journal file as builds before issue 11 wrote it: no header, records of
/// `u32 length, u64 FNV-1a 64 of the body, body`.
fn old_format_journal(lines: &[String], received_at: i64) -> Vec<u8> {
    let fnv = |b: &[u8]| {
        b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
            (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let mut out = Vec::new();
    for l in lines {
        let mut e = pitchside::util::codec::Enc::default();
        e.str("simulator");
        e.u8(255); // no sensor hint
        e.i64(received_at);
        e.u8(0); // no framing error
        e.bytes(l.as_bytes());
        out.extend_from_slice(&(e.0.len() as u32).to_le_bytes());
        out.extend_from_slice(&fnv(&e.0).to_le_bytes());
        out.extend_from_slice(&e.0);
    }
    out
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
    let lines: Vec<String> = (0..300).map(|_| sim.next_line().0).collect();
    let journal = dir.path().join("spool/journal");
    std::fs::create_dir_all(&journal).unwrap();
    let old = journal.join("000000000000.log");
    std::fs::write(&old, old_format_journal(&lines, now)).unwrap();

    let gw = Gateway::start(&cfg, port, &[]);
    gw.log
        .wait_for("Replayed the journal", 1, Duration::from_secs(20));
    let line = gw
        .log
        .all()
        .into_iter()
        .find(|l| l.contains("Replayed the journal"))
        .unwrap();
    assert!(line.contains("inputs=300"), "{line}");
    assert!(
        wait_until(Duration::from_secs(20), || !old.exists()),
        "the old file is removed once a checkpoint covers it"
    );
    gw.stop();
    let logs: Vec<PathBuf> = std::fs::read_dir(&journal)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(!logs.is_empty());
    for p in logs {
        let bytes = std::fs::read(&p).unwrap();
        assert!(
            bytes.is_empty() || bytes.starts_with(b"PSJRNL\0\0\x01\0\0\0"),
            "{} has no header",
            p.display()
        );
    }
}
