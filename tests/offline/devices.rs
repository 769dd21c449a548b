//! The device profiles (config/devices/*.toml) against their samples: each
//! `<profile>.sample` replayed through its source's format and map must give
//! the same alerts, windows and readings as `<profile>.expected.jsonl`, the
//! same events written as SPEC §1 JSON by `make_samples.py` (which does not
//! use pitchside's decoder). And `simulate --as <profile>` writes lines the
//! profile reads back, with the simulator's values.

use crate::common;

use common::*;
use parquet::record::Field;
use std::path::{Path, PathBuf};

/// One profile: its file, its source's name, and how its sample is replayed.
struct Profile {
    /// `config/devices/{file}.toml`, `.sample`, `.expected.jsonl`.
    file: &'static str,
    /// The source's `name` in the profile.
    name: &'static str,
    /// The MQTT topic the sample's payloads stand for (see make_samples.py).
    topic: Option<&'static str>,
    /// Event time is the arrival time: replay with --received-at.
    arrival: bool,
    /// The sample's bad lines (1-based) and their reject reasons.
    bad: &'static [(usize, &'static str)],
}

const PROFILES: [Profile; 6] = [
    Profile {
        file: "sound-level-meter",
        name: "slm-north",
        topic: None,
        arrival: false,
        bad: &[(31, "unmapped"), (62, "unmapped")],
    },
    Profile {
        file: "radar-gun",
        name: "radar-bowling-end",
        topic: None,
        arrival: true,
        bad: &[(41, "unmapped"), (101, "unmapped")],
    },
    Profile {
        file: "ble-heart-rate",
        name: "ble-straps",
        topic: Some("ble/hr/7/C7:1A:2B:3C:4D:5E"),
        arrival: true,
        bad: &[(34, "unmapped"), (89, "non_finite")],
    },
    Profile {
        file: "ball-tracker",
        name: "ball-tracker",
        topic: None,
        arrival: false,
        bad: &[(27, "unmapped"), (59, "unmapped")],
    },
    Profile {
        file: "crowd-counter",
        name: "crowd-counters",
        topic: Some("venue/crowd/north-stand"),
        arrival: false,
        bad: &[(21, "unmapped"), (67, "unmapped")],
    },
    Profile {
        file: "wearable-hub",
        name: "wearable-hub",
        topic: None,
        arrival: false,
        bad: &[(38, "unmapped"), (84, "non_finite")],
    },
];

/// What `make_samples.py` says the arrival of line 1 is.
const RECEIVED_AT: &str = "2026-11-29T14:00:00Z";
/// Tables whose rows must be the same for a sample and its twin.
const TABLES: [&str; 5] = [
    "alerts",
    "windows_wearable",
    "windows_pitch",
    "windows_crowd",
    "raw",
];
/// Columns that say when the gateway did something (alert_id does not
/// depend on them: it is made of the event's time).
const WALL_CLOCK: [&str; 2] = ["received_at", "detected_at"];

fn devices() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config/devices")
}

/// A venue config: the test's [venue]/[output] head and the profile's text.
fn venue(dir: &Path, p: &Profile) -> PathBuf {
    let text = std::fs::read_to_string(devices().join(format!("{}.toml", p.file))).unwrap();
    VenueConfig::new(dir).extra(&text).write()
}

/// `replay --source` of the profile's sample (with its topic and arrival).
fn replay_sample(cfg: &Path, p: &Profile, input: &Path, out: &Path) -> std::process::Output {
    let mut c = Replay::new(cfg, input).output(out).command();
    c.args(["--source", p.name]);
    if let Some(t) = p.topic {
        c.args(["--topic", t]);
    }
    if p.arrival {
        c.args(["--received-at", RECEIVED_AT, "--received-step", "1s"]);
    }
    succeed(&mut c)
}

/// A table's rows without the wall-clock columns.
fn table(out: &Path, t: &str) -> Vec<Row> {
    let mut rows = rows(out, t);
    for r in &mut rows {
        for k in WALL_CLOCK {
            r.remove(k);
        }
    }
    rows
}

fn bytes(r: &Row, k: &str) -> Vec<u8> {
    match &r[k] {
        Field::Bytes(b) => b.data().to_vec(),
        f => panic!("{k} is not bytes: {f:?}"),
    }
}

