//! `pitchside run` end to end: the simulator feeds the daemon, tables appear
//! in the store, the metrics endpoint answers, SIGTERM drains cleanly.

use crate::common;

use common::services::{free_port, get_metrics, http_get};
use common::*;
use std::io::Read;
use std::time::{Duration, Instant};

#[test]
fn run_with_simulator_writes_tables_and_drains_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = VenueConfig::fast(dir.path(), port)
        .set_str("venue", "gateway_id", "gw-run")
        .set_str("output", "flush_interval", "1s")
        .set_str("metrics", "progress_interval", "1s")
        .set("sources.simulator", "rate", 500)
        .set("sources.simulator", "anomaly_rate", 0.01)
        .write_as("run.toml");
    let mut child = bin()
        .args(["run", "--config"])
        .arg(&cfg)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let store = dir.path().join("store");
    let deadline = Instant::now() + Duration::from_secs(30);
    while files(&store, "windows_wearable").is_empty() || files(&store, "progress").is_empty() {
        assert!(
            Instant::now() < deadline,
            "no windows/progress files after 30 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let metrics = get_metrics(port).expect("metrics endpoint answers");
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(metrics.contains("pitchside_input_rows_total "), "{metrics}");
    assert!(http_get(port, "/healthz").unwrap().contains("ok"));

    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let exit = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "did not stop within 30 s of SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    assert!(exit.success(), "exit {exit:?}\n{log}");
    assert!(log.contains("Stopped."), "{log}");

    // Everything flushed was uploaded; nothing half-written anywhere.
    let spool_left: Vec<_> = files(&dir.path().join("spool"), "outgoing");
    assert!(spool_left.is_empty(), "left in spool: {spool_left:?}");
    let tmp = std::fs::read_dir(dir.path().join("spool/tmp"))
        .unwrap()
        .count();
    assert_eq!(tmp, 0, "temp files left behind");
    let raw = rows(&store, "raw");
    assert!(raw.len() > 100, "only {} raw rows", raw.len());
    let windows = rows(&store, "windows_wearable");
    assert!(windows
        .iter()
        .all(|w| i(w, "window_end") - i(w, "window_start") == 1_000_000));
    // Every Parquet file in the store is complete (readable to the footer).
    for t in pitchside::tables::TableId::ALL {
        let _ = rows(&store, t.name());
    }
}

#[test]
fn simulate_output_replays_into_alerts_and_fatigue() {
    let dir = tempfile::tempdir().unwrap();
    let out = succeed(
        bin()
            .args(["simulate", "--count", "30000", "--rate", "50"])
            .args(["--start", "2026-11-29T19:00:00Z", "--seed", "3"]),
    );
    let lines = String::from_utf8(out.stdout).unwrap();
    assert_eq!(lines.lines().count(), 30_000);
    let input = dir.path().join("sim.jsonl");
    std::fs::write(&input, &lines).unwrap();
    let cfg = config(dir.path(), "[fatigue]\nk = 1.0\n");
    let outdir = dir.path().join("out");
    Replay::new(&cfg, &input).output(&outdir).succeed();
    assert!(
        rows(&outdir, "alerts").len() > 20,
        "injected anomalies are detected"
    );
    assert!(rows(&outdir, "rejects").is_empty());
    // 10 minutes of 22 players: one window per player-minute.
    let ww = rows(&outdir, "windows_wearable");
    assert!(ww.len() >= 22 * 9, "{}", ww.len());
    assert!(
        !rows(&outdir, "fatigue_alerts").is_empty(),
        "fatigue episodes raise fatigue alerts"
    );
}

/// With port 0 the system picks the ports; the log names the ones bound, so
/// an operator (or a script) can find the metrics and the console.
#[test]
fn listening_on_port_0_logs_the_ports_bound() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = VenueConfig::fast(dir.path(), 0)
        .set_str("console", "listen", "127.0.0.1:0")
        .set("sources.simulator", "rate", 50)
        .write();
    let gw = common::services::Gateway::start(&cfg, 0, &[]);
    let port_in = |line: &str, prefix: &str| -> u16 {
        let at = line.find(prefix).unwrap_or_else(|| panic!("{line}")) + prefix.len();
        let digits: String = line[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits
            .parse()
            .unwrap_or_else(|_| panic!("no port in {line}"))
    };
    let timeout = Duration::from_secs(20);
    let metrics = port_in(
        &gw.log.wait_line("Metrics at", timeout),
        "http://127.0.0.1:",
    );
    let console = port_in(
        &gw.log.wait_line("Venue console at", timeout),
        "http://127.0.0.1:",
    );
    assert!(metrics != 0 && console != 0 && metrics != console);
    let text = get_metrics(metrics).expect("the logged metrics port answers");
    assert!(text.contains("pitchside_input_rows_total "), "{text}");
    let page = http_get(console, "/").expect("the logged console port answers");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    gw.stop();
}
