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
        "e1eed9b38edb9a80c4de5c41c4c7c29b17176419b9cd05ced29e1f18d12e7647",
    ),
    (
        "windows_wearable",
        "a81ec1ba55a45fac789152740f23ff2d709489eb458ad6007ea7d47481131abe",
    ),
    (
        "load_player_1m",
        "f1d9e23a7673ceaa83fc74cb8c8362bd4d9998a294d909beb8fe50bcab61461a",
    ),
    (
        "windows_pitch",
        "ec098594d4ce5d4e829ccca590260f557d0babe5bd2e7bc578249670c279e329",
    ),
    (
        "windows_crowd",
        "71462bb3b64c68d88f12850ecedc7ab4705b3d8f8b24cce1cd6c9531ef7d20a8",
    ),
    (
        "windows_generic",
        "187f56797979bd9b32fc664dfbcde2761f6a824ae9a261a89e93d26707d25e45",
    ),
    (
        "fatigue_alerts",
        "b7d082701d171bc1cd3c086e4e7f1f379e39d3c709427ef930cdd6a5d1bd8db5",
    ),
    (
        "alerts",
        "d705b296412e8223db29cb0706b784c1e21ea2c04a151c75ad9ebbc59235d4fa",
    ),
    (
        "late",
        "3a1700ae8a4d8b01e5df532706eccafccb41f984fa9b0d1603ff79203b210445",
    ),
    (
        "rejects",
        "5e74bf87ab8b45effce26cdf70c544d91f0318c28dc2b8158c44217deb195e38",
    ),
    (
        "raw",
        "6ebd5afd6d6749e1ae01cd8bcdc7c28059e5912f5220cb943e685139d24d13de",
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