#[test]
fn every_profile_file_is_tested_under_the_name_it_declares() {
    let mut files: Vec<String> = std::fs::read_dir(devices())
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.strip_suffix(".toml").map(str::to_string)
        })
        .collect();
    files.sort();
    let mut tested: Vec<&str> = PROFILES.iter().map(|p| p.file).collect();
    tested.sort();
    assert_eq!(files, tested, "a profile without a sample test");
    for p in &PROFILES {
        let text = std::fs::read_to_string(devices().join(format!("{}.toml", p.file))).unwrap();
        assert!(
            text.contains(&format!("name = \"{}\"", p.name)),
            "{}.toml does not name its source {:?}",
            p.file,
            p.name
        );
    }
}

#[test]
fn every_profile_passes_check_config() {
    for p in &PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let cfg = venue(dir.path(), p);
        let o = succeed(bin().args(["check-config", "--config"]).arg(&cfg));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains(p.name), "{}: {out}", p.file);
    }
}

#[test]
fn every_sample_gives_the_tables_of_its_twin_and_rejects_only_its_bad_lines() {
    for p in &PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let cfg = venue(dir.path(), p);
        let sample = devices().join(format!("{}.sample", p.file));
        let twin = devices().join(format!("{}.expected.jsonl", p.file));
        let (got, want) = (dir.path().join("sample"), dir.path().join("twin"));
        replay_sample(&cfg, p, &sample, &got);
        Replay::new(&cfg, &twin).output(&want).succeed();

        for t in TABLES {
            let (g, w) = (table(&got, t), table(&want, t));
            assert_eq!(
                g.len(),
                w.len(),
                "{}: {t} has another number of rows",
                p.file
            );
            for (n, (g, w)) in g.iter().zip(&w).enumerate() {
                assert_eq!(g, w, "{}: {t} row {n} differs", p.file);
            }
        }
        assert!(!rows(&got, "alerts").is_empty(), "{}: no alert", p.file);
        let windows = ["windows_wearable", "windows_pitch", "windows_crowd"];
        assert!(
            windows.iter().any(|t| !rows(&got, t).is_empty()),
            "{}: no window closed",
            p.file
        );
        assert!(
            rows(&want, "rejects").is_empty(),
            "{}: the twin has rejects",
            p.file
        );

        let lines: Vec<Vec<u8>> = std::fs::read(&sample)
            .unwrap()
            .split(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        let mut rejects: Vec<(usize, String, Vec<u8>)> = rows(&got, "rejects")
            .iter()
            .map(|r| {
                let detail = s(r, "detail");
                let line = detail
                    .strip_prefix("line ")
                    .and_then(|d| d.split(':').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{}: detail without a line: {detail}", p.file));
                (line, s(r, "reason").to_string(), bytes(r, "payload"))
            })
            .collect();
        rejects.sort();
        let want: Vec<(usize, String, Vec<u8>)> = p
            .bad
            .iter()
            .map(|&(n, why)| (n, why.to_string(), lines[n - 1].clone()))
            .collect();
        assert_eq!(rejects, want, "{}: rejects", p.file);
    }
}

/// The simulator's first event time in the `--as` tests.
const SIM_START: &str = "2026-11-29T14:00:00Z";

/// `simulate --seed 7 --start SIM_START --count n [--as profile]` into a file.
fn simulate(dir: &Path, profile: Option<&str>, count: u32) -> PathBuf {
    let out = dir.join(format!("sim-{}.txt", profile.unwrap_or("json")));
    let mut c = bin();
    c.args(["simulate", "--seed", "7", "--start", SIM_START, "--count"])
        .arg(count.to_string())
        .arg("--output")
        .arg(&out);
    if let Some(p) = profile {
        c.args(["--as", p]);
    }
    succeed(&mut c);
    out
}

#[test]
fn simulate_as_every_profile_writes_lines_its_profile_accepts_every_one_of() {
    for p in &PROFILES {
        let dir = tempfile::tempdir().unwrap();
        let cfg = venue(dir.path(), p);
        let sim = simulate(dir.path(), Some(p.file), 300);
        let text = std::fs::read_to_string(&sim).unwrap();
        assert_eq!(
            text.lines().count(),
            300,
            "{}: --count counts lines",
            p.file
        );
        let out = dir.path().join("out");
        replay_sample(&cfg, p, &sim, &out);
        let rejects = rows(&out, "rejects");
        assert!(
            rejects.is_empty(),
            "{}: {} rejects, the first: {}",
            p.file,
            rejects.len(),
            s(&rejects[0], "detail")
        );
        assert!(
            !rows(&out, "raw").is_empty(),
            "{}: nothing accepted",
            p.file
        );
    }
}

/// The simulator's §1 events that `--as` renders for profile `p`, in order:
/// its kind, one device for the one-instrument profiles, and at most one a
/// second for the sound meter.
fn rendered_events(p: &Profile, json: &str) -> Vec<serde_json::Value> {
    let kind = match p.file {
        "sound-level-meter" | "crowd-counter" => "crowd",
        "radar-gun" | "ball-tracker" => "pitch",
        _ => "wearable",
    };
    let single = matches!(p.file, "sound-level-meter" | "radar-gun");
    let mut device: Option<String> = None;
    let mut last_second: Option<String> = None;
    let mut out = Vec::new();
    for line in json.lines() {
        let e: serde_json::Value = serde_json::from_str(line).unwrap();
        if e["sensor"] != kind {
            continue;
        }
        let id = e["device_id"].as_str().unwrap().to_string();
        if single && device.as_ref().is_some_and(|d| *d != id) {
            continue;
        }
        device.get_or_insert(id);
        if p.file == "sound-level-meter" {
            let second = e["event_time"].as_str().unwrap()[..19].to_string();
            if last_second.as_ref() == Some(&second) {
                continue;
            }
            last_second = Some(second);
        }
        out.push(e);
    }
    out
}

/// The metrics a profile carries and how near their device form is to the
/// simulator's value (half the last digit the device prints).
fn tolerances(file: &str) -> &'static [(&'static str, f64)] {
    match file {
        "sound-level-meter" => &[("decibels", 0.05)],
        "radar-gun" => &[("ball_speed", 0.05 * 1.609344)],
        "ble-heart-rate" => &[("heart_rate", 0.5)],
        "ball-tracker" => &[
            ("ball_speed", 0.05),
            ("spin_rate", 0.5),
            ("impact_x", 0.005),
            ("impact_y", 0.005),
        ],
        "crowd-counter" => &[("density", 0.0)],
        _ => &[
            ("heart_rate", 0.0),
            ("acceleration", 0.0),
            ("running_dist", 0.0),
        ],
    }
}

