//! Restarts: the gateway resumes from its checkpoint, sets a damaged one
//! aside, and a `kill -9` leaves nothing half-written and no sequence gaps.

use crate::common;

use common::services::{fast_config, free_port, wait_until, Gateway};
use common::*;
use std::path::Path;
use std::time::Duration;

fn checkpoint_file(dir: &Path) -> std::path::PathBuf {
    dir.join("spool").join("state").join("checkpoint.bin")
}

const SIM: &str = "[sources.simulator]\nrate = 400\nanomaly_rate = 0.01\n";

/// A gateway fed by the simulator; its config and metrics port for restarts.
fn simulator_gateway(dir: &Path) -> (Gateway, std::path::PathBuf, u16) {
    let port = free_port();
    let cfg = fast_config(dir, port, SIM);
    (Gateway::start(&cfg, port, &[]), cfg, port)
}

fn wait_for_checkpoint(dir: &Path) {
    assert!(
        wait_until(Duration::from_secs(20), || checkpoint_file(dir).exists()),
        "no checkpoint written"
    );
}

/// Waits for the gateway to say it resumed, with detector keys restored.
fn assert_resumed_with_baselines(gw: &Gateway) {
    let line = gw
        .log
        .wait_line("Resumed from checkpoint", Duration::from_secs(20));
    assert!(
        line.contains("keys=") && !line.contains("keys=0 "),
        "{line}"
    );
}

#[test]
fn restart_resumes_baselines_from_the_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, cfg, port) = simulator_gateway(dir.path());
    wait_for_checkpoint(dir.path());
    gw.wait_metric("pitchside_state_keys", 50.0, Duration::from_secs(20));
    gw.stop();

    let gw = Gateway::start(&cfg, port, &[]);
    assert_resumed_with_baselines(&gw);
    gw.stop();
}

#[test]
fn a_damaged_checkpoint_is_set_aside_and_the_gateway_starts_fresh() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("spool/state")).unwrap();
    std::fs::write(
        checkpoint_file(dir.path()),
        b"PSCKPT\0\0garbage that is not a checkpoint",
    )
    .unwrap();
    let (gw, _, _) = simulator_gateway(dir.path());
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

/// A checkpoint as builds before issue 11 sealed it: version 1, body
/// length `u64`, FNV-1a 64 of the body `u64`, body.
fn seal_v1(body: &[u8]) -> Vec<u8> {
    let fnv = body.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let mut out = b"PSCKPT\0\0".to_vec();
    out.extend_from_slice(&1u32.to_le_bytes());
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(&fnv.to_le_bytes());
    out.extend_from_slice(body);
    out
}

#[test]
fn a_version_1_checkpoint_opens_and_damage_in_it_is_refused() {
    use pitchside::state::checkpoint::{open, path, read, seal, write};
    let old = seal_v1(b"baselines");
    assert_eq!(open(&old).unwrap(), b"baselines");
    let mut flipped = old.clone();
    flipped[20] ^= 1;
    assert!(open(&flipped).unwrap_err().contains("checksum"));
    assert!(open(&old[..old.len() - 1])
        .unwrap_err()
        .contains("truncated"));

    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &old).unwrap();
    let body = read(dir.path()).unwrap().unwrap();
    assert_eq!(body, b"baselines");
    write(dir.path(), &seal(&body)).unwrap();
    let new = std::fs::read(path(dir.path())).unwrap();
    assert_eq!(&new[8..12], &2u32.to_le_bytes(), "version 2");
    assert_eq!(new.len(), 24 + body.len());
    assert_eq!(open(&new).unwrap(), b"baselines");
}

