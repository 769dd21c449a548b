//! Row groups are bounded in bytes as well as rows: a table of wide rows
//! goes to the encoder at `ROW_GROUP_BYTES` (512 KiB) of buffered rows, well
//! before 8,192 rows, over more than ten times that much data, and every row
//! arrives.

use crate::common;

use common::*;
use parquet::file::reader::{FileReader, SerializedFileReader};
use pitchside::sinks::writer::{RAW_ROW_GROUP_ROWS, ROW_GROUP_BYTES, ROW_GROUP_ROWS};

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

/// Replays `input` with the config `cfg` into `dir`/out and returns the
/// rows of each row group of `table`, file by file.
fn row_groups(
    dir: &std::path::Path,
    cfg: &std::path::Path,
    input: &[u8],
    table: &str,
) -> Vec<usize> {
    let path = dir.join("input.jsonl");
    std::fs::write(&path, input).unwrap();
    let out = dir.join("out");
    let o = Replay::new(cfg, &path).output(&out).run();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut groups = Vec::new();
    for f in files(&out, table) {
        let r = SerializedFileReader::new(std::fs::File::open(&f).unwrap()).unwrap();
        groups.extend(
            r.metadata()
                .row_groups()
                .iter()
                .map(|rg| rg.num_rows() as usize),
        );
    }
    groups
}

#[test]
fn wide_rows_go_to_the_encoder_at_the_byte_limit_and_none_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "");
    let groups = row_groups(dir.path(), &cfg, &input(), "windows_generic");
    let rows: usize = groups.iter().sum();
    assert_eq!(rows, DEVICES * MINUTES, "one window a device and minute");
    // About 2,400 rows of ~220 bytes make 512 KiB (a minute's windows close
    // together, so a group passes the limit by up to `DEVICES` rows); rows
    // alone would make groups of 8,400 (21 minutes).
    let about = ROW_GROUP_BYTES / 220;
    let (last, full) = groups.split_last().unwrap();
    assert!(full.len() >= 10, "ten times the limit: {groups:?}");
    for &n in full {
        assert!((about / 2..about + 2 * DEVICES).contains(&n), "{groups:?}");
    }
    assert!(*last <= ROW_GROUP_ROWS, "{groups:?}");
}

/// The `raw` table has its own, larger bounds: 40,000 readings with ids as
/// a venue sends them make row groups of 16,384 rows (a few hundred more:
/// `replay` looks at its tables once a read of input), where the other
/// tables' 8,192 rows or 512 KiB would cut them at about 4,500.
#[test]
fn raw_row_groups_stay_whole_at_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = VenueConfig::new(dir.path())
        .set("output", "raw", true)
        .write();
    let mut lines = String::new();
    for k in 0..40_000usize {
        let t = BASE_MS + k as i64 * 10;
        lines += &format!(
            "{{\"sensor\":\"wearable\",\"device_id\":\"band-{:05}-{:04x}\",\"event_time\":{t},\"player_id\":{},\"heart_rate\":{}.25}}\n",
            k % 500,
            k % 500 * 7919 % 65536,
            k % 500,
            120 + k % 40
        );
    }
    let groups = row_groups(dir.path(), &cfg, lines.as_bytes(), "raw");
    assert_eq!(groups.iter().sum::<usize>(), 40_000, "{groups:?}");
    assert_eq!(groups.len(), 3, "{groups:?}");
    for &n in &groups[..2] {
        assert!(
            (RAW_ROW_GROUP_ROWS..RAW_ROW_GROUP_ROWS + 1000).contains(&n),
            "{groups:?}"
        );
    }
}