#[test]
fn tap_of_simulate_as_shows_the_simulators_values_within_the_devices_rounding() {
    let dir = tempfile::tempdir().unwrap();
    let json = std::fs::read_to_string(simulate(dir.path(), None, 30_000)).unwrap();
    for p in &PROFILES {
        let cfg = venue(dir.path(), p);
        let sim = simulate(dir.path(), Some(p.file), 300);
        let mut c = bin();
        c.args(["tap", "--config"])
            .arg(&cfg)
            .args(["--source", p.name, "--input"])
            .arg(&sim);
        if let Some(t) = p.topic {
            c.args(["--topic", t]);
        }
        let o = succeed(&mut c);
        let got: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|l| l.get("event").cloned())
            .collect();
        let want = rendered_events(p, &json);
        assert!(
            got.len() >= 299 && want.len() >= got.len(),
            "{}: {} events",
            p.file,
            got.len()
        );
        for (n, (g, w)) in got.iter().zip(&want).enumerate() {
            for (metric, tol) in tolerances(p.file) {
                let (g, w) = (g[metric].as_f64().unwrap(), w[metric].as_f64().unwrap());
                assert!(
                    (g - w).abs() <= tol + 1e-9,
                    "{} event {n}: {metric} {g} vs {w}",
                    p.file
                );
            }
            if matches!(p.file, "ball-tracker" | "crowd-counter" | "wearable-hub") {
                for k in [
                    "device_id",
                    "delivery_id",
                    "zone_id",
                    "player_id",
                    "player_name",
                ] {
                    assert_eq!(g.get(k), w.get(k), "{} event {n}: {k}", p.file);
                }
            }
            let (gt, wt) = (
                g["event_time"].as_str().unwrap(),
                w["event_time"].as_str().unwrap(),
            );
            match p.file {
                "sound-level-meter" => assert_eq!(gt[..19], wt[..19], "{} event {n}", p.file),
                "radar-gun" | "ble-heart-rate" => {}
                _ => assert_eq!(gt, wt, "{} event {n}", p.file),
            }
        }
    }
}

