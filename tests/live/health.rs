//! Device health (SPEC §10) through the real binary: a replay on a
//! reproducible arrival clock writes `silent` and `back` to `device_events`
//! exactly when a device stops and restarts; and `pitchside run` reading a
//! real mosquitto reports a device that stops publishing as `silent` on
//! `{prefix}/device/{id}`, even though nothing else arrives, then `back`.

use crate::common;

use common::broker::{mqtt_source, MqttRig};
use common::services::*;
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);

/// 2026-12-01T10:00:00Z, the arrival time of line 1 of the replayed file.
const START: &str = "2026-12-01T10:00:00Z";
const START_US: i64 = 1_796_119_200_000_000;
const SEC: i64 = 1_000_000;

/// A wearable line of player 7 and a crowd line, `second` s after [`START`].
fn band(second: i64) -> String {
    format!(
        r#"{{"sensor":"wearable","device_id":"band-07","event_time":{},"player_id":7,"player_name":"R. Sharma","heart_rate":150}}"#,
        (START_US + second * SEC) / 1000
    )
}

fn crowd(second: i64) -> String {
    format!(
        r#"{{"sensor":"crowd","device_id":"slm-1","event_time":{},"zone_id":"north","decibels":90}}"#,
        (START_US + second * SEC) / 1000
    )
}

/// Replays `lines` one second apart from [`START`]; returns the output folder.
fn replay(dir: &Path, lines: &[String], out: &str) -> std::path::PathBuf {
    let cfg = VenueConfig::new(dir)
        .set_str("health", "silent_after", "5s")
        .write();
    let input = dir.join("input.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out = dir.join(out);
    let mut c = Replay::new(&cfg, &input).output(&out).command();
    c.args(["--received-at", START, "--received-step", "1s"]);
    succeed(&mut c);
    out
}

/// `device_events` as (device, event, last_seen, at), seconds after [`START`].
fn device_events(out: &Path) -> Vec<(String, String, i64, i64)> {
    rows(out, "device_events")
        .iter()
        .map(|r| {
            assert_eq!(s(r, "venue_id"), "testvenue");
            (
                s(r, "device_id").to_string(),
                s(r, "event").to_string(),
                (i(r, "last_seen") - START_US) / SEC,
                (i(r, "at") - START_US) / SEC,
            )
        })
        .collect()
}

#[test]
fn a_replayed_device_that_stops_and_restarts_is_silent_then_back_on_the_arrival_clock() {
    let dir = tempfile::tempdir().unwrap();
    // One line a second: the crowd sensor on every line, the band on lines
    // 0–9 and 20–29 (arrival seconds), silent for ten seconds between.
    let mut lines = Vec::new();
    for sec in 0..30 {
        lines.push(if (10..20).contains(&sec) {
            crowd(sec)
        } else if sec % 2 == 0 {
            band(sec)
        } else {
            crowd(sec)
        });
    }
    let out = replay(dir.path(), &lines, "out");
    let got = device_events(&out);
    // band-07 last arrived at line 9 (odd seconds are crowd lines: its
    // last was second 8); silent 5 s later, back at second 20.
    assert_eq!(
        got,
        [
            ("band-07".into(), "silent".into(), 8, 13),
            ("band-07".into(), "back".into(), 8, 20),
        ]
    );
    let rows = rows(&out, "device_events");
    for r in &rows {
        assert_eq!(s(r, "sensor"), "wearable");
        assert_eq!(i(r, "player_id"), 7);
        assert!(is_null(r, "zone_id"));
        assert_eq!(s(r, "gateway_id"), "gw-1");
    }
    // The same file gives the same events: the wall clock plays no part.
    assert_eq!(device_events(&replay(dir.path(), &lines, "again")), got);
}

#[test]
fn a_crowd_sensor_silent_at_the_end_of_a_replay_names_its_zone() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines: Vec<String> = (0..3).map(crowd).collect();
    lines.extend((3..12).map(band));
    let out = replay(dir.path(), &lines, "out");
    let rows = rows(&out, "device_events");
    assert_eq!(rows.len(), 1, "slm-1 silent, nothing else");
    assert_eq!(s(&rows[0], "device_id"), "slm-1");
    assert_eq!(s(&rows[0], "sensor"), "crowd");
    assert_eq!(s(&rows[0], "zone_id"), "north");
    assert!(is_null(&rows[0], "player_id"));
    assert_eq!((i(&rows[0], "at") - START_US) / SEC, 7);
}

/// A wearable event of band-07 now, as the band's MQTT payload.
fn band_now() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    format!(r#"{{"device_id":"band-07","event_time":{ms},"player_id":7,"heart_rate":150}}"#)
}

/// The device events received so far as (topic, event).
fn device_messages(sub: &common::broker::Subscriber) -> Vec<(String, serde_json::Value)> {
    sub.messages()
        .into_iter()
        .map(|(t, p)| (t, serde_json::from_str(&p).unwrap()))
        .collect()
}

