//! The input journal on a disk that fills up and frees again: it goes off,
//! says so (metrics, `/healthz`), counts what ran without it, and comes back
//! by itself once there is space.

mod common;

use common::services::*;
use common::tmpfs::Tmpfs;
use common::VenueConfig;
use std::path::{Path, PathBuf};
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
    let line = gw
        .log
        .wait_line("Replayed the journal", Duration::from_secs(20));
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
