//! The queue's accounting and eviction rules, on a real spool folder.

use super::*;
use crate::sinks::spool::Spool;

/// A spool and its queue, with a ceiling of `max_bytes`.
struct Setup {
    _dir: tempfile::TempDir,
    spool: Spool,
    q: SpoolQueue,
    stats: Arc<UploadStats>,
}

impl Setup {
    fn new(max_bytes: u64) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let spool = Spool::open(dir.path(), "v", "g").unwrap();
        let stats = Arc::new(UploadStats::default());
        let limits = SpoolLimits {
            max_bytes,
            ..SpoolLimits::unbounded(dir.path().to_path_buf())
        };
        let q = SpoolQueue::new(Vec::new(), limits, stats.clone());
        Setup {
            _dir: dir,
            spool,
            q,
            stats,
        }
    }

    /// Spools a 40-byte file of each of `tables` and queues them as one flush.
    fn add(&mut self, tables: &[TableId]) -> Vec<SpooledFile> {
        let files: Vec<SpooledFile> = tables
            .iter()
            .map(|&t| self.spool.write(t, "2026-11-29", &[0; 40]).unwrap())
            .collect();
        self.q.insert_all(files.clone());
        files
    }

    fn evictions(&self) -> u64 {
        self.stats.spool_evictions.load(Ordering::Relaxed)
    }
}

#[test]
fn uploaded_files_lower_the_byte_count_so_a_healthy_spool_never_fills() {
    let mut t = Setup::new(100);
    for _ in 0..50 {
        t.add(&[TableId::Raw]);
        t.q.enforce_limits();
        let next = t.q.start_upload().unwrap();
        t.q.uploaded(&next);
    }
    assert_eq!(t.q.bytes(), 0);
    assert_eq!(t.stats.spool_bytes.load(Ordering::Relaxed), 0);
    assert_eq!(t.evictions(), 0);
}

#[test]
fn nothing_is_evicted_while_the_store_takes_files() {
    let mut t = Setup::new(10);
    t.add(&[TableId::Alerts]);
    assert_eq!(t.q.enforce_limits(), 0);
    assert_eq!(t.q.len(), 1);
    assert_eq!(t.evictions(), 0);
}

#[test]
fn while_uploads_fail_the_lowest_priority_goes_first_and_alerts_last() {
    let mut t = Setup::new(100);
    let f = t.add(&[TableId::Alerts, TableId::Raw, TableId::Raw]);
    let _ = t.q.start_upload();
    t.q.upload_failed();
    assert_eq!(t.q.enforce_limits(), 1);
    let left: Vec<_> = t.q.files().cloned().collect();
    assert_eq!(
        left,
        [f[0].clone(), f[2].clone()],
        "the oldest raw file goes first"
    );
}

#[test]
fn the_file_in_flight_is_never_evicted() {
    let mut t = Setup::new(0);
    let a = t.add(&[TableId::Alerts]).remove(0);
    t.q.upload_failed();
    let f = t.q.start_upload().unwrap();
    assert_eq!(t.q.enforce_limits(), 0);
    assert_eq!(f, a);
    assert!(a.path.exists());
}

#[test]
fn making_room_deletes_only_tables_of_lower_priority() {
    let mut t = Setup::new(u64::MAX);
    let f = t.add(&[TableId::Alerts, TableId::WindowsWearable, TableId::Raw]);
    // No disk is this large: every lower-priority file goes, and no more.
    assert!(!t.q.make_room(TableId::WindowsWearable, u64::MAX / 2));
    let left: Vec<_> = t.q.files().cloned().collect();
    assert_eq!(left, f[..2]);
    assert!(!f[2].path.exists());
}

#[test]
fn a_file_set_aside_is_passed_over_until_due_and_nothing_is_evicted_for_it() {
    let mut t = Setup::new(50);
    let f = t.add(&[TableId::Alerts, TableId::Raw, TableId::Raw]);
    let first = t.q.start_upload().unwrap();
    assert_eq!(first, f[0]);
    let (failures, delay) = t.q.set_aside(&first);
    assert_eq!((failures, delay), (1, MIN_BACKOFF));
    assert_eq!(t.stats.stuck_files.load(Ordering::Relaxed), 1);
    assert_eq!(t.q.enforce_limits(), 0, "the store is not failing");
    let next = t.q.start_upload().unwrap();
    assert_eq!(next, f[1], "the next file goes while alerts wait");
    t.q.uploaded(&next);
    assert_eq!(t.q.aside_failures(&f[0]), 1);
    t.q.retry_all();
    assert_eq!(t.q.start_upload().unwrap(), f[0], "in order again");
    assert_eq!(t.stats.stuck_files.load(Ordering::Relaxed), 0);
}