#[test]
fn a_device_that_stops_publishing_is_reported_silent_over_mqtt_then_back() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let table = broker.login(broker.port) + "keep_alive = \"5s\"\n";
    let mut extra = mqtt_source(&table, "topic = \"venue/bands/#\"\nsensor = \"wearable\"\n");
    extra.push_str(&format!(
        "[alerts]\ntopic_prefix = \"alerts\"\n[alerts.mqtt]\n{table}"
    ));
    let silent_after = Duration::from_secs(2);
    let cfg = VenueConfig::fast(rig.dir.path(), rig.metrics)
        .set_str("health", "silent_after", "2s")
        .extra(&extra)
        .write();
    let sub = broker.subscribe("alerts/device/#");
    let gw = rig.start(&cfg);
    gw.log.wait_for("Alert output connected", 1, T);
    gw.log.wait_for("Subscribed.", 1, T);

    broker.publish("venue/bands/band-07", &[band_now(), band_now()]);
    let sent = Instant::now();
    gw.wait_metric("pitchside_devices", 1.0, T);
    assert!(
        wait_until(T, || !sub.messages().is_empty()),
        "no silent published; log:\n{}",
        gw.log.all().join("\n")
    );
    let took = sent.elapsed();
    assert!(
        took <= silent_after + Duration::from_secs(2),
        "silent after {took:?}, wanted at most silent_after + 2 s"
    );
    let (topic, silent) = device_messages(&sub).remove(0);
    assert_eq!(topic, "alerts/device/band-07");
    assert_eq!(silent["event"], "silent");
    assert_eq!(silent["sensor"], "wearable");
    assert_eq!(silent["player_id"], 7);
    assert!(silent["zone_id"].is_null());
    assert!(silent["at"].as_str().unwrap().ends_with('Z'));

    broker.publish("venue/bands/band-07", &[band_now()]);
    assert!(
        wait_until(T, || sub.messages().len() >= 2),
        "no back published; log:\n{}",
        gw.log.all().join("\n")
    );
    let (topic, back) = device_messages(&sub).remove(1);
    assert_eq!(topic, "alerts/device/band-07");
    assert_eq!(back["event"], "back");
    assert_eq!(back["last_seen"], silent["last_seen"]);
    gw.wait_metric("pitchside_device_events_total{event=\"back\"}", 1.0, T);
    // (The band goes silent again 2 s after it came back: no exact count.)
    assert!(gw.metric("pitchside_device_events_total{event=\"silent\"}") >= 1.0);
    assert_eq!(gw.log.count("DEVICE back"), 1, "the log line of each event");
    assert!(gw.log.count("DEVICE silent") >= 1);

    gw.stop();
    let events: Vec<String> = rows(&rig.store(), "device_events")
        .iter()
        .map(|r| s(r, "event").to_string())
        .collect();
    assert_eq!(events[..2], ["silent", "back"], "{events:?}");
}

/// libfaketime (Debian: libfaketime), which lets a test step the gateway's
/// wall clock while its monotonic clock runs on; `None` (skipped loudly,
/// or a failure in CI) where it is not installed.
fn libfaketime() -> Option<std::path::PathBuf> {
    let found = std::fs::read_dir("/usr/lib")
        .ok()?
        .flatten()
        .map(|d| d.path().join("faketime/libfaketime.so.1"))
        .find(|p| p.exists());
    if found.is_none() {
        skip("this test needs libfaketime (Debian: apt-get install libfaketime)");
    }
    found
}

/// A wearable line of `device` stamped with the real time.
fn band_line(device: &str) -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    format!(
        "{{\"device_id\":\"{device}\",\"event_time\":{ms},\"player_id\":7,\"heart_rate\":150}}\n"
    )
}

#[test]
fn silence_is_measured_in_elapsed_time_when_the_wall_clock_steps_back_or_forward() {
    use common::serial::SerialRig;
    let Some(lib) = libfaketime() else { return };
    let Some(rig) = SerialRig::with_socat("ttyC0", "sensor = \"wearable\"\n", |c| {
        c.set_str("health", "silent_after", "2s")
            .set_str("limits", "max_future", "2h")
    }) else {
        return;
    };
    // The gateway's wall clock is the real one plus the offset in this file
    // (read again every second); its monotonic clock is left alone.
    let offset = rig.dir.path().join("faketime");
    std::fs::write(&offset, "+0\n").unwrap();
    let mut pty = common::serial::Pty::open(&rig.tty);
    let env = [
        ("LD_PRELOAD", lib.to_str().unwrap()),
        ("FAKETIME_TIMESTAMP_FILE", offset.to_str().unwrap()),
        ("FAKETIME_CACHE_DURATION", "1"),
        ("DONT_FAKE_MONOTONIC", "1"),
    ];
    let gw = Gateway::start(&rig.cfg, rig.port, &env);
    gw.log.wait_for("Serial port opened.", 1, T);

    // Forward by an hour while band-1 keeps sending: nobody goes silent.
    let sending = Instant::now();
    while sending.elapsed() < Duration::from_secs(5) {
        if (2..3).contains(&sending.elapsed().as_secs()) {
            std::fs::write(&offset, "+3600\n").unwrap();
        }
        pty.write(band_line("band-1").as_bytes());
        std::thread::sleep(Duration::from_millis(200));
    }
    gw.log.wait_for("The system clock stepped", 1, T);
    let silent = "pitchside_device_events_total{event=\"silent\"}";
    assert_eq!(gw.metric(silent), 0.0, "log:\n{}", gw.log.all().join("\n"));

    // Back by an hour and ten minutes, and band-1 stops: silent 2 s of
    // elapsed time later, not 70 minutes.
    std::fs::write(&offset, "-600\n").unwrap();
    let stopped = Instant::now();
    gw.log.wait_for("The system clock stepped", 2, T);
    gw.wait_metric(silent, 1.0, T);
    let took = stopped.elapsed();
    assert!(took < Duration::from_secs(6), "silent after {took:?}");
    assert_eq!(gw.metric(silent), 1.0);
    gw.stop();
}
