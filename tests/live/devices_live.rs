//! Real devices end to end (SPEC §9) with real I/O: the shipped device
//! profiles (config/devices/*.toml) pasted into a venue config as they are,
//! only the port or broker changed, and fed through a pseudo-terminal or a
//! private mosquitto to `pitchside run` and `pitchside tap`.
//!
//! - a sound-level meter on a serial port (regex, local time +05:30): the
//!   spike alerts, a line the pattern does not match is an `unmapped`
//!   reject, event times are stored as UTC;
//! - BLE heart-rate straps over MQTT (json, topic levels, arrival time);
//! - `tap` live on both, and on MQTT beside a running daemon;
//! - a `kill -9` before any flush: the journal replays the meter's lines
//!   through the same map.

use crate::common;

use common::broker::{MqttRig, PASSWORD_ENV};
use common::serial::{Pty, SerialRig};
use common::services::*;
use common::*;
use pitchside::util::time::{format_rfc3339, now_micros};
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);
/// The meter's clock: India Standard Time, as in its profile.
const IST: i64 = (5 * 3600 + 30 * 60) * 1_000_000;
const UNMAPPED: &str = "pitchside_rejected_rows_total{reason=\"unmapped\"}";
const NO_METRICS: &str = "pitchside_rejected_rows_total{reason=\"no_metrics\"}";
const INPUTS: &str = "pitchside_input_rows_total";

/// A device profile as shipped.
fn profile(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("config/devices/{name}.toml"));
    std::fs::read_to_string(&path).unwrap()
}