#[test]
fn a_version_1_checkpoint_is_resumed_after_an_upgrade_and_the_next_is_version_2() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, cfg, port) = simulator_gateway(dir.path());
    gw.wait_metric("pitchside_state_keys", 50.0, Duration::from_secs(20));
    gw.stop();
    let sealed = std::fs::read(checkpoint_file(dir.path())).unwrap();
    let body = pitchside::state::checkpoint::open(&sealed).unwrap();
    std::fs::write(checkpoint_file(dir.path()), seal_v1(body)).unwrap();

    let gw = Gateway::start(&cfg, port, &[]);
    assert_resumed_with_baselines(&gw);
    let version = || {
        std::fs::read(checkpoint_file(dir.path()))
            .ok()
            .and_then(|b| b.get(8..12).map(|v| v.to_vec()))
    };
    assert!(
        wait_until(Duration::from_secs(20), || version()
            == Some(2u32.to_le_bytes().to_vec())),
        "{:?}",
        version()
    );
    let log = gw.stop();
    assert!(!log.contains("Checkpoint not used"), "{log}");
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
    let (gw, _, _) = simulator_gateway(dir.path());
    wait_for_checkpoint(dir.path());
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

// The pipeline's own snapshot, without a gateway around it.

fn pipeline(max_keys: u32) -> pitchside::pipeline::Pipeline {
    let text = VenueConfig::new(Path::new("/tmp"))
        .set_str("venue", "id", "v")
        .set_str("venue", "gateway_id", "g")
        .set_str("output", "store", "file:///tmp/x")
        .set_str("output", "spool_dir", "/tmp/y")
        .set("detector", "max_keys", max_keys)
        .set_str("windows", "watermark_delay", "5s")
        .text();
    let c = pitchside::config::parse(&text, "test")
        .unwrap()
        .validate()
        .unwrap();
    pitchside::pipeline::Pipeline::new(&c, false)
}

fn feed(
    p: &mut pitchside::pipeline::Pipeline,
    lines: &[String],
) -> (Vec<pitchside::pipeline::LiveAlert>, String) {
    for l in lines {
        p.process_bytes("test", None, l.as_bytes(), 0, 0);
    }
    (
        p.drain_alerts(),
        format!("{:?}", p.take_tables(pitchside::tables::RowGroupLimit::ANY)),
    )
}

#[test]
fn a_restored_pipeline_continues_exactly_like_the_original() {
    let sim_cfg = pitchside::config::SimulatorSection {
        anomaly_rate: 0.01,
        fatigue_rate: 0.3,
        ..Default::default()
    };
    let mut sim = pitchside::sources::simulator::Simulator::new(&sim_cfg, 1_795_980_600_000_000);
    let lines: Vec<String> = (0..40_000).map(|_| sim.next_line().0).collect();
    for max_keys in [10_000, 50] {
        let mut a = pipeline(max_keys);
        feed(&mut a, &lines[..20_000]);
        let sealed = pitchside::state::checkpoint::seal(&a.snapshot(7));
        let mut b = pipeline(max_keys);
        assert_eq!(
            b.restore(pitchside::state::checkpoint::open(&sealed).unwrap())
                .unwrap(),
            7
        );
        let (alerts_a, tables_a) = feed(&mut a, &lines[20_000..]);
        let (alerts_b, tables_b) = feed(&mut b, &lines[20_000..]);
        assert!(!alerts_a.is_empty());
        assert!(alerts_a
            .iter()
            .any(|x| matches!(x, pitchside::pipeline::LiveAlert::Fatigue(_))));
        assert_eq!(alerts_a.len(), alerts_b.len(), "max_keys {max_keys}");
        if let Some(i) = (0..alerts_a.len()).find(|&i| alerts_a[i] != alerts_b[i]) {
            panic!(
                "max_keys {max_keys}: alert {i} differs:\n{:?}\n{:?}",
                alerts_a[i], alerts_b[i]
            );
        }
        assert!(tables_a == tables_b, "max_keys {max_keys}: tables differ");
        assert_eq!(a.detector().keys(), b.detector().keys());
    }
}

#[test]
fn a_truncated_body_is_a_decode_error_not_a_panic() {
    let mut a = pipeline(100);
    let mut sim =
        pitchside::sources::simulator::Simulator::new(&Default::default(), 1_795_980_600_000_000);
    let lines: Vec<String> = (0..2000).map(|_| sim.next_line().0).collect();
    feed(&mut a, &lines);
    let body = a.snapshot(0);
    for cut in [0, 1, 9, body.len() / 3, body.len() - 1] {
        let mut b = pipeline(100);
        assert!(b.restore(&body[..cut]).is_err(), "cut at {cut}");
    }
}
