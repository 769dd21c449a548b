//! Restarts: the gateway resumes from its checkpoint, sets a damaged one
//! aside, and a `kill -9` leaves nothing half-written and no sequence gaps.

mod common;

use common::services::{fast_config, free_port, wait_until, Gateway};
use common::*;
use std::path::Path;
use std::time::Duration;

fn checkpoint_file(dir: &Path) -> std::path::PathBuf {
    dir.join("spool").join("state").join("checkpoint.bin")
}

const SIM: &str = "[sources.simulator]\nrate = 400\nanomaly_rate = 0.01\n";

#[test]
fn restart_resumes_baselines_from_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = fast_config(dir.path(), port, SIM);
    let gw = Gateway::start(&cfg, port, &[]);
    assert!(wait_until(Duration::from_secs(20), || checkpoint_file(
        dir.path()
    )
    .exists()));
    gw.wait_metric("pitchside_state_keys", 50.0, Duration::from_secs(20));
    gw.stop();

    let gw = Gateway::start(&cfg, port, &[]);
    gw.log
        .wait_for("Resumed from checkpoint", 1, Duration::from_secs(20));
    let line = gw
        .log
        .all()
        .into_iter()
        .find(|l| l.contains("Resumed from checkpoint"))
        .unwrap();
    assert!(
        line.contains("keys=") && !line.contains("keys=0 "),
        "{line}"
    );
    gw.stop();
}

#[test]
fn a_damaged_checkpoint_is_set_aside_and_the_gateway_starts_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = fast_config(dir.path(), port, SIM);
    std::fs::create_dir_all(dir.path().join("spool/state")).unwrap();
    std::fs::write(
        checkpoint_file(dir.path()),
        b"PSCKPT\0\0garbage that is not a checkpoint",
    )
    .unwrap();
    let gw = Gateway::start(&cfg, port, &[]);
    gw.log
        .wait_for("Checkpoint not used", 1, Duration::from_secs(20));
    gw.wait_metric(
        "pitchside_checkpoint_failures_total",
        1.0,
        Duration::from_secs(20),
    );
    gw.wait_metric("pitchside_input_rows_total", 100.0, Duration::from_secs(20));
    gw.stop();
    let aside = std::fs::read_dir(dir.path().join("spool/state"))
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .contains("checkpoint.bin.bad-")
        })
        .count();
    assert_eq!(aside, 1, "the damaged file is kept for inspection");
}

#[test]
fn kill_9_leaves_complete_files_and_no_sequence_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = fast_config(dir.path(), port, SIM);
    for round in 0..4 {
        let gw = Gateway::start(&cfg, port, &[]);
        gw.wait_metric(
            "pitchside_uploaded_files_total",
            2.0,
            Duration::from_secs(30),
        );
        // Land somewhere in the middle of flushes, uploads and checkpoints.
        std::thread::sleep(Duration::from_millis(137 * (round + 1)));
        gw.kill9();
    }
    let gw = Gateway::start(&cfg, port, &[]);
    gw.wait_metric(
        "pitchside_uploaded_files_total",
        2.0,
        Duration::from_secs(30),
    );
    gw.stop();
    assert_eq!(
        std::fs::read_dir(dir.path().join("spool/tmp"))
            .unwrap()
            .count(),
        0
    );
    let store = dir.path().join("store");
    let mut keys = Vec::new();
    for t in pitchside::tables::TableId::ALL {
        // Every file in the store is complete (readable to its footer).
        let _ = rows(&store, t.name());
        for f in files(&store, t.name()) {
            keys.push(
                f.strip_prefix(&store)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    assert_contiguous_seqs(keys.iter().map(String::as_str));
    // A crash between finishing a flush's files and writing its checkpoint
    // replays those inputs again: the same alert may be written twice, but
    // then identically (the lakehouse MERGEs on alert_id).
    let mut by_id: std::collections::BTreeMap<String, Row> = std::collections::BTreeMap::new();
    for mut r in rows(&store, "alerts") {
        r.remove("detected_at");
        let id = s(&r, "alert_id").to_string();
        if let Some(prev) = by_id.get(&id) {
            assert_eq!(prev, &r, "alert {id} written twice with different values");
        }
        by_id.insert(id, r);
    }
}

#[test]
fn checkpoint_write_failures_are_counted_while_they_happen() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = fast_config(dir.path(), port, SIM);
    let gw = Gateway::start(&cfg, port, &[]);
    assert!(wait_until(Duration::from_secs(20), || checkpoint_file(
        dir.path()
    )
    .exists()));
    assert_eq!(gw.metric("pitchside_checkpoint_failures_total"), 0.0);
    // The checkpoint file becomes a folder that is not empty: every later
    // checkpoint fails at its rename (permission bits would not stop root,
    // which the tests may run as), while table files are still written.
    let cp = checkpoint_file(dir.path());
    std::fs::remove_file(&cp).unwrap();
    std::fs::create_dir_all(cp.join("in-the-way")).unwrap();
    gw.log.wait_for(
        "Checkpoint could not be written",
        3,
        Duration::from_secs(20),
    );
    gw.wait_metric(
        "pitchside_checkpoint_failures_total",
        3.0,
        Duration::from_secs(20),
    );
    // Once the way is clear, checkpoints are written again.
    std::fs::remove_dir_all(&cp).unwrap();
    assert!(wait_until(Duration::from_secs(20), || cp.is_file()));
    gw.stop();
}
