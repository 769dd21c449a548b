//! The golden replay: a fixed input of 100,000 simulated events with bad,
//! duplicate and late lines mixed in, replayed, and every table compared with
//! digests kept here. Windows, player load and fatigue tables must be byte-identical;
//! the others row-identical, leaving out the wall-clock columns
//! (`received_at`, `detected_at`) and the progress table (rates per second of
//! the machine that ran it).
//!
//! The digests were taken before the source tree was regrouped (issue 11) and
//! guard every later refactor: a change to them is a change in behaviour and
//! needs a reason in its commit. To see new digests, run this test and read
//! the failure message.

use crate::common;

use common::*;
use parquet::file::reader::{FileReader, SerializedFileReader};
use std::collections::BTreeMap;
use std::path::Path;

/// Tables compared byte for byte.
const BYTE_TABLES: [&str; 6] = [
    "windows_wearable",
    "load_player_1m",
    "windows_pitch",
    "windows_crowd",
    "windows_generic",
    "fatigue_alerts",
];
/// Tables compared row by row (without wall-clock columns).
const ROW_TABLES: [&str; 4] = ["alerts", "late", "rejects", "raw"];
/// Columns that say when the gateway did something, not what.
const WALL_CLOCK: [&str; 2] = ["received_at", "detected_at"];

/// The input digest, then one digest per table.
const EXPECTED: &[(&str, &str)] = &[
    (
        "input",
        "0e2f70f6196cce57535f33f6a6df6e8f7beb3b7aac2f404262e2c5e53ca5d8ae",
    ),
    (
        "windows_wearable",
        "768418085b6dfc2699cbc435ad69331488b0691e24b3b15ac7c70abeeedbcb2a",
    ),
    (
        "load_player_1m",
        "889872cd385ac12ef471dcbdcae1247fa5e4bc027d35a1afecb13d22d2d83340",
    ),
    (
        "windows_pitch",
        "0cbeddc7bbe10dc5265347248cbb83b2fddd0ceec42e448c6371550de8a92f24",
    ),
    (
        "windows_crowd",
        "2bc747a85556a7417349181b99761bc60668d5a4ad857207afe9fb7d828a1a95",
    ),
    (
        "windows_generic",
        "1f24bac5b00ca286b3358a70256abf87978ca97d480af9de66d8a851dd105eb0",
    ),
    (
        "fatigue_alerts",
        "4e2abe7ac15e86586b117398ef30c68904d46b0cca1a575b3e0d35f6bb9ed88b",
    ),
    (
        "alerts",
        "b6b5c09be173010451cc9862b8e39fddfd991ecd8f371504918fffb573a56437",
    ),
    (
        "late",
        "fe72d69164f6c89609c46fb5ec84e3bd2f5c117aa4c762503aa84bcd9523ed0d",
    ),
    (
        "rejects",
        "5e74bf87ab8b45effce26cdf70c544d91f0318c28dc2b8158c44217deb195e38",
    ),
    (
        "raw",
        "f43155f54389896ba622b7cde6ed082aaebb67d901ac198e5e5091712010906f",
    ),
];

fn sha256(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Bad lines, one per reject reason the decoder can give a whole line.
const BAD: [&str; 8] = [
    r#"{"device_id":"band-01","event_time":"#,
    "[1,2,3]",
    r#"{"sensor":"wearable","event_time":"2026-11-29T19:30:00Z","heart_rate":1}"#,
    r#"{"sensor":"wearable","device_id":"band-02","event_time":"2026-11-29T19:30:00Z","match_id":1,"player_id":2,"heart_rate":"72"}"#,
    r#"{"sensor":"wearable","device_id":"band-02","event_time":"2026-11-29T19:30:00Z","match_id":1,"player_id":2,"heart_rate":1e999}"#,
    r#"{"sensor":"weather","device_id":"w-1","event_time":"2026-11-29T19:30:00Z","celsius":4}"#,
    r#"{"sensor":"wearable","device_id":"band-02","event_time":"last week","match_id":1,"player_id":2,"heart_rate":70}"#,
    "",
];

/// The simulator's 100,000 events with, every 397th line, a bad line; every
/// 1,009th, a repeat of the line 40 before (a duplicate); every 2,003rd, a
/// repeat of the line 30,000 before (late once its window has closed).
fn input(dir: &Path) -> Vec<u8> {
    let sim = dir.join("sim.jsonl");
    let o = bin()
        .args([
            "simulate", "--seed", "42", "--count", "100000", "--rate", "400",
        ])
        .args(["--start", "2026-11-29T19:30:00Z", "--output"])
        .arg(&sim)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&sim).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(text.len() + (1 << 16));
    for (n, line) in lines.iter().enumerate() {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
        if n % 397 == 396 {
            out.extend_from_slice(BAD[(n / 397) % BAD.len()].as_bytes());
            out.push(b'\n');
        }
        if n % 1009 == 1008 {
            out.extend_from_slice(lines[n - 40].as_bytes());
            out.push(b'\n');
        }
        if n % 2003 == 2002 && n >= 30_000 {
            out.extend_from_slice(lines[n - 30_000].as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// One table's digest: its files' bytes, or its rows without wall-clock
/// columns (and with the temporary folder, which `rejects.source` names, cut out).
fn table_digest(out: &Path, table: &str, bytes: bool) -> String {
    let tmp = out.parent().unwrap().display().to_string();
    let mut all = Vec::new();
    for f in files(out, table) {
        if bytes {
            all.extend(std::fs::read(&f).unwrap());
            continue;
        }
        let reader = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        for row in reader.get_row_iter(None).unwrap() {
            for (k, v) in row.unwrap().get_column_iter() {
                if !WALL_CLOCK.contains(&k.as_str()) {
                    all.extend(format!("{k}={v:?};").replace(&tmp, "").into_bytes());
                }
            }
            all.push(b'\n');
        }
    }
    sha256(&all)
}

#[test]
fn replay_of_the_golden_input_matches_the_kept_digests() {
    let dir = tempfile::tempdir().unwrap();
    let input = input(dir.path());
    let input_path = dir.path().join("golden.jsonl");
    std::fs::write(&input_path, &input).unwrap();
    let out = dir.path().join("out");
    Replay::new(&config(dir.path(), ""), &input_path)
        .output(&out)
        .succeed();

    let mut got = BTreeMap::new();
    got.insert("input", sha256(&input));
    for t in BYTE_TABLES {
        got.insert(t, table_digest(&out, t, true));
    }
    for t in ROW_TABLES {
        assert!(
            !files(&out, t).is_empty(),
            "{t} is empty: the input lost its point"
        );
        got.insert(t, table_digest(&out, t, false));
    }
    let want: BTreeMap<&str, String> = EXPECTED.iter().map(|(k, v)| (*k, v.to_string())).collect();
    let listing: String = got
        .iter()
        .map(|(k, v)| format!("    (\"{k}\", \"{v}\"),\n"))
        .collect();
    assert_eq!(
        got["input"], want["input"],
        "the golden input changed (the simulator's output?); digests now:\n{listing}"
    );
    assert_eq!(got, want, "replay output changed; digests now:\n{listing}");
}
