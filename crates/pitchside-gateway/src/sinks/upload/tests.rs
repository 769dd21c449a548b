//! A model-based test of the spool's accounting: random sequences of
//! spooled files, uploads to a store that goes down and comes back,
//! ceiling enforcement and restarts, with the invariants checked after
//! every step against what is really on disk and in the store.
use super::*;
use crate::sinks::spool::Spool;
use crate::tables::TableId;
use proptest::prelude::*;
use std::path::Path;

#[derive(Debug, Clone)]
enum Op {
    Spool(usize, usize),
    Upload,
    StoreDown,
    StoreUp,
    Enforce,
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..TableId::ALL.len(), 1..120usize).prop_map(|(t, n)| Op::Spool(t, n)),
        4 => Just(Op::Upload),
        1 => Just(Op::StoreDown),
        1 => Just(Op::StoreUp),
        2 => Just(Op::Enforce),
        1 => Just(Op::Restart),
    ]
}

fn count_files(dir: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    rd.flatten()
        .map(|e| {
            let p = e.path();
            if p.is_dir() {
                count_files(&p)
            } else {
                1
            }
        })
        .sum()
}

struct Harness {
    root: std::path::PathBuf,
    store_dir: std::path::PathBuf,
    spool: Spool,
    queue: SharedQueue,
    uploader: Uploader,
    stats: Arc<UploadStats>,
    evicted_before: u64,
}

impl Harness {
    fn open(root: &Path, evicted_before: u64) -> Harness {
        let store_dir = root.join("store");
        let spool = Spool::open(&root.join("spool"), "v", "g").unwrap();
        let stats = Arc::new(UploadStats::default());
        let limits = SpoolLimits {
            max_bytes: 300,
            ..SpoolLimits::unbounded(root.join("spool"))
        };
        let queue = SpoolQueue::new(spool.pending().unwrap(), limits, stats.clone()).shared();
        let store = Store::local(store_dir.clone()).unwrap();
        let uploader = Uploader::with_queue(store, stats.clone(), queue.clone(), spool.numbering());
        Harness {
            root: root.to_path_buf(),
            store_dir,
            spool,
            queue,
            uploader,
            stats,
            evicted_before,
        }
    }

    fn evicted(&self) -> u64 {
        self.evicted_before + self.stats.spool_evictions.load(Ordering::Relaxed)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn counted_bytes_always_equal_the_files_waiting_and_nothing_is_lost_uncounted(
        ops in prop::collection::vec(op(), 1..80)
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("store")).unwrap();
        let mut h = Harness::open(dir.path(), 0);
        let mut spooled = 0u64;
        let mut down = false;
        for op in ops {
            match op {
                Op::Spool(t, n) => {
                    let f = h.spool.write(TableId::ALL[t], "2026-11-29", &vec![7u8; n]).unwrap();
                    lock(&h.queue).insert_all([f]);
                    spooled += 1;
                }
                Op::Upload => {
                    let _ = rt.block_on(h.uploader.upload_one());
                }
                // Each table's folder in the store replaced by a file: every put fails.
                Op::StoreDown if !down => {
                    std::fs::rename(&h.store_dir, h.root.join("store.away")).unwrap();
                    std::fs::create_dir(&h.store_dir).unwrap();
                    for t in TableId::ALL {
                        std::fs::write(h.store_dir.join(t.name()), b"not a folder").unwrap();
                    }
                    down = true;
                }
                Op::StoreUp if down => {
                    std::fs::remove_dir_all(&h.store_dir).unwrap();
                    std::fs::rename(h.root.join("store.away"), &h.store_dir).unwrap();
                    down = false;
                }
                Op::StoreDown | Op::StoreUp => {}
                Op::Enforce => {
                    let before: Vec<SpooledFile> = lock(&h.queue).files().cloned().collect();
                    lock(&h.queue).enforce_limits();
                    let after: Vec<SpooledFile> = lock(&h.queue).files().cloned().collect();
                    for gone in before.iter().filter(|f| !after.contains(f)) {
                        for kept in &after {
                            prop_assert!(kept.table <= gone.table,
                                "{} evicted while {} (lower priority) kept", gone.key, kept.key);
                        }
                    }
                }
                Op::Restart => {
                    let evicted = h.evicted();
                    drop(h);
                    h = Harness::open(dir.path(), evicted);
                }
            }
            let on_disk = h.spool.pending().unwrap();
            let q = lock(&h.queue);
            prop_assert_eq!(q.bytes(), on_disk.iter().map(|f| f.size).sum::<u64>());
            prop_assert_eq!(q.len(), on_disk.len());
            prop_assert_eq!(h.stats.spool_bytes.load(Ordering::Relaxed), q.bytes());
            prop_assert_eq!(h.stats.spool_files.load(Ordering::Relaxed), q.len() as u64);
            let in_store = if down {
                count_files(&h.root.join("store.away"))
            } else {
                count_files(&h.store_dir)
            };
            prop_assert_eq!(
                spooled,
                in_store as u64 + q.len() as u64 + h.evicted(),
                "every spooled file is in the store, waiting, or counted as evicted"
            );
        }
    }
}

/// An uploader over a fresh spool holding `tables` (one file each), with a
/// local store in which `blocked` tables' folders are files.
fn blocked_store(tables: &[TableId], blocked: &[TableId]) -> (tempfile::TempDir, Uploader) {
    let dir = tempfile::tempdir().unwrap();
    let mut spool = Spool::open(&dir.path().join("spool"), "v", "g").unwrap();
    for &t in tables {
        spool.write(t, "2026-11-29", b"x").unwrap();
    }
    let store_dir = dir.path().join("store");
    std::fs::create_dir_all(&store_dir).unwrap();
    for t in blocked {
        std::fs::write(store_dir.join(t.name()), b"not a folder").unwrap();
    }
    let stats = Arc::new(UploadStats::default());
    let limits = SpoolLimits::unbounded(dir.path().join("spool"));
    let store = Store::local(store_dir).unwrap();
    let up = Uploader::new(
        store,
        stats,
        spool.pending().unwrap(),
        limits,
        spool.numbering(),
    );
    (dir, up)
}

#[tokio::test]
async fn one_refused_file_is_set_aside_and_two_refused_files_are_an_outage() {
    let (_d, mut up) = blocked_store(&[TableId::Alerts, TableId::Raw], &[TableId::Alerts]);
    let a = up.upload_one().await.unwrap();
    assert!(matches!(a, Attempt::SetAside { failures: 1, .. }), "{a:?}");
    assert!(matches!(up.upload_one().await.unwrap(), Attempt::Done));
    assert!(!lock(&up.queue).store_failing());
    assert!(matches!(
        up.upload_one().await.unwrap(),
        Attempt::Waiting(_)
    ));

    let (_d, mut up) = blocked_store(
        &[TableId::Alerts, TableId::Raw],
        &[TableId::Alerts, TableId::Raw],
    );
    assert!(matches!(
        up.upload_one().await.unwrap(),
        Attempt::SetAside { .. }
    ));
    assert!(
        up.upload_one().await.is_err(),
        "a second file failing is an outage"
    );
    assert!(lock(&up.queue).store_failing());
}