/// `text` with the one line starting with `key = ` replaced by `with`.
fn replace_line(text: &str, key: &str, with: &str) -> String {
    let prefix = format!("{key} = ");
    let mut found = 0;
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with(&prefix) {
                found += 1;
                with.trim_end().to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    assert_eq!(found, 1, "one `{key}` line in the profile:\n{text}");
    out.join("\n") + "\n"
}

/// The sound-level meter's profile reading the pty `tty` of a new temp
/// folder, under a fast venue config changed by `edit`; `None` without socat.
fn meter_rig(tty: &str, edit: impl FnOnce(VenueConfig) -> VenueConfig) -> Option<SerialRig> {
    if !have(&["socat"]) {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let tty = dir.path().join(tty);
    let port = free_port();
    let block = replace_line(
        &profile("sound-level-meter"),
        "path",
        &format!("path = \"{}\"", tty.display()),
    );
    let cfg = edit(VenueConfig::fast(dir.path(), port))
        .extra(&block)
        .write();
    Some(SerialRig {
        dir,
        tty,
        port,
        cfg,
    })
}

/// A meter line for the UTC instant `utc` (whole seconds), printed in the
/// meter's local time as the profile expects: `2026-11-29 19:30:05 LAeq,1s=84.3 dB`.
fn meter_line(utc: i64, db: f64) -> String {
    let local = format_rfc3339(utc + IST);
    format!("{} LAeq,1s={db:.1} dB", local[..19].replace('T', " "))
}

/// Now, truncated to whole seconds, minus `back` seconds.
fn whole_seconds_ago(back: i64) -> i64 {
    (now_micros() / 1_000_000 - back) * 1_000_000
}

/// Twelve quiet readings (84 dB ± a little) one second apart from `start`.
fn quiet_readings(start: i64) -> Vec<(i64, f64)> {
    [
        84.3, 84.5, 84.1, 84.4, 84.2, 84.6, 84.3, 84.0, 84.5, 84.2, 84.4, 84.3,
    ]
    .iter()
    .enumerate()
    .map(|(i, db)| (start + i as i64 * 1_000_000, *db))
    .collect()
}

/// Microsecond event times of a table's rows, sorted.
fn event_times(rows: &[Row]) -> Vec<i64> {
    let mut t: Vec<i64> = rows.iter().map(|r| i(r, "event_time")).collect();
    t.sort();
    t
}

/// Waits up to `timeout` for `child` to exit.
fn wait_child(child: &mut Child, timeout: Duration, what: &Lines) -> ExitStatus {
    let end = Instant::now() + timeout;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        if Instant::now() > end {
            let _ = child.kill();
            panic!(
                "no exit within {timeout:?}; stderr:\n{}",
                what.all().join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A running `pitchside tap` with its stdout and stderr captured.
struct Tap {
    child: Child,
    out: Lines,
    err: Lines,
}

impl Tap {
    fn start(cfg: &Path, source: &str, count: u32, env: &[(&str, &str)]) -> Tap {
        let mut cmd = bin();
        cmd.args(["tap", "--config"])
            .arg(cfg)
            .args(["--source", source, "--count", &count.to_string()])
            .env("PITCHSIDE_LOG", "debug")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let out = Lines::capture(child.stdout.take().unwrap());
        let err = Lines::capture(child.stderr.take().unwrap());
        Tap { child, out, err }
    }

    /// Waits for a clean exit; the JSON lines it printed.
    fn finish(mut self) -> Vec<serde_json::Value> {
        let status = wait_child(&mut self.child, T, &self.err);
        // The capture threads read to the end of the pipes.
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            status.success(),
            "tap exited {status:?}; stderr:\n{}",
            self.err.all().join("\n")
        );
        self.out
            .all()
            .iter()
            .filter(|l| !l.starts_with('#'))
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect()
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_sound_level_meter_on_a_serial_port_alerts_stores_utc_and_rejects_what_its_pattern_misses() {
    let Some(rig) = meter_rig("ttyMETER0", |c| c) else {
        return;
    };
    let (mut pty, gw) = rig.start_with_device();
    let start = whole_seconds_ago(120);
    let quiet = quiet_readings(start);
    let spike = (start + 12_000_000, 112.7);
    let mut text = String::new();
    for (n, (t, db)) in quiet.iter().enumerate() {
        text += &meter_line(*t, *db);
        // The optional C-peak on one line; the map ignores it.
        text += if n == 3 {
            "  LCpeak=101.2 dB\r\n"
        } else {
            "\r\n"
        };
        if n == 5 {
            text += "2026-11-29 19:30:05 LAeq,1s=--- dB OVERLOAD\r\n";
        }
    }
    text += &(meter_line(spike.0, spike.1) + "\r\n");
    pty.write(text.as_bytes());

    // (a) the spike's alert, logged as it happens.
    let alert = gw.log.wait_line("ALERT anomaly", T);
    for part in [
        "crowd",
        "slm-north",
        "decibels",
        "112.7",
        r#"zone="north-stand""#,
    ] {
        assert!(alert.contains(part), "{part} in {alert}");
    }
    gw.wait_metric(INPUTS, 14.0, T);
    // (d) the line the pattern missed, counted by its reason.
    gw.wait_metric(UNMAPPED, 1.0, T);
    let log = gw.stop();
    drop(pty);
    assert_eq!(log.matches("ALERT anomaly").count(), 1, "{log}");

    let store = rig.dir.path().join("store");
    let alerts = rows(&store, "alerts");
    assert_eq!(alerts.len(), 1, "one alert: the spike");
    assert_eq!(s(&alerts[0], "device_id"), "slm-north");
    assert_eq!(s(&alerts[0], "metric"), "decibels");
    assert_eq!(s(&alerts[0], "zone_id"), "north-stand", "the map's zone");
    assert_eq!(f(&alerts[0], "value"), 112.7);
    assert_eq!(i(&alerts[0], "baseline_count"), 12);
    assert_eq!(i(&alerts[0], "event_time"), spike.0);

    // (b) the reject says which pattern missed.
    let rejects = rows(&store, "rejects");
    assert_eq!(rejects.len(), 1, "one unmatched line");
    assert_eq!(s(&rejects[0], "reason"), "unmapped");
    let detail = s(&rejects[0], "detail");
    assert!(
        detail.contains("pattern did not match") && detail.contains("(?P<ts>"),
        "the detail names the pattern: {detail}"
    );
    assert_eq!(
        s(&rejects[0], "source"),
        format!("serial:{}", rig.tty.display())
    );

    // (c) local meter times are stored as the UTC instants they stand for.
    let raw = rows(&store, "raw");
    let mut expected: Vec<i64> = quiet.iter().map(|(t, _)| *t).collect();
    expected.push(spike.0);
    assert_eq!(event_times(&raw), expected);
    for r in &raw {
        assert_eq!(
            (s(r, "sensor"), s(r, "device_id"), s(r, "metric")),
            ("crowd", "slm-north", "decibels")
        );
    }
    // The fixed zone of the map groups the crowd windows.
    let windows = rows(&store, "windows_crowd");
    assert!(!windows.is_empty(), "closed one-second windows are written");
    assert!(windows.iter().all(|w| s(w, "zone_id") == "north-stand"));
}

/// The BLE heart-rate profile pointed at the rig's broker, with its login.
fn straps_config(rig: &MqttRig) -> std::path::PathBuf {
    let block = profile("ble-heart-rate");
    let block = replace_line(&block, "port", "");
    let block = replace_line(&block, "host", &rig.broker.login(rig.broker.port));
    VenueConfig::fast(rig.dir.path(), rig.metrics)
        .extra(&block)
        .write()
}

const STRAP_7: &str = "ble/hr/7/C7:1A:2B:3C:4D:5E";
const STRAP_9: &str = "ble/hr/9/AA:BB:CC:DD:EE:FF";

fn strap(id: &str, bpm: u32) -> String {
    format!(r#"{{"id":"{id}","hr":{{"bpm":{bpm}}},"rssi":-61}}"#)
}

#[test]
fn ble_heart_rate_straps_over_mqtt_take_device_and_player_from_the_topic_and_time_from_arrival() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let gw = rig.start(&straps_config(&rig));
    gw.log.wait_for("Subscribed.", 1, T);

    let t0 = now_micros();
    broker.publish(STRAP_7, &[strap("C7:1A:2B:3C:4D:5E", 151)]);
    broker.publish(STRAP_9, &[strap("AA:BB:CC:DD:EE:FF", 138)]);
    // A bridge that lost the reading: no /hr/bpm, so no metric at all
    // (`no_metrics`, docs/src/devices.md, "Values"; the detail says where it looked).
    broker.publish(
        STRAP_7,
        &[r#"{"id":"C7:1A:2B:3C:4D:5E","hr":{},"rssi":-61}"#.to_string()],
    );
    // A bridge that garbled it: /hr/bpm is not a number (`unmapped`).
    broker.publish(
        STRAP_9,
        &[r#"{"id":"AA:BB:CC:DD:EE:FF","hr":{"bpm":"--"},"rssi":-70}"#.to_string()],
    );
    gw.wait_metric(INPUTS, 4.0, T);
    gw.wait_metric(NO_METRICS, 1.0, T);
    gw.wait_metric(UNMAPPED, 1.0, T);
    // One more reading a full window (1 s) later moves the wearable
    // watermark past the first readings' window, which is then written.
    let counted = now_micros();
    assert!(wait_until(T, || now_micros() > counted + 1_100_000));
    broker.publish(STRAP_7, &[strap("C7:1A:2B:3C:4D:5E", 152)]);
    gw.wait_metric(INPUTS, 5.0, T);
    let t1 = now_micros();
    gw.stop();

    let store = rig.store();
    let mut raw: Vec<(String, f64, i64, i64)> = rows(&store, "raw")
        .iter()
        .map(|r| {
            assert_eq!((s(r, "sensor"), s(r, "metric")), ("wearable", "heart_rate"));
            (
                s(r, "device_id").to_string(),
                f(r, "value"),
                i(r, "event_time"),
                i(r, "received_at"),
            )
        })
        .collect();
    raw.sort_by(|a, b| a.1.total_cmp(&b.1));
    let ids: Vec<(&str, f64)> = raw.iter().map(|r| (r.0.as_str(), r.1)).collect();
    assert_eq!(
        ids,
        [
            ("AA:BB:CC:DD:EE:FF", 138.0),
            ("C7:1A:2B:3C:4D:5E", 151.0),
            ("C7:1A:2B:3C:4D:5E", 152.0)
        ],
        "the device id is topic level 3"
    );
    for (_, _, event_time, received_at) in &raw {
        assert!(
            (t0..=t1).contains(event_time),
            "arrival time {event_time} within the run's {t0}..{t1}"
        );
        assert_eq!(event_time, received_at, "event_time = \"arrival\"");
    }

    // The player is topic level 2: the wearable windows group by it.
    let mut players: Vec<(i64, f64)> = rows(&store, "windows_wearable")
        .iter()
        .filter(|w| i(w, "window_start") < raw[2].2 - raw[2].2 % 1_000_000)
        .map(|w| (i(w, "player_id"), f(w, "heart_rate_mean")))
        .collect();
    players.sort_by_key(|p| p.0);
    assert_eq!(players, [(7, 151.0), (9, 138.0)]);

    let mut rejects: Vec<(String, String)> = rows(&store, "rejects")
        .iter()
        .map(|r| {
            let detail = s(r, "detail");
            assert!(
                detail.contains("/hr/bpm"),
                "the detail names /hr/bpm: {detail}"
            );
            (s(r, "reason").into(), s(r, "source").into())
        })
        .collect();
    rejects.sort();
    let reasons: Vec<(&str, &str)> = rejects
        .iter()
        .map(|r| (r.0.as_str(), r.1.as_str()))
        .collect();
    let (seven, nine) = (format!("mqtt:{STRAP_7}"), format!("mqtt:{STRAP_9}"));
    assert_eq!(
        reasons,
        [("no_metrics", seven.as_str()), ("unmapped", nine.as_str())]
    );
}

#[test]
fn tap_prints_what_a_serial_meter_sends_and_exits_after_count() {
    let Some(rig) = meter_rig("ttyMETER1", |c| c) else {
        return;
    };
    let mut pty = Pty::open(&rig.tty);
    let tap = Tap::start(&rig.cfg, "slm-north", 3, &[]);
    tap.err.wait_for("Serial port opened.", 1, T);
    let start = whole_seconds_ago(30);
    let lines = [
        meter_line(start, 84.3),
        "METER CALIBRATING".to_string(),
        meter_line(start + 1_000_000, 84.5),
        meter_line(start + 2_000_000, 84.1),
        meter_line(start + 3_000_000, 84.2),
    ];
    pty.write((lines.join("\r\n") + "\r\n").as_bytes());
    let out = tap.finish();
    drop(pty);

    assert_eq!(out.len(), 3, "--count 3: {out:?}");
    let source = format!("serial:{}", rig.tty.display());
    for (line, sent) in out.iter().zip(&lines) {
        assert_eq!(line["source"], source.as_str());
        assert_eq!(line["input"], sent.as_str());
    }
    let event = &out[0]["event"];
    assert_eq!(event["sensor"], "crowd");
    assert_eq!(event["device_id"], "slm-north");
    assert_eq!(event["zone_id"], "north-stand");
    assert_eq!(event["decibels"], 84.3);
    assert_eq!(event["event_time"], format_rfc3339(start).as_str());
    assert_eq!(out[1]["reject"]["reason"], "unmapped");
    let detail = out[1]["reject"]["detail"].as_str().unwrap();
    assert!(detail.contains("pattern did not match"), "{detail}");
    assert_eq!(out[2]["event"]["decibels"], 84.5);
    // tap touches neither the pipeline nor the store.
    assert!(files(&rig.dir.path().join("store"), "raw").is_empty());
}

#[test]
fn tap_on_an_mqtt_subscription_beside_the_daemon_takes_none_of_its_messages() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let cfg = straps_config(&rig);
    let gw = rig.start(&cfg);
    gw.log.wait_for("Subscribed.", 1, T);
    broker.publish(STRAP_7, &[strap("C7:1A:2B:3C:4D:5E", 140)]);
    gw.wait_metric(INPUTS, 1.0, T);

    let tap = Tap::start(&cfg, "ble-straps", 2, &[PASSWORD_ENV]);
    tap.err.wait_for("Subscribed.", 1, T);
    let tap_pid = tap.child.id();
    broker.publish(STRAP_7, &[strap("C7:1A:2B:3C:4D:5E", 141)]);
    broker.publish(STRAP_9, &[strap("AA:BB:CC:DD:EE:FF", 142)]);
    let out = tap.finish();
    assert_eq!(out.len(), 2, "--count 2: {out:?}");
    let tapped: Vec<(&str, f64)> = out
        .iter()
        .map(|l| {
            (
                l["event"]["device_id"].as_str().unwrap(),
                l["event"]["heart_rate"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tapped,
        [("C7:1A:2B:3C:4D:5E", 141.0), ("AA:BB:CC:DD:EE:FF", 142.0)]
    );
    assert_eq!(out[1]["event"]["player_id"], 9);

    // The daemon kept its connection and got the same messages, and more after.
    broker.publish(STRAP_9, &[strap("AA:BB:CC:DD:EE:FF", 143)]);
    gw.wait_metric(INPUTS, 4.0, T);
    let log = gw.stop();
    assert!(
        !log.contains("Disconnected from MQTT broker"),
        "tap did not take the daemon's session:\n{log}"
    );
    let broker_log = broker.log();
    assert!(
        broker_log.contains(&format!("-tap-{tap_pid}")),
        "tap connects with its own client id:\n{broker_log}"
    );
    let mut values: Vec<f64> = rows(&rig.store(), "raw")
        .iter()
        .map(|r| f(r, "value"))
        .collect();
    values.sort_by(f64::total_cmp);
    assert_eq!(values, [140.0, 141.0, 142.0, 143.0]);
}

/// Occurrences of `needle` in the journal files under `spool`.
fn journaled(spool: &Path, needle: &[u8]) -> usize {
    let Ok(dir) = std::fs::read_dir(spool.join("journal")) else {
        return 0;
    };
    dir.flatten()
        .filter_map(|e| std::fs::read(e.path()).ok())
        .map(|b| b.windows(needle.len()).filter(|w| *w == needle).count())
        .sum()
}

#[test]
fn kill_9_before_a_flush_replays_the_meter_lines_through_the_same_map() {
    // No table file before the kill: only the journal keeps the lines.
    let Some(rig) = meter_rig("ttyMETER2", |c| {
        c.set_str("output", "flush_interval", "1h")
            .set_str("output", "sync_interval", "100ms")
    }) else {
        return;
    };
    let (mut pty, gw) = rig.start_with_device();
    let start = whole_seconds_ago(60);
    let quiet = quiet_readings(start);
    let mut text: String = quiet
        .iter()
        .map(|(t, db)| meter_line(*t, *db) + "\n")
        .collect();
    text += "2026-11-29 19:30:05 LAeq,1s=--- dB\n";
    pty.write(text.as_bytes());
    gw.wait_metric(INPUTS, 13.0, T);
    let spool = rig.dir.path().join("spool");
    assert!(
        wait_until(T, || journaled(&spool, b"LAeq,1s=") >= 13),
        "the journal holds the 13 lines"
    );
    assert!(files(&rig.dir.path().join("store"), "raw").is_empty());
    gw.kill9();
    drop(pty);

    let gw = rig.start();
    let replayed = gw.log.wait_line("Replayed the journal", T);
    assert!(replayed.contains("inputs=13"), "{replayed}");
    gw.stop();
    let store = rig.dir.path().join("store");
    let raw = rows(&store, "raw");
    let expected: Vec<i64> = quiet.iter().map(|(t, _)| *t).collect();
    assert_eq!(
        event_times(&raw),
        expected,
        "every line once, its local time mapped to UTC as before the kill"
    );
    let rejects = rows(&store, "rejects");
    let reasons: Vec<&str> = rejects.iter().map(|r| s(r, "reason")).collect();
    assert_eq!(
        reasons,
        ["unmapped"],
        "replayed with the meter's regex, not as §1 JSON"
    );
}
