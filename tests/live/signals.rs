//! Signals to a real `pitchside run`: SIGHUP reloads what can change safely
//! (and names what needs a restart), keeps running on a broken config;
//! SIGUSR1/SIGUSR2 do not stop it; SIGTERM and SIGINT drain, each logged.

use crate::common;

use common::services::*;
use common::*;
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

/// The signal tests' config: the simulator at 200 events/s, with the
/// settings a reload may change as arguments.
fn signals_config(dir: &Path, port: u16, threshold: f64, level: &str, window: &str) -> VenueConfig {
    VenueConfig::fast(dir, port)
        .set("detector", "threshold", threshold)
        .set_str("windows", "size", window)
        .set_str("log", "level", level)
        .set("sources.simulator", "rate", 200)
}

/// A gateway whose log level comes from its config (PITCHSIDE_LOG empty).
fn start(dir: &Path) -> (Gateway, u16) {
    let port = free_port();
    let cfg = signals_config(dir, port, 3.5, "info", "1s").write();
    let gw = Gateway::start(&cfg, port, &[("PITCHSIDE_LOG", "")]);
    gw.wait_metric("pitchside_input_rows_total", 1.0, T);
    (gw, port)
}

/// Inputs keep arriving: the pipeline still runs.
fn assert_still_producing(gw: &mut Gateway) {
    assert!(
        gw.is_running(),
        "daemon exited:\n{}",
        gw.log.all().join("\n")
    );
    let before = gw.metric("pitchside_input_rows_total");
    gw.wait_metric("pitchside_input_rows_total", before + 50.0, T);
    assert!(gw.is_running());
}

#[test]
fn sighup_reloads_threshold_and_log_level_names_restart_keys_and_keeps_running() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, port) = start(dir.path());
    // `windows.size` cannot change under open windows: named, not applied.
    signals_config(dir.path(), port, 4.5, "debug", "2s").write();
    gw.signal("HUP");
    let line = gw.log.wait_line("Config reloaded", T);
    assert!(line.contains("detector.threshold"), "{line}");
    assert!(line.contains("log.level"), "{line}");
    assert!(!line.contains("windows.size"), "{line}");
    let warn = gw.log.wait_line("need a restart", T);
    assert!(warn.contains("WARN"), "{warn}");
    assert!(warn.contains("windows.size"), "{warn}");
    assert!(!warn.contains("detector.threshold"), "{warn}");
    assert_still_producing(&mut gw);
    // The new level is in force: debug lines appear after the reload.
    let before = gw.log.count("DEBUG");
    assert!(
        wait_until(T, || gw.log.count("DEBUG") > before),
        "no DEBUG line after reloading log.level = debug:\n{}",
        gw.log.all().join("\n")
    );
    let log = gw.stop();
    assert!(log.contains("Stopped."), "{log}");
}

#[test]
fn sighup_with_a_broken_config_logs_an_error_and_keeps_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, port) = start(dir.path());
    signals_config(dir.path(), port, 3.5, "info", "1s")
        .set("detector", "threshold", "\"high\"")
        .write();
    gw.signal("HUP");
    let line = gw.log.wait_line("Config reload failed", T);
    assert!(line.contains("ERROR"), "{line}");
    assert!(line.contains("threshold"), "{line}");
    assert_still_producing(&mut gw);
    // Fixed, it reloads.
    signals_config(dir.path(), port, 5.0, "info", "1s").write();
    gw.signal("HUP");
    gw.log.wait_for("Config reloaded", 1, T);
    assert_still_producing(&mut gw);
    gw.stop();
}

#[test]
fn sigusr1_logs_a_status_summary_and_sigusr2_is_ignored_both_keep_it_running() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gw, _) = start(dir.path());
    gw.signal("USR1");
    gw.log.wait_for("Status (SIGUSR1)", 1, T);
    gw.signal("USR2");
    gw.log.wait_for("SIGUSR2", 1, T);
    assert_still_producing(&mut gw);
    let log = gw.stop();
    assert!(log.contains("Stopped."), "{log}");
}

