//! The journal end to end: written, replayed, rotated and removed, in this
//! format and the one before.

use super::*;
use crate::model::{FramingError, RawInput, SensorKind};
use crate::state::StateStats;
use crate::util::codec::Enc;
use std::fs::OpenOptions;
use std::sync::Arc;
use std::time::Duration;

fn input(i: u32) -> RawInput {
    RawInput {
        source: "serial:/dev/x".into(),
        sensor_hint: if i.is_multiple_of(2) {
            Some(SensorKind::Crowd)
        } else {
            None
        },
        payload: format!("line {i}").into_bytes(),
        received_at: i as i64,
        framing_error: (i == 3).then_some(FramingError::TooLarge { len: 9999 }),
        ack: None,
    }
}

fn collect(dir: &Path, from: u64) -> (Vec<String>, u64) {
    let mut v = Vec::new();
    let next = replay(dir, from, |r| {
        v.push(format!(
            "{}|{:?}|{}|{:?}|{}",
            r.source,
            r.sensor_hint,
            r.received_at,
            r.framing_error,
            String::from_utf8_lossy(&r.payload)
        ))
    })
    .unwrap();
    (v, next)
}

#[test]
fn inputs_come_back_in_order_across_generations() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::open(dir.path(), 0).unwrap();
    for i in 0..5 {
        j.append(&input(i)).unwrap();
    }
    assert_eq!(j.rotate().unwrap(), 1);
    for i in 5..8 {
        j.append(&input(i)).unwrap();
    }
    j.sync().unwrap();
    let (all, next) = collect(dir.path(), 0);
    assert_eq!(all.len(), 8);
    assert!(all[3].contains("TooLarge { len: 9999 }"));
    assert!(all[7].ends_with("line 7"));
    assert_eq!(next, 2);
    assert_eq!(collect(dir.path(), 1).0.len(), 3);
    remove_before(dir.path(), 1);
    assert_eq!(generations(dir.path()), vec![1]);
}

#[test]
fn a_torn_last_record_ends_replay_without_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::open(dir.path(), 0).unwrap();
    for i in 0..3 {
        j.append(&input(i)).unwrap();
    }
    j.sync().unwrap();
    let path = file_of(dir.path(), 0);
    let len = fs::metadata(&path).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 3)
        .unwrap();
    assert_eq!(collect(dir.path(), 0).0.len(), 2);
}

#[test]
fn a_damaged_record_ends_that_files_replay_and_later_files_still_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::open(dir.path(), 0).unwrap();
    for i in 0..3 {
        j.append(&input(i)).unwrap();
    }
    assert_eq!(j.rotate().unwrap(), 1);
    j.append(&input(3)).unwrap();
    j.sync().unwrap();
    let mut bytes = fs::read(file_of(dir.path(), 0)).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(file_of(dir.path(), 0), &bytes).unwrap();
    let (all, next) = collect(dir.path(), 0);
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all[2].contains("TooLarge"));
    assert_eq!(next, 2);
}

/// Generation `gen` of `dir` with inputs `range` in this build's format.
fn written(dir: &Path, gen: u64, range: std::ops::Range<u32>) -> Vec<u8> {
    let mut j = Journal::open(dir, gen).unwrap();
    for i in range {
        j.append(&input(i)).unwrap();
    }
    j.sync().unwrap();
    fs::read(file_of(dir, gen)).unwrap()
}

#[test]
fn a_damaged_header_ends_that_files_replay_like_a_torn_record() {
    let dir = tempfile::tempdir().unwrap();
    let cut = written(dir.path(), 0, 0..3);
    fs::write(file_of(dir.path(), 0), &cut[..7]).unwrap();
    let mut newer = written(dir.path(), 1, 0..3);
    newer[8] = 9;
    fs::write(file_of(dir.path(), 1), &newer).unwrap();
    let mut foreign = written(dir.path(), 2, 0..3);
    foreign[0] ^= 1;
    fs::write(file_of(dir.path(), 2), &foreign).unwrap();
    fs::write(file_of(dir.path(), 3), b"").unwrap();
    written(dir.path(), 4, 3..5);
    let (all, next) = collect(dir.path(), 0);
    assert_eq!(all.len(), 2, "only the intact file: {all:?}");
    assert!(all[0].contains("TooLarge"));
    assert_eq!(next, 5);
}

/// Records as builds before issue 11 wrote them: no header, each
/// `u32 length, u64 FNV-1a 64 of the body, body`.
fn old_format(range: std::ops::Range<u32>) -> Vec<u8> {
    let fnv = |b: &[u8]| {
        b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
            (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    let mut out = Vec::new();
    for i in range {
        let mut e = Enc::default();
        format::encode(&mut e, &input(i));
        out.extend_from_slice(&(e.0.len() as u32).to_le_bytes());
        out.extend_from_slice(&fnv(&e.0).to_le_bytes());
        out.extend_from_slice(&e.0);
    }
    out
}

#[test]
fn an_old_format_file_is_replayed_as_before_and_also_stops_at_damage() {
    let new = tempfile::tempdir().unwrap();
    written(new.path(), 0, 0..6);
    let old = tempfile::tempdir().unwrap();
    let mut bytes = old_format(0..6);
    fs::write(file_of(old.path(), 0), &bytes).unwrap();
    assert_eq!(collect(old.path(), 0), collect(new.path(), 0));
    assert_eq!(collect(old.path(), 0).0.len(), 6);
    let len = bytes.len();
    fs::write(file_of(old.path(), 0), &bytes[..len - 2]).unwrap();
    assert_eq!(collect(old.path(), 0).0.len(), 5);
    bytes[len - 1] ^= 1;
    fs::write(file_of(old.path(), 0), &bytes).unwrap();
    assert_eq!(collect(old.path(), 0).0.len(), 5);
}

#[test]
fn an_old_format_file_is_replayed_once_then_removed_after_the_next_checkpoint() {
    let spool = tempfile::tempdir().unwrap();
    let journal = dir(spool.path());
    fs::create_dir_all(&journal).unwrap();
    fs::write(file_of(&journal, 0), old_format(0..4)).unwrap();
    let stats = Arc::new(StateStats::default());
    let mut seen = Vec::new();
    let (mut r, replayed) = Recorder::start(
        spool.path(),
        0,
        Duration::from_millis(10),
        stats.clone(),
        |i| seen.push(i.received_at),
    );
    assert_eq!((replayed, seen), (4, vec![0, 1, 2, 3]));
    r.record(&mut input(4));
    r.commit(true);
    let new = fs::read(file_of(&journal, 1)).unwrap();
    assert_eq!(&new[..8], b"PSJRNL\0\0");
    assert_eq!(&new[8..12], &VERSION.to_le_bytes());
    // A checkpoint taken now replays from the generation rotate() returns;
    // once it is durable, everything before goes.
    let from = r.rotate();
    assert_eq!(from, 2);
    remove_before(&journal, from);
    assert_eq!(generations(&journal), vec![2]);
    assert_eq!(collect(&journal, from).0.len(), 0);
    assert_eq!(
        stats
            .journal_failures
            .load(std::sync::atomic::Ordering::Relaxed),
        0
    );
}
