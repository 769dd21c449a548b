//! Replays a generated file with every kind of bad line and reads every table
//! back with the `parquet` crate: schemas, row counts, a hand-computed window
//! and alert, one reject per reason.

mod common;

use common::*;
use parquet::basic::{Compression, LogicalType, TimeUnit};
use parquet::file::reader::{FileReader, SerializedFileReader};
use pitchside::tables::{ColType, TableId};
use std::collections::BTreeMap;
use std::io::Write;

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

fn replay(dir: &std::path::Path) -> std::path::PathBuf {
    let cfg = config(dir, "");
    let input_path = dir.join("input.jsonl");
    std::fs::File::create(&input_path)
        .unwrap()
        .write_all(&input())
        .unwrap();
    let out = dir.join("out");
    let o = bin()
        .args(["replay", "--config"])
        .arg(&cfg)
        .arg("--input")
        .arg(&input_path)
        .arg("--output")
        .arg(&out)
        .args(["--sensor", "wearable"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "replay failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
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
    let o = bin()
        .args(["replay", "--config"])
        .arg(&cfg)
        .args(["--input", "/dev/null"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("detector.threshold"), "{err}");
}
