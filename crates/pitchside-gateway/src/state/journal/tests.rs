//! The journal end to end: written, replayed, rotated and removed; torn and
//! damaged files. (The format before, headerless files, is tested in
//! `tests/journal.rs`, with files made the old way.)

use super::*;
use crate::model::{FramingError, RawInput, SensorKind};

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
        mapping: None,
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
    let bytes = written(dir.path(), 0, 0..3);
    fs::write(file_of(dir.path(), 0), &bytes[..bytes.len() - 3]).unwrap();
    assert_eq!(collect(dir.path(), 0).0.len(), 2);
}

#[test]
fn a_damaged_record_ends_that_files_replay_and_later_files_still_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = written(dir.path(), 0, 0..3);
    written(dir.path(), 1, 3..4);
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    fs::write(file_of(dir.path(), 0), &bytes).unwrap();
    let (all, next) = collect(dir.path(), 0);
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all[2].contains("TooLarge"));
    assert_eq!(next, 2);
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

#[test]
fn the_mapping_of_an_input_comes_back_and_version_1_files_still_replay() {
    use crate::util::codec::Enc;
    let dir = tempfile::tempdir().unwrap();
    let mut mapped = input(0);
    mapped.mapping = Some("slm-north".into());
    let mut j = Journal::open(dir.path(), 1).unwrap();
    j.append(&mapped).unwrap();
    j.append(&input(1)).unwrap();
    j.sync().unwrap();
    // Generation 0 as a build before device formats wrote it: version 1,
    // records without the mapping.
    let mut old = Vec::new();
    crate::state::frame::put_header(&mut old, format::MAGIC, 1);
    for i in 2..4 {
        let mut e = Enc(Vec::new());
        let r = input(i);
        e.str(&r.source);
        e.u8(255);
        e.i64(r.received_at);
        e.u8(0);
        e.bytes(&r.payload);
        crate::state::frame::CURRENT.put(&mut old, &e.0);
    }
    fs::write(file_of(dir.path(), 0), &old).unwrap();
    let mut got = Vec::new();
    replay(dir.path(), 0, |r| {
        got.push((String::from_utf8_lossy(&r.payload).into_owned(), r.mapping))
    })
    .unwrap();
    let want: Vec<(String, Option<crate::model::SourceName>)> = vec![
        ("line 2".into(), None),
        ("line 3".into(), None),
        ("line 0".into(), Some("slm-north".into())),
        ("line 1".into(), None),
    ];
    assert_eq!(got, want);
}

/// A recorder on `spool` (replaying nothing) bounded at `max` bytes, with
/// no wait before it tries to reopen the journal.
fn recorder(spool: &Path, max: u64) -> (Recorder, std::sync::Arc<crate::state::StateStats>) {
    let stats = std::sync::Arc::new(crate::state::StateStats::default());
    let sync = std::time::Duration::ZERO;
    let (r, _) = Recorder::start(spool, 0, (sync, max), stats.clone(), |_| {});
    (r, stats)
}

fn unjournaled(stats: &crate::state::StateStats) -> u64 {
    stats
        .unjournaled_inputs
        .load(std::sync::atomic::Ordering::Relaxed)
}

#[test]
fn without_checkpoints_the_journal_stops_at_its_bound_and_returns_once_one_removes_generations() {
    let spool = tempfile::tempdir().unwrap();
    let (mut r, stats) = recorder(spool.path(), 4096);
    for i in 0..400 {
        r.record(&mut input(i));
        if i % 50 == 49 {
            // A flush whose checkpoint fails: nothing is removed.
            r.rotate();
        }
    }
    r.commit(true);
    let on_disk = size(r.dir());
    assert!((4096..4096 + 64).contains(&on_disk), "{on_disk} bytes");
    let lost = unjournaled(&stats);
    assert!(lost > 200, "{lost} inputs not journaled");
    assert_eq!(
        stats
            .journal_failures
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    // A checkpoint at last: its generation on is all that is kept, and the
    // journal comes back at the next attempt.
    let gen = r.rotate();
    remove_before(r.dir(), gen);
    r.retry_at = std::time::Instant::now();
    r.record(&mut input(1));
    r.commit(true);
    r.record(&mut input(2));
    assert_eq!(
        unjournaled(&stats),
        lost + 1,
        "journaled again after the retry"
    );
}

#[test]
fn a_journal_already_over_its_bound_at_start_up_is_replayed_and_left_off() {
    let spool = tempfile::tempdir().unwrap();
    written(&dir(spool.path()), 0, 0..200);
    let stats = std::sync::Arc::new(crate::state::StateStats::default());
    let sync = std::time::Duration::ZERO;
    let (mut r, n) = Recorder::start(spool.path(), 0, (sync, 1024), stats.clone(), |_| {});
    assert_eq!(n, 200, "everything on disk is replayed");
    r.record(&mut input(1));
    assert_eq!(unjournaled(&stats), 1);
    assert_eq!(generations(r.dir()), vec![0], "no new generation");
}

#[test]
fn records_across_read_chunks_come_back_whole_and_a_huge_length_is_damage() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::open(dir.path(), 0).unwrap();
    // 3 MiB of records of 3001 bytes: many straddle a 1 MiB chunk boundary.
    for i in 0..1000u32 {
        let mut r = input(i);
        r.payload = vec![b'a' + (i % 26) as u8; 3001];
        j.append(&r).unwrap();
    }
    j.sync().unwrap();
    let (all, _) = collect(dir.path(), 0);
    assert_eq!(all.len(), 1000);
    for (i, r) in all.iter().enumerate() {
        let last = b'a' + (i % 26) as u8;
        assert!(
            r.len() > 3001 && r.as_bytes()[r.len() - 1] == last,
            "record {i}"
        );
    }
    // A record claiming 5 MiB ends the replay of its file there.
    let mut bytes = fs::read(file_of(dir.path(), 0)).unwrap();
    bytes.extend_from_slice(&(5u64 << 20).to_le_bytes());
    bytes.extend_from_slice(&[0; 4]);
    bytes.resize(bytes.len() + (6 << 20), 0);
    fs::write(file_of(dir.path(), 0), bytes).unwrap();
    assert_eq!(collect(dir.path(), 0).0.len(), 1000);
}