/// A rehearsal over MQTT: `simulate --as` publishes on the device topics of
/// the BLE and crowd profiles, and a gateway subscribed with those profiles
/// (their broker swapped for a private mosquitto) accepts every message.
#[test]
fn simulate_as_publishes_on_the_device_topics_the_mqtt_profiles_subscribe_to() {
    use common::broker::{MqttRig, PASSWORD_ENV, USER};
    use std::time::Duration;
    for p in PROFILES.iter().filter(|p| p.topic.is_some()) {
        let Some(rig) = MqttRig::new() else { return };
        let broker = &rig.broker;
        let text = std::fs::read_to_string(devices().join(format!("{}.toml", p.file))).unwrap();
        let text = text.replace(
            "host = \"10.0.0.5\"\nport = 1883\n",
            &broker.login(broker.port),
        );
        let cfg = VenueConfig::fast(rig.dir.path(), rig.metrics)
            .extra(&text)
            .write();
        let gw = rig.start(&cfg);
        gw.log.wait_for("Subscribed.", 1, Duration::from_secs(15));
        succeed(
            bin()
                .args(["simulate", "--as", p.file, "--count", "120", "--seed", "7"])
                .args(["--mqtt-host", "127.0.0.1", "--mqtt-port"])
                .arg(broker.port.to_string())
                .args([
                    "--mqtt-username",
                    USER,
                    "--mqtt-password-env",
                    PASSWORD_ENV.0,
                ])
                .env(PASSWORD_ENV.0, PASSWORD_ENV.1),
        );
        gw.wait_metric("pitchside_input_rows_total", 120.0, Duration::from_secs(15));
        gw.stop();
        let store = rig.store();
        assert!(rows(&store, "rejects").is_empty(), "{}: rejects", p.file);
        let raw = rows(&store, "raw");
        assert!(raw.len() >= 120, "{}: {} readings", p.file, raw.len());
        let want = if p.file == "ble-heart-rate" {
            "C7:1A:2B:3C:"
        } else {
            "mic-"
        };
        assert!(
            raw.iter().all(|r| s(r, "device_id").starts_with(want)),
            "{}: the device id comes from the topic or the tags",
            p.file
        );
    }
}

/// A rehearsal over a serial line: `simulate --as` writes to one end of a
/// pseudo-terminal pair, a gateway with the profile (its path swapped for
/// the other end) reads every line.
#[test]
fn simulate_as_writes_to_a_serial_port_that_the_serial_profiles_read() {
    use common::serial::Pty;
    use common::services::{free_port, have, Gateway};
    use std::time::Duration;
    if !have(&["socat"]) {
        return;
    }
    for p in PROFILES.iter().filter(|p| p.topic.is_none()) {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("ttyA"), dir.path().join("ttyB"));
        let pair = Pty::pair(&a, &b);
        let text = std::fs::read_to_string(devices().join(format!("{}.toml", p.file))).unwrap();
        let text: String = text
            .lines()
            .map(|l| match l.starts_with("path = ") {
                true => format!("path = \"{}\"\n", b.display()),
                false => format!("{l}\n"),
            })
            .collect();
        let port = free_port();
        let cfg = VenueConfig::fast(dir.path(), port).extra(&text).write();
        let gw = Gateway::start(&cfg, port, &[]);
        gw.log
            .wait_for("Serial port opened.", 1, Duration::from_secs(15));
        succeed(
            bin()
                .args(["simulate", "--as", p.file, "--count", "100", "--seed", "7"])
                .arg("--serial")
                .arg(&a),
        );
        let events = if p.file == "ball-tracker" {
            99.0
        } else {
            100.0
        };
        gw.wait_metric(
            "pitchside_input_rows_total",
            events,
            Duration::from_secs(15),
        );
        gw.stop();
        drop(pair);
        let rejects = rows(&dir.path().join("store"), "rejects");
        assert!(rejects.is_empty(), "{}: {} rejects", p.file, rejects.len());
    }
}

