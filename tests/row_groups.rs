//! Row groups are bounded in bytes as well as rows: a table of wide rows
//! goes to the encoder at 1 MiB of buffered rows, well before 8,192 rows,
//! over more than ten times that much data, and every row arrives.

mod common;

use common::*;
use parquet::file::reader::{FileReader, SerializedFileReader};
use pitchside::sinks::writer::ROW_GROUP_ROWS;

const BASE_MS: i64 = 1_795_980_600_000; // 2026-11-29T19:30:00Z
const DEVICES: usize = 400;
const MINUTES: usize = 150;

/// One reading a minute from each of `DEVICES` generic sensors whose ids
/// and metric names are 64 bytes long (the most §1 allows), so that a
/// windows row takes about 220 bytes.
fn input() -> Vec<u8> {
    let mut out = String::new();
    for m in 0..MINUTES {
        for d in 0..DEVICES {
            let t = BASE_MS + (m * 60_000 + d * 10) as i64;
            let id = format!("{d:0>64}");
            let metric = format!("{:t>64}", d % 3);
            out += &format!(
                "{{\"sensor\":\"generic\",\"device_id\":\"{id}\",\"event_time\":{t},\"metric\":\"{metric}\",\"value\":{}.5}}\n",
                20 + d % 7
            );
        }
    }
    out.into_bytes()
}

#[test]
fn wide_rows_go_to_the_encoder_at_the_byte_limit_and_none_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "");
    let path = dir.path().join("wide.jsonl");
    std::fs::write(&path, input()).unwrap();
    let out = dir.path().join("out");
    let o = Replay::new(&cfg, &path).output(&out).run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let mut groups = Vec::new();
    for f in files(&out, "windows_generic") {
        let r = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        for rg in r.metadata().row_groups() {
            groups.push(rg.num_rows() as usize);
        }
    }
    let rows: usize = groups.iter().sum();
    assert_eq!(rows, DEVICES * MINUTES, "one window a device and minute");
    // About 4,800 rows of ~220 bytes make 1 MiB (a minute's windows close
    // together, so a group passes the limit by up to `DEVICES` rows); rows
    // alone would make groups of 8,400 (21 minutes).
    let (last, full) = groups.split_last().unwrap();
    assert!(full.len() >= 10, "ten times the limit: {groups:?}");
    for &n in full {
        assert!((2_000..6_000).contains(&n), "{groups:?}");
    }
    assert!(*last <= ROW_GROUP_ROWS, "{groups:?}");
}
