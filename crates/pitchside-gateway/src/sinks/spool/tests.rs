//! The spool's own tests: keys, counters, locking, stale temp files.

use super::*;

/// A spool of gateway `gw-1` holding one small file of each of `tables`.
fn spool_holding(tables: &[TableId]) -> (tempfile::TempDir, Spool) {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Spool::open(dir.path(), "v", "gw-1").unwrap();
    for &t in tables {
        s.write(t, "2026-11-29", b"x").unwrap();
    }
    (dir, s)
}

#[test]
fn files_get_the_spec_key_and_sequence_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Spool::open(dir.path(), "v", "gw-1").unwrap();
    let a = s.write(TableId::Alerts, "2026-11-29", b"one").unwrap();
    let b = s.write(TableId::Alerts, "2026-11-30", b"two").unwrap();
    assert_eq!(
        a.key,
        "alerts/venue_id=v/date=2026-11-29/gw-1-000000000000.parquet"
    );
    assert_eq!(b.seq, 1);
    drop(s);
    let mut s = Spool::open(dir.path(), "v", "gw-1").unwrap();
    assert_eq!(s.pending().unwrap().len(), 2);
    let c = s.write(TableId::Alerts, "2026-11-30", b"three").unwrap();
    assert_eq!(c.seq, 2);
}

#[test]
fn sequence_is_recovered_from_files_when_the_counter_is_lost() {
    let (dir, s) = spool_holding(&[TableId::Raw, TableId::Raw]);
    drop(s);
    std::fs::remove_file(dir.path().join("state/seq/raw")).unwrap();
    let s = Spool::open(dir.path(), "v", "gw-1").unwrap();
    assert_eq!(s.next_seq(TableId::Raw), 2);
}

#[test]
fn pending_lists_alerts_before_raw_and_removal_cleans_folders() {
    let (dir, s) = spool_holding(&[TableId::Raw, TableId::Alerts]);
    let p = s.pending().unwrap();
    assert_eq!(p[0].table, TableId::Alerts);
    assert_eq!(p[1].table, TableId::Raw);
    for f in &p {
        remove_uploaded(f).unwrap();
    }
    assert!(s.pending().unwrap().is_empty());
    assert!(!dir.path().join("outgoing/raw/venue_id=v").exists());
}

#[test]
fn a_second_process_cannot_open_a_spool_in_use() {
    let dir = tempfile::tempdir().unwrap();
    let first = Spool::open(dir.path(), "v", "g").unwrap();
    let err = Spool::open(dir.path(), "v", "g").unwrap_err();
    assert!(
        err.to_string()
            .contains("in use by another pitchside process"),
        "{err}"
    );
    drop(first);
    Spool::open(dir.path(), "v", "g").unwrap();
}

#[test]
fn lost_counters_are_reported_so_the_store_can_be_asked() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Spool::open(dir.path(), "v", "g").unwrap();
    assert_eq!(s.unknown_seq_tables().len(), TableId::ALL.len());
    s.reserve_seq(TableId::Alerts, 7).unwrap();
    drop(s);
    let s = Spool::open(dir.path(), "v", "g").unwrap();
    assert!(!s.unknown_seq_tables().contains(&TableId::Alerts));
    assert_eq!(s.next_seq(TableId::Alerts), 7);
}

#[test]
fn stale_temp_files_are_removed_on_open() {
    let dir = tempfile::tempdir().unwrap();
    Spool::open(dir.path(), "v", "g").unwrap();
    std::fs::write(dir.path().join("tmp/alerts-0-1.tmp"), b"half").unwrap();
    Spool::open(dir.path(), "v", "g").unwrap();
    assert_eq!(
        std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
        0
    );
}

#[test]
fn a_damaged_counter_is_not_trusted_and_is_counted() {
    let (dir, s) = spool_holding(&[TableId::Raw]);
    drop(s);
    std::fs::write(dir.path().join("state/seq/raw"), b"\0\0\0\0").unwrap();
    let s = Spool::open(dir.path(), "v", "gw-1").unwrap();
    assert_eq!(s.unreadable_counters(), 1);
    assert!(s.unknown_seq_tables().contains(&TableId::Raw));
    assert_eq!(s.next_seq(TableId::Raw), 1, "the spooled file still counts");
}

#[test]
fn files_of_another_gateway_are_pending_but_do_not_move_our_counter() {
    let dir = tempfile::tempdir().unwrap();
    let mut old = Spool::open(dir.path(), "v", "gw-old").unwrap();
    for _ in 0..3 {
        old.write(TableId::Raw, "2026-11-29", b"x").unwrap();
    }
    drop(old);
    std::fs::remove_dir_all(dir.path().join("state/seq")).unwrap();
    let s = Spool::open(dir.path(), "v", "gw-new").unwrap();
    let p = s.pending().unwrap();
    assert_eq!(p.len(), 3);
    assert!(p.iter().all(|f| f.gateway() == "gw-old"));
    assert_eq!(s.next_seq(TableId::Raw), 0);
    assert_eq!(s.usage(), (3, 3), "counted in the spool's size");
}