#[test]
fn replaying_a_clockless_device_without_arrival_times_is_refused_with_the_fix_named() {
    // A device with no clock (event_time = "arrival") read from a file: the
    // file has no arrival times, and lines stamped with one read time would
    // become duplicates of each other and vanish.
    for p in PROFILES.iter().filter(|p| p.arrival) {
        let dir = tempfile::tempdir().unwrap();
        let cfg = venue(dir.path(), p);
        let sample = devices().join(format!("{}.sample", p.file));
        let out = dir.path().join("out");
        let mut c = Replay::new(&cfg, &sample).output(&out).command();
        c.args(["--source", p.name]);
        if let Some(t) = p.topic {
            c.args(["--topic", t]);
        }
        let got = c.output().unwrap();
        let err = String::from_utf8_lossy(&got.stderr);
        assert!(
            !got.status.success()
                && err.contains("--received-at")
                && err.contains("--received-step"),
            "{}: {:?}\nstdout: {}\nstderr: {err}",
            p.file,
            got.status,
            String::from_utf8_lossy(&got.stdout)
        );
        assert!(!out.join("raw").exists(), "{}: nothing written", p.file);
        // A step of 0 s would make every line one instant: refused as well.
        c.args(["--received-at", RECEIVED_AT, "--received-step", "0s"]);
        let got = c.output().unwrap();
        assert!(!got.status.success(), "{}: --received-step 0s", p.file);
        assert!(String::from_utf8_lossy(&got.stderr).contains("--received-step"));
    }
}

#[test]
fn a_clockless_device_replayed_with_arrival_times_keeps_every_good_line() {
    let p = PROFILES.iter().find(|p| p.file == "radar-gun").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cfg = venue(dir.path(), p);
    let sample = devices().join(format!("{}.sample", p.file));
    let text = std::fs::read_to_string(&sample).unwrap();
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
    let out = dir.path().join("out");
    replay_sample(&cfg, p, &sample, &out);
    assert_eq!(rows(&out, "raw").len(), lines - p.bad.len());
    assert_eq!(rows(&out, "rejects").len(), p.bad.len());
}

#[test]
fn a_sound_meter_without_a_clock_replayed_with_arrival_times_gives_every_reading() {
    // The meter prints "LAeq,1s=84.3 dB" once a second and nothing else.
    let dir = tempfile::tempdir().unwrap();
    let cfg = VenueConfig::new(dir.path())
        .extra(
            "[[sources.serial]]\nname = \"slm\"\npath = \"/dev/ttyUSB9\"\nformat = \"regex\"\n\
             pattern = '^LAeq,1s=(?P<db>\\d+(?:\\.\\d+)?) dB$'\n\
             [sources.serial.map]\nsensor = \"crowd\"\ndevice_id = { value = \"slm-1\" }\n\
             zone_id = { value = \"north\" }\nevent_time = \"arrival\"\n\
             [sources.serial.map.metrics]\ndecibels = { field = \"db\" }\n",
        )
        .write();
    let mut text: String = (0..300)
        .map(|i| format!("LAeq,1s={}.{} dB\n", 70 + i % 20, i % 10))
        .collect();
    text.push_str("ERR overload\n\n--- reset ---\n");
    let input = dir.path().join("slm.txt");
    std::fs::write(&input, text).unwrap();
    let out = dir.path().join("out");
    let refused = Replay::new(&cfg, &input)
        .output(&out)
        .command()
        .args(["--source", "slm"])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let mut c = Replay::new(&cfg, &input).output(&out).command();
    c.args([
        "--source",
        "slm",
        "--received-at",
        RECEIVED_AT,
        "--received-step",
        "1s",
    ]);
    succeed(&mut c);
    assert_eq!(rows(&out, "raw").len(), 300);
    let rejects = rows(&out, "rejects");
    assert_eq!(rejects.len(), 2);
    assert!(rejects.iter().all(|r| s(r, "reason") == "unmapped"));
}