#[test]
fn sigterm_and_sigint_each_drain_log_exit_0_and_leave_files_in_the_store() {
    for sig in ["TERM", "INT"] {
        let dir = tempfile::tempdir().unwrap();
        let (gw, _) = start(dir.path());
        let store = dir.path().join("store");
        gw.signal(sig);
        let (status, log) = gw.wait_exit(Duration::from_secs(30));
        assert!(status.success(), "SIG{sig}: exit {status:?}\n{log}");
        assert!(log.contains(&format!("SIG{sig} received")), "{log}");
        assert!(log.contains("Draining"), "{log}");
        assert!(log.contains("Stopped."), "{log}");
        assert!(!files(&store, "raw").is_empty(), "SIG{sig}: no raw file");
        assert!(
            !files(&store, "progress").is_empty(),
            "SIG{sig}: no progress file"
        );
    }
}

#[test]
fn a_reloaded_threshold_takes_effect_on_live_detection() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let config = signals_config(dir.path(), port, 3.5, "info", "1s")
        .set("sources.simulator", "rate", 400)
        .set("sources.simulator", "anomaly_rate", 0.05);
    let mut gw = Gateway::start(&config.write(), port, &[("PITCHSIDE_LOG", "")]);
    gw.wait_metric("pitchside_alerts_total", 5.0, T);
    // No injected 4–6σ anomaly reaches |z| > 1000.
    config.set("detector", "threshold", "1000.0").write();
    gw.signal("HUP");
    gw.log.wait_for("Pipeline settings reloaded", 1, T);
    std::thread::sleep(Duration::from_millis(600));
    let after = gw.metric("pitchside_alerts_total");
    let inputs = gw.metric("pitchside_input_rows_total");
    gw.wait_metric("pitchside_input_rows_total", inputs + 800.0, T);
    assert_eq!(
        gw.metric("pitchside_alerts_total"),
        after,
        "alerts after threshold = 1000"
    );
    assert!(gw.is_running());
    gw.stop();
}

#[test]
fn a_changed_roster_file_is_applied_on_sighup_although_no_key_changed() {
    use parquet::record::Field;
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let roster = dir.path().join("roster.csv");
    // The simulator's 22 players: 1 to 11 on the roster at first.
    let write_roster = |players: i64| {
        let lines: String = (1..=players)
            .map(|p| format!("{p},Player {p},mid,180\n"))
            .collect();
        std::fs::write(&roster, format!("player_id,name,position,hr_max\n{lines}")).unwrap();
    };
    write_roster(11);
    let config = signals_config(dir.path(), port, 3.5, "info", "1s").set_str(
        "load",
        "roster",
        roster.display(),
    );
    let gw = Gateway::start(&config.write(), port, &[("PITCHSIDE_LOG", "")]);
    gw.wait_metric("pitchside_load_unrostered_players_total", 11.0, T);
    gw.wait_metric("pitchside_input_rows_total", 1000.0, T);
    write_roster(22);
    gw.signal("HUP");
    let line = gw.log.wait_line("Config reloaded", T);
    assert!(
        line.contains("load.roster (the file: 22 players)"),
        "{line}"
    );
    gw.log.wait_for("Pipeline settings reloaded", 1, T);
    let inputs = gw.metric("pitchside_input_rows_total");
    gw.wait_metric("pitchside_input_rows_total", inputs + 1000.0, T);
    assert_eq!(
        gw.metric("pitchside_load_unrostered_players_total"),
        11.0,
        "counted once each, when first seen"
    );
    gw.stop();
    // Player 15's rows: off the roster (HRmax 190) before, on it (180) after.
    let rows = rows(&dir.path().join("store"), "load_player_1m");
    let p15: Vec<(bool, f64)> = rows
        .iter()
        .filter(|r| r["player_id"] == Field::Long(15))
        .map(|r| match (&r["on_roster"], &r["hr_max"]) {
            (Field::Bool(on), Field::Double(max)) => (*on, *max),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(p15.contains(&(false, 190.0)), "{p15:?}");
    assert_eq!(p15.last(), Some(&(true, 180.0)), "{p15:?}");
    let on = p15.iter().position(|r| r.0).unwrap();
    assert!(
        p15[on..].iter().all(|r| r.0),
        "the state is kept and stays on the roster"
    );
}
