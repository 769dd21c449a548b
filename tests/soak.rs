//! The gateway run as a venue runs it, for long enough that every bounded
//! resource turns over many times: the spool healthy under 20× its ceiling
//! of total output, a spool on a disk far smaller than `min_free_disk`, and
//! a disk that fills while the store is down. Each bound is tested both
//! full under failure and healthy under traffic many times its size.

mod common;

use common::services::{free_port, wait_until, Gateway};
use common::tmpfs::Tmpfs;
use common::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every key under a local store folder, relative to it.
fn keys(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(d: &Path, root: &Path, out: &mut Vec<String>) {
        if let Ok(rd) = std::fs::read_dir(d) {
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, root, out);
                } else if p.extension().is_some_and(|x| x == "parquet") {
                    out.push(p.strip_prefix(root).unwrap().to_string_lossy().into_owned());
                }
            }
        }
    }
    walk(root, root, &mut out);
    out
}

fn bytes_under(root: &Path) -> u64 {
    keys(root)
        .iter()
        .map(|k| std::fs::metadata(root.join(k)).map_or(0, |m| m.len()))
        .sum()
}

/// The config of a soak run: the simulator at `rate` events/s, 1 s windows,
/// a spool in `spool` with `output` keys set in `[output]`, metrics on `port`.
fn soak_config(dir: &Path, port: u16, spool: &Path, output: &[(&str, &str)], rate: u32) -> PathBuf {
    VenueConfig::fast(dir, port)
        .set_str("output", "spool_dir", spool.display())
        .set_strs("output", output)
        .set("sources.simulator", "rate", rate)
        .set("sources.simulator", "anomaly_rate", 0.01)
        .write()
}

/// A soak config fed at `rate` with its spool on a tmpfs of `size` and
/// `output` keys set in `[output]`.
struct SmallDiskRun {
    // Unmounted before the folder it is mounted in is removed.
    disk: Tmpfs,
    dir: tempfile::TempDir,
    cfg: PathBuf,
    port: u16,
}

impl SmallDiskRun {
    /// `None` where a tmpfs cannot be mounted (see [`Tmpfs::mount`]).
    fn new(size: &str, output: &[(&str, &str)], rate: u32) -> Option<SmallDiskRun> {
        let dir = tempfile::tempdir().unwrap();
        let disk = Tmpfs::mount(&dir.path().join("spooldisk"), size)?;
        let port = free_port();
        let cfg = soak_config(dir.path(), port, &disk.path().join("spool"), output, rate);
        Some(SmallDiskRun {
            disk,
            dir,
            cfg,
            port,
        })
    }

    fn start(&self) -> Gateway {
        Gateway::start(&self.cfg, self.port, &[("PITCHSIDE_LOG", "info")])
    }
}

#[test]
fn a_healthy_gateway_ships_twenty_times_its_spool_ceiling_without_evicting_anything() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let ceiling: u64 = 1024 * 1024;
    // Flush every second and keep the ceiling small: the ceiling turns over
    // every couple of seconds (the smallest allowed), as 1 GiB does in 14
    // hours at a venue.
    let cfg = soak_config(
        dir.path(),
        port,
        &dir.path().join("spool"),
        &[
            ("flush_interval", "1s"),
            ("spool_max_bytes", "1MiB"),
            ("compression", "snappy"),
        ],
        20000,
    );
    let store = dir.path().join("store");
    let gw = Gateway::start(&cfg, port, &[("PITCHSIDE_LOG", "info")]);
    let started = Instant::now();
    let mut rss = Vec::new();
    let reached = wait_until(Duration::from_secs(150), || {
        rss.push((started.elapsed().as_secs_f64(), gw.rss_kib()));
        std::thread::sleep(Duration::from_millis(500));
        bytes_under(&store) >= 20 * ceiling
    });
    let evictions = gw.metric("pitchside_spool_evictions_total");
    let log = gw.stop();
    assert!(
        reached,
        "store holds {} B after 150 s, wanted {}",
        bytes_under(&store),
        20 * ceiling
    );
    assert_eq!(evictions, 0.0, "log:\n{log}");
    assert!(!log.contains("deleted without upload"), "log:\n{log}");
    let stored = keys(&store);
    assert_contiguous_seqs(stored.iter().map(String::as_str));
    assert!(
        keys(&dir.path().join("spool/outgoing")).is_empty(),
        "every file uploaded after the drain"
    );
    for t in ["alerts", "raw", "windows_wearable", "progress"] {
        assert!(!files(&store, t).is_empty(), "no {t} files");
    }
    // Memory flat: the last quarter of the run against the second.
    let q = rss.len() / 4;
    let second = rss[q..2 * q].iter().map(|r| r.1).max().unwrap();
    let last = rss[3 * q..].iter().map(|r| r.1).max().unwrap();
    assert!(
        last <= second + second / 5 + 2048,
        "RSS grew from {second} KiB to {last} KiB: {rss:?}"
    );
    eprintln!(
        "soak: {} B shipped in {:.0} s, {} files, RSS {second} → {last} KiB",
        bytes_under(&store),
        started.elapsed().as_secs_f64(),
        stored.len()
    );
}

