//! Replays a generated file with every kind of bad line and reads every table
//! back with the `parquet` crate: schemas, row counts, a hand-computed window
//! and alert, one reject per reason.

use crate::common;

use common::*;
use parquet::basic::{Compression, LogicalType, TimeUnit};
use parquet::file::reader::{FileReader, SerializedFileReader};
use pitchside::tables::{ColType, TableId};
use std::collections::BTreeMap;

const BASE: &str = "2026-11-29T19:30";
const BASE_US: i64 = 1_795_980_600_000_000; // 2026-11-29T19:30:00Z

fn t(sec: u32) -> String {
    format!("{BASE}:{:02}.000Z", sec).replace("19:30:6", "19:31:0") // only used for sec < 60
}

fn event(sec: u32, hr: f64) -> String {
    assert!(sec < 60);
    format!(
        r#"{{"device_id":"w-7","event_time":"{}","match_id":4,"event_id":{sec},"player_id":7,"player_name":"Asha","heart_rate":{hr}}}"#,
        t(sec)
    )
}

/// The scenario: 30 readings in minute 0 (alternating 100/101, a 110 spike
/// at reading 20), a duplicate, one reading at 19:31:35 that closes minute 0,
/// a late reading for minute 0, and one line per reject reason.
fn input() -> Vec<u8> {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut push = |s: String| lines.push(s.into_bytes());
    for i in 0..30u32 {
        let hr = if i == 20 {
            110.0
        } else {
            100.0 + (i % 2) as f64
        };
        push(event(2 * i, hr));
    }
    push(event(6, 100.0)); // duplicate of reading 3 (same key, same time)
    push(r#"{"sensor":"wearable","device_id":"w-7","event_time":"2026-11-29T19:31:35Z","match_id":4,"player_id":7,"heart_rate":100}"#.into());
    push(event(11, 101.0)); // late: minute 0 ended at 19:31:00 <= watermark 19:31:05
    push(String::new());
    push("   ".into());
    // One line per reject reason.
    push(format!(
        r#"{{"device_id":"w-7","pad":"{}"}}"#,
        "x".repeat(5000)
    )); // too_large
    push(r#"{"device_id":"bad-"#.into()); // invalid_json
    push("[1,2,3]".into()); // not_an_object
    push(r#"{"event_time":0,"player_id":7,"heart_rate":1}"#.into()); // missing_field
    push(r#"{"device_id":"w-8","event_time":0,"player_id":8,"heart_rate":"72"}"#.into()); // invalid_field
    push(r#"{"device_id":"w-8","event_time":0,"player_id":8,"heart_rate":NaN}"#.into()); // non_finite
    push(r#"{"device_id":"w-8","event_time":0,"player_id":8,"heart_rate":1e999}"#.into()); // out_of_range
    push(
        r#"{"sensor":"weather","device_id":"w-8","event_time":0,"player_id":8,"heart_rate":1}"#
            .into(),
    ); // unknown_sensor
    push(r#"{"sensor":"pitch","device_id":"p-1","event_time":0,"ball_speed":140}"#.into()); // sensor_mismatch
    push(r#"{"device_id":"w-8","event_time":0,"player_id":8}"#.into()); // no_metrics
    push(r#"{"device_id":"w-8","event_time":"yesterday","player_id":8,"heart_rate":1}"#.into()); // invalid_time
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(&l);
        out.push(b'\n');
    }
    // invalid_utf8, and a last line without a newline
    out.extend_from_slice(b"{\"device_id\":\"\xff\xfe\"}\n");
    out
}

/// Replays `input` (written to `dir/name`) as wearable lines into `dir/out`.
fn replay_wearable(dir: &std::path::Path, name: &str, input: &[u8]) -> std::process::Output {
    let cfg = config(dir, "");
    let input_path = dir.join(name);
    std::fs::write(&input_path, input).unwrap();
    Replay::new(&cfg, &input_path)
        .output(&dir.join("out"))
        .sensor("wearable")
        .run()
}

/// Replays the scenario into `dir/out`, asserting success; returns `dir/out`.
fn replay(dir: &std::path::Path) -> std::path::PathBuf {
    let o = replay_wearable(dir, "input.jsonl", &input());
    assert!(
        o.status.success(),
        "replay failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    dir.join("out")
}

#[test]
fn replay_writes_every_table_with_hand_computed_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = replay(dir.path());

    let alerts = rows(&out, "alerts");
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let a = &alerts[0];
    let spike_us = BASE_US + 40_000_000;
    assert_eq!(
        s(a, "alert_id"),
        format!("testvenue/wearable/w-7/heart_rate/{spike_us}")
    );
    assert_eq!(f(a, "value"), 110.0);
    assert_eq!(i(a, "baseline_count"), 20);
    assert!((f(a, "baseline_mean") - 100.5).abs() < 1e-12);
    assert!((f(a, "baseline_std") - 0.5).abs() < 1e-12);
    assert!((f(a, "z_score") - 19.0).abs() < 1e-9);
    assert_eq!(i(a, "event_time"), spike_us);
    assert_eq!(i(a, "match_id"), 4);
    assert_eq!(
        (s(a, "venue_id"), s(a, "gateway_id")),
        ("testvenue", "gw-1")
    );
    // The identity of the event that raised it (SPEC §10).
    assert_eq!((i(a, "player_id"), s(a, "player_name")), (7, "Asha"));
    assert!(is_null(a, "zone_id") && is_null(a, "delivery_id"), "{a:?}");

    let windows = rows(&out, "windows_wearable");
    assert_eq!(
        windows.len(),
        2,
        "minute 0, and minute 1 flushed at end of input"
    );
    let w = &windows[0];
    assert_eq!(i(w, "window_start"), BASE_US);
    assert_eq!(i(w, "window_end"), BASE_US + 60_000_000);
    assert_eq!((i(w, "match_id"), i(w, "player_id")), (4, 7));
    assert_eq!(s(w, "player_name"), "Asha");
    assert_eq!(
        i(w, "events"),
        30,
        "duplicate and late readings are not counted"
    );
    assert!((f(w, "heart_rate_mean") - 3025.0 / 30.0).abs() < 1e-12);
    assert_eq!(f(w, "heart_rate_min"), 100.0);
    assert_eq!(f(w, "heart_rate_max"), 110.0);
    assert!(is_null(w, "acceleration_mean") && is_null(w, "running_dist_max"));
    assert_eq!(i(&windows[1], "events"), 1);
    assert!(
        is_null(&windows[1], "player_name"),
        "the 19:31:35 event had no name"
    );

    let raw = rows(&out, "raw");
    assert_eq!(
        raw.len(),
        32,
        "30 + the closing reading + the late one; not the duplicate"
    );
    assert!(raw
        .iter()
        .all(|r| s(r, "metric") == "heart_rate" && s(r, "sensor") == "wearable"));
    // No clock judges a replay: its rows say nothing of one.
    assert!(raw.iter().all(|r| is_null(r, "clock_synchronized")));
    assert!(alerts.iter().all(|r| is_null(r, "clock_synchronized")));

    let late = rows(&out, "late");
    assert_eq!(late.len(), 1);
    assert_eq!(i(&late[0], "event_time"), BASE_US + 11_000_000);
    assert_eq!(i(&late[0], "watermark"), BASE_US + 65_000_000);
    assert_eq!(i(&late[0], "event_id"), 11);

    let rejects = rows(&out, "rejects");
    let mut by_reason: BTreeMap<String, usize> = BTreeMap::new();
    for r in &rejects {
        *by_reason.entry(s(r, "reason").to_string()).or_default() += 1;
        assert!(s(r, "source").starts_with("replay:"), "{}", s(r, "source"));
        assert!(!s(r, "detail").is_empty());
    }
    let expected = [
        "invalid_field",
        "invalid_json",
        "invalid_time",
        "invalid_utf8",
        "missing_field",
        "no_metrics",
        "non_finite",
        "not_an_object",
        "out_of_range",
        "sensor_mismatch",
        "too_large",
        "unknown_sensor",
    ];
    assert_eq!(by_reason.keys().cloned().collect::<Vec<_>>(), expected);
    assert!(by_reason.values().all(|&n| n == 1), "{by_reason:?}");
    let too_large = rejects
        .iter()
        .find(|r| s(r, "reason") == "too_large")
        .unwrap();
    match &too_large["payload"] {
        parquet::record::Field::Bytes(b) => {
            assert_eq!(b.len(), 4096, "payload cut to max_event_bytes")
        }
        other => panic!("payload is {other:?}"),
    }

    let progress = rows(&out, "progress");
    assert_eq!(progress.len(), 1);
    assert_eq!(
        i(&progress[0], "input_rows"),
        33 + 12,
        "blank lines are not inputs"
    );
    assert_eq!(i(&progress[0], "rejected_rows"), 12);
    assert_eq!(i(&progress[0], "late_rows"), 1);
    assert_eq!(i(&progress[0], "duplicate_rows"), 1);
    assert_eq!(i(&progress[0], "alerts"), 1);

    assert!(
        files(&out, "fatigue_alerts").is_empty(),
        "no fatigue in this input"
    );
    assert!(
        !out.join("_pitchside_spool").exists(),
        "temporary spool removed"
    );
}

#[test]
fn every_file_has_the_table_schema_utc_micros_and_zstd() {
    let dir = tempfile::tempdir().unwrap();
    let out = replay(dir.path());
    let mut seen = 0;
    for table in TableId::ALL {
        for path in files(&out, table.name()) {
            seen += 1;
            let rel = path
                .strip_prefix(&out)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let parts: Vec<_> = rel.split('/').collect();
            assert_eq!(parts[0], table.name());
            assert_eq!(parts[1], "venue_id=testvenue");
            assert!(
                parts[2].starts_with("date=2026-11-29")
                    || table == TableId::Rejects
                    || table == TableId::Progress,
                "{rel}"
            );
            assert!(
                parts[3].starts_with("gw-1-") && parts[3].len() == "gw-1-".len() + 12 + 8,
                "{rel}"
            );
            let r = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
            let meta = r.metadata();
            let schema = meta.file_metadata().schema_descr();
            let cols = table.columns();
            assert_eq!(schema.num_columns(), cols.len(), "{rel}");
            for (k, c) in cols.iter().enumerate() {
                let d = schema.column(k);
                assert_eq!(d.name(), c.name);
                assert_eq!(
                    d.self_type().is_optional(),
                    c.nullable,
                    "{}.{}",
                    table.name(),
                    c.name
                );
                match c.ty {
                    ColType::Ts => assert_eq!(
                        d.logical_type_ref(),
                        Some(&LogicalType::timestamp(true, TimeUnit::MICROS)),
                        "{}.{}",
                        table.name(),
                        c.name
                    ),
                    ColType::Utf8 => assert_eq!(d.logical_type_ref(), Some(&LogicalType::String)),
                    _ => {}
                }
            }
            for rg in meta.row_groups() {
                for col in rg.columns() {
                    assert!(matches!(col.compression(), Compression::ZSTD(_)), "{rel}");
                }
            }
        }
    }
    assert!(seen >= 6);
}

/// Twelve calm readings and a spike from each of a crowd meter, a pitch
/// radar and a generic sensor.
fn spikes_of_every_kind() -> Vec<u8> {
    let heads = [
        (
            r#""sensor":"crowd","device_id":"slm-1","zone_id":"north-stand""#,
            "decibels",
        ),
        (
            r#""sensor":"pitch","device_id":"radar","delivery_id":42"#,
            "ball_speed",
        ),
        (
            r#""sensor":"generic","device_id":"env-1","metric":"temp""#,
            "value",
        ),
    ];
    let mut out = String::new();
    for sec in 0..13u32 {
        let x = if sec == 12 {
            500.0
        } else {
            100.0 + (sec % 2) as f64
        };
        for (head, metric) in heads {
            out += &format!(
                "{{{head},\"event_time\":\"{}\",\"{metric}\":{x}}}\n",
                t(sec)
            );
        }
    }
    out.into_bytes()
}

#[test]
fn alerts_read_back_with_the_zone_or_delivery_of_their_event_and_nulls_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("kinds.jsonl");
    std::fs::write(&input, spikes_of_every_kind()).unwrap();
    let out = dir.path().join("out");
    Replay::new(&config(dir.path(), ""), &input)
        .output(&out)
        .succeed();
    let alerts: BTreeMap<String, Row> = rows(&out, "alerts")
        .into_iter()
        .map(|r| (s(&r, "sensor").to_string(), r))
        .collect();
    assert_eq!(alerts.len(), 3, "{alerts:?}");
    let crowd = &alerts["crowd"];
    assert_eq!(s(crowd, "zone_id"), "north-stand");
    assert!(is_null(crowd, "player_id") && is_null(crowd, "player_name"));
    assert!(is_null(crowd, "delivery_id"));
    let pitch = &alerts["pitch"];
    assert_eq!(i(pitch, "delivery_id"), 42);
    assert!(is_null(pitch, "zone_id") && is_null(pitch, "player_id"));
    let generic = &alerts["generic"];
    for c in ["player_id", "player_name", "zone_id", "delivery_id"] {
        assert!(is_null(generic, c), "generic {c}: {generic:?}");
    }
}

#[test]
fn replaying_again_into_the_same_folder_continues_the_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let out = replay(dir.path());
    let first = files(&out, "alerts");
    assert!(first[0].ends_with("gw-1-000000000000.parquet"));
    replay(dir.path());
    let both = files(&out, "alerts");
    assert_eq!(both.len(), 2);
    assert!(both[1].ends_with("gw-1-000000000001.parquet"));
}

#[test]
fn the_same_input_gives_the_same_alert_and_window_bytes() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let (oa, ob) = (replay(a.path()), replay(b.path()));
    for table in ["alerts", "windows_wearable", "late"] {
        let fa = files(&oa, table);
        let fb = files(&ob, table);
        assert_eq!(fa.len(), fb.len());
        for (x, y) in fa.iter().zip(&fb) {
            let (ra, rb) = (rows(&oa, table), rows(&ob, table));
            // detected_at and received_at are wall-clock; everything else must match.
            let strip = |rs: Vec<Row>| -> Vec<Row> {
                rs.into_iter()
                    .map(|mut r| {
                        r.remove("detected_at");
                        r.remove("received_at");
                        r
                    })
                    .collect()
            };
            assert_eq!(strip(ra), strip(rb), "{} vs {}", x.display(), y.display());
        }
    }
}

#[test]
fn bad_config_stops_replay_with_the_key_named() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "[detector]\nthreshold = -1\n");
    let o = Replay::new(&cfg, std::path::Path::new("/dev/null")).run();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("detector.threshold"), "{err}");
}

/// Runs `pitchside replay` on `input` into `dir/out`; returns (exit code, stdout, stderr).
fn replay_lines(dir: &std::path::Path, input: &[u8]) -> (Option<i32>, String, String) {
    let o = replay_wearable(dir, "lines.jsonl", input);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn replay_where_every_line_is_rejected_exits_3_and_rejects_name_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = replay_lines(
        dir.path(),
        b"{\"device_id\":\"bad-\n\n[1,2]\n   \n{\"device_id\":\"w-1\",\"event_time\":0,\"player_id\":1}",
    );
    assert_eq!(code, Some(3), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("0 events accepted, 3 rejected"), "{stdout}");
    assert!(
        stderr.contains("no input line was accepted"),
        "the operator is told why: {stderr}"
    );
    let rejects = rows(&dir.path().join("out"), "rejects");
    let mut details: Vec<&str> = rejects.iter().map(|r| s(r, "detail")).collect();
    details.sort();
    assert_eq!(details.len(), 3, "{details:?}");
    assert!(details[0].starts_with("line 1: "), "{details:?}");
    assert!(details[1].starts_with("line 3: "), "{details:?}");
    assert!(details[2].starts_with("line 5: "), "{details:?}");
    assert!(rejects
        .iter()
        .all(|r| s(r, "source").ends_with("lines.jsonl")));
}

#[test]
fn replay_of_an_empty_file_exits_0_but_one_accepted_line_is_enough() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = replay_lines(dir.path(), b"\n  \n");
    assert_eq!(code, Some(0), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    let mut input = b"[1]\n".to_vec();
    input.extend_from_slice(event(1, 80.0).as_bytes());
    let (code, _, stderr) = replay_lines(dir.path(), &input);
    assert_eq!(code, Some(0), "{stderr}");
}

#[test]
fn too_large_lines_from_a_file_name_their_line_too() {
    let dir = tempfile::tempdir().unwrap();
    let input = format!("{}\n{}\n", event(1, 80.0), "x".repeat(5000));
    let (code, _, stderr) = replay_lines(dir.path(), input.as_bytes());
    assert_eq!(code, Some(0), "{stderr}");
    let rejects = rows(&dir.path().join("out"), "rejects");
    assert_eq!(rejects.len(), 1);
    assert_eq!(s(&rejects[0], "reason"), "too_large");
    assert!(
        s(&rejects[0], "detail").starts_with("line 2: 5000 bytes"),
        "{}",
        s(&rejects[0], "detail")
    );
}

#[test]
fn a_duplicate_with_another_value_is_counted_as_a_conflict_and_logged() {
    let dir = tempfile::tempdir().unwrap();
    let input = [
        event(1, 80.0),
        event(2, 81.0),
        event(1, 80.0), // an exact duplicate (a resend): not a conflict
        event(2, 95.5), // same key and time, another value: a conflict
    ]
    .join("\n");
    let (code, _, stderr) = replay_lines(dir.path(), input.as_bytes());
    assert_eq!(code, Some(0), "{stderr}");
    let progress = rows(&dir.path().join("out"), "progress");
    assert_eq!(i(&progress[0], "duplicate_rows"), 2);
    assert_eq!(i(&progress[0], "duplicate_conflicts"), 1);
    let warn: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("another value"))
        .collect();
    assert_eq!(warn.len(), 1, "{stderr}");
    for part in ["w-7", "heart_rate", "81", "95.5", "2026-11-29T19:30:02"] {
        assert!(warn[0].contains(part), "{part} missing in {}", warn[0]);
    }
    let raw = rows(&dir.path().join("out"), "raw");
    assert_eq!(raw.len(), 2, "the first value is kept (SPEC §2)");
    assert_eq!(f(&raw[1], "value"), 81.0);
}

#[test]
fn misspelled_metric_fields_are_counted_by_name_and_logged_once() {
    let dir = tempfile::tempdir().unwrap();
    let line = |sec: u32| {
        format!(
            r#"{{"device_id":"w-7","event_time":"{}","player_id":7,"heart_rate":80,"accel":1.5,"body_temp":36.6,"note":"hi","fw":{{"v":2}}}}"#,
            t(sec)
        )
    };
    let input = [line(1), line(2), line(3)].join("\n");
    let (code, stdout, stderr) = replay_lines(dir.path(), input.as_bytes());
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stdout.contains("unknown numeric field wearable.accel: 3 events"),
        "{stdout}"
    );
    assert!(
        stdout.contains("unknown numeric field wearable.body_temp: 3 events"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("note") && !stdout.contains("fw"),
        "{stdout}"
    );
    let warned = |name: &str| {
        stderr
            .lines()
            .filter(|l| {
                l.contains("not a wearable field") && l.contains(&format!("field=\"{name}\""))
            })
            .count()
    };
    assert_eq!(warned("accel"), 1, "{stderr}");
    assert_eq!(warned("body_temp"), 1, "{stderr}");
    assert_eq!(rows(&dir.path().join("out"), "raw").len(), 3);
}