#[test]
fn a_spool_disk_smaller_than_min_free_disk_deletes_nothing_while_the_store_is_up() {
    // The default min_free_disk (256 MiB) can never be met on 8 MiB.
    let Some(run) = SmallDiskRun::new("8m", &[("flush_interval", "500ms")], 2000) else {
        return;
    };
    let store = run.dir.path().join("store");
    let gw = run.start();
    gw.wait_metric(
        "pitchside_uploaded_files_total",
        40.0,
        Duration::from_secs(60),
    );
    let evictions = gw.metric("pitchside_spool_evictions_total");
    let log = gw.stop();
    assert_eq!(evictions, 0.0, "log:\n{log}");
    assert!(!log.contains("deleted without upload"), "log:\n{log}");
    assert_contiguous_seqs(keys(&store).iter().map(String::as_str));
    assert!(!files(&store, "alerts").is_empty());
}

#[test]
fn a_full_disk_with_the_store_down_evicts_raw_before_losing_any_alert() {
    let output = [("flush_interval", "500ms"), ("min_free_disk", "0B")];
    let Some(run) = SmallDiskRun::new("3m", &output, 6000) else {
        return;
    };
    // The store is down: each table's folder in it is a file, so every put fails.
    let store = run.dir.path().join("store");
    std::fs::create_dir_all(&store).unwrap();
    for t in [
        "alerts",
        "fatigue_alerts",
        "windows_wearable",
        "windows_pitch",
        "windows_crowd",
        "windows_generic",
        "late",
        "rejects",
        "progress",
        "raw",
    ] {
        std::fs::write(store.join(t), b"down").unwrap();
    }
    let gw = run.start();
    // Run until the disk has been full for a while: raw files evicted.
    gw.wait_metric(
        "pitchside_spool_evictions_total",
        5.0,
        Duration::from_secs(120),
    );
    std::thread::sleep(Duration::from_secs(5));
    let alerts = gw.metric("pitchside_alerts_total");
    let lost_alerts = gw.metric("pitchside_lost_rows_total{table=\"alerts\"}");
    let log = gw.stop();
    assert!(alerts > 0.0, "the simulator raised no alert; log:\n{log}");
    assert_eq!(lost_alerts, 0.0, "log:\n{log}");
    assert!(
        !log.lines()
            .any(|l| l.contains("lost") && l.contains("table=\"alerts\"")),
        "alert rows lost; log:\n{log}"
    );
    let spooled = run.disk.path().join("spool/outgoing");
    let spooled_alerts: usize = rows(&spooled, "alerts").len();
    assert!(
        spooled_alerts as f64 >= alerts,
        "{spooled_alerts} alert rows in the spool, {alerts} raised"
    );
    assert!(
        log.contains("deleted without upload"),
        "the disk never filled; log:\n{log}"
    );
    let first_eviction = log
        .lines()
        .find(|l| l.contains("deleted without upload"))
        .unwrap_or_default();
    assert!(
        first_eviction.contains("raw"),
        "the first file evicted is not raw: {first_eviction}"
    );
}
