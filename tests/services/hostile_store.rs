//! Delivery in a hostile field: a damaged sequence counter, files of a
//! renamed gateway left in the spool, one file the store keeps refusing,
//! and a power cut right after a `file://` upload. Each runs the real
//! binary against a real store (a local folder, s3s-fs or Azurite on loopback).

use crate::common;

use common::services::{free_port, have, wait_until, Gateway};
use common::stores::{Kind, Server, Uplink, ACCESS_KEY, AZ_KEY, SECRET_KEY};
use common::*;
use pitchside::sinks::store::Store;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `count` simulated events starting at `start` (RFC 3339; now when empty), as a file.
fn simulated_input(dir: &Path, name: &str, count: u32, start: &str) -> PathBuf {
    let mut cmd = bin();
    cmd.args(["simulate", "--count", &count.to_string(), "--rate", "100"]);
    if !start.is_empty() {
        cmd.args(["--start", start]);
    }
    let out = succeed(&mut cmd);
    let p = dir.join(name);
    std::fs::write(&p, out.stdout).unwrap();
    p
}

/// Every file under `root`, relative to it, sorted.
fn tree(root: &Path) -> Vec<String> {
    fn walk(d: &Path, root: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, root, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

#[test]
fn a_corrupt_sequence_counter_is_not_trusted_and_no_object_is_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "");
    let first = simulated_input(dir.path(), "a.jsonl", 300, "2026-11-29T19:00:00Z");
    Replay::new(&cfg, &first).succeed();
    let store = dir.path().join("store");
    let stored = files(&store, "raw");
    assert_eq!(stored.len(), 1);
    let before = std::fs::read(&stored[0]).unwrap();
    // The SD card tore the counter's last write.
    std::fs::write(dir.path().join("spool/state/seq/raw"), b"\x00\x00\x00\x00").unwrap();
    let second = simulated_input(dir.path(), "b.jsonl", 300, "2026-11-29T19:10:00Z");
    let o = Replay::new(&cfg, &second).succeed();
    let log = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        std::fs::read(&stored[0]).unwrap(),
        before,
        "the first raw file was overwritten; log:\n{log}"
    );
    let after = files(&store, "raw");
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(after[1].ends_with("gw-1-000000000001.parquet"), "{after:?}");
    assert!(
        log.contains("Sequence counter unreadable"),
        "the damaged counter is logged: {log}"
    );
}

/// Credential files and `[output]` pointing at `server` under `venues`.
fn cloud_config(c: VenueConfig, dir: &Path, server: &Server) -> VenueConfig {
    let (key_id, secret) = (dir.join("key_id"), dir.join("secret"));
    std::fs::write(&key_id, ACCESS_KEY).unwrap();
    let c = server
        .configure(c, "venues")
        .set_str("output", "upload_timeout", "2s");
    match server.kind {
        Kind::Azurite => {
            std::fs::write(&secret, AZ_KEY).unwrap();
            c.set_str("output.azure", "access_key_file", secret.display())
        }
        Kind::S3sFs | Kind::Moto => {
            std::fs::write(&secret, SECRET_KEY).unwrap();
            c.set_str("output.s3", "access_key_id_file", key_id.display())
                .set_str("output.s3", "secret_access_key_file", secret.display())
        }
    }
}

/// Every key in the store of `cfg` and its bytes.
fn objects(cfg: &Path) -> BTreeMap<String, Vec<u8>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = Store::open(&pitchside::config::load(cfg).unwrap()).unwrap();
    let keys = rt.block_on(store.list("")).unwrap();
    keys.into_iter()
        .map(|k| {
            let bytes = rt.block_on(store.get(&k)).unwrap();
            (k, bytes)
        })
        .collect()
}

/// A raw object uploaded by a replay; the counter torn; the gateway boots
/// with the store unreachable (so it cannot be asked) and numbers raw from
/// 0 again. S3: the server is stopped; Azure: the uplink is cut.
fn corrupt_counter_and_store_down_at_start(kind: Kind) {
    if kind == Kind::Azurite && !have(&["socat"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(mut server) = Server::start(kind, &dir.path().join("server")) else {
        return;
    };
    let replay_cfg = cloud_config(VenueConfig::new(dir.path()), dir.path(), &server).write();
    // Today's date: the gateway's first raw file will have the same key.
    let input = simulated_input(dir.path(), "a.jsonl", 300, "");
    Replay::new(&replay_cfg, &input).succeed();
    let before = objects(&replay_cfg);
    let raw0: Vec<&String> = before.keys().filter(|k| k.starts_with("raw/")).collect();
    assert_eq!(raw0.len(), 1, "{:?}", before.keys());
    let raw0 = raw0[0].clone();

    std::fs::write(dir.path().join("spool/state/seq/raw"), b"garbage").unwrap();
    let mut uplink = Uplink::new(server.port);
    let port = free_port();
    let mut c = cloud_config(VenueConfig::fast(dir.path(), port), dir.path(), &server);
    if kind == Kind::Azurite {
        c = uplink.carry(c, &server);
    } else {
        server.stop();
    }
    let cfg = c.set("sources.simulator", "rate", 200).write_as("run.toml");
    let gw = Gateway::start(&cfg, port, &[]);
    gw.wait_metric(
        "pitchside_files_written_total",
        6.0,
        Duration::from_secs(30),
    );
    if kind == Kind::Azurite {
        uplink.up();
    } else {
        server.restart();
    }
    gw.wait_metric(
        "pitchside_uploaded_files_total",
        6.0,
        Duration::from_secs(60),
    );
    // The first raw file meets the replay's object when its turn comes,
    // which may be after the other tables' first six files.
    gw.wait_metric(
        "pitchside_upload_conflicts_total",
        1.0,
        Duration::from_secs(60),
    );
    let conflicts = gw.metric("pitchside_upload_conflicts_total");
    let log = gw.stop();
    let after = objects(&replay_cfg);
    assert!(
        after[&raw0] == before[&raw0],
        "{raw0} was overwritten; log:\n{log}"
    );
    for (k, v) in &before {
        assert!(after.get(k) == Some(v), "{k} changed");
    }
    assert!(conflicts >= 1.0, "conflicts = {conflicts}; log:\n{log}");
    assert!(log.contains("already holds a different object"), "{log}");
    // Every file is uploaded, or (a file set aside for a retry when the
    // drain began) kept for the next start and said so.
    let left = tree(&dir.path().join("spool/outgoing"));
    assert!(
        left.is_empty() || log.contains("Stopping with files still in the spool"),
        "left in the spool unsaid: {left:?}; log:\n{log}"
    );
    let raw_after = after.keys().filter(|k| k.starts_with("raw/")).count();
    assert!(
        raw_after > 1,
        "the gateway's raw files are in the store too"
    );
}

#[test]
fn with_a_corrupt_counter_and_the_store_down_at_start_s3_refuses_to_overwrite() {
    corrupt_counter_and_store_down_at_start(Kind::S3sFs);
}

#[test]
fn with_a_corrupt_counter_and_the_store_down_at_start_azure_refuses_to_overwrite() {
    corrupt_counter_and_store_down_at_start(Kind::Azurite);
}

#[test]
fn files_of_a_renamed_gateway_are_uploaded_under_their_own_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // The raw folder of the store blocked: the old gateway's raw files stay spooled.
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("raw"), b"not a folder").unwrap();
    let old = VenueConfig::new(dir.path()).set_str("venue", "gateway_id", "gw-old");
    let input = simulated_input(dir.path(), "a.jsonl", 300, "2026-11-29T19:00:00Z");
    let o = Replay::new(&old.write(), &input).run();
    assert!(
        !o.status.success(),
        "the blocked raw upload fails the replay"
    );
    let stranded = files(&dir.path().join("spool/outgoing"), "raw");
    assert_eq!(stranded.len(), 1, "{stranded:?}");
    std::fs::remove_file(store.join("raw")).unwrap();

    // The venue renames the gateway and runs again with the same spool.
    let new = VenueConfig::new(dir.path()).set_str("venue", "gateway_id", "gw-new");
    let o = Replay::new(&new.write(), &input).succeed();
    let log = String::from_utf8_lossy(&o.stderr);
    let raw = files(&store, "raw");
    assert!(
        raw.iter()
            .any(|f| f.ends_with("gw-old-000000000000.parquet")),
        "the old gateway's file was not uploaded: {raw:?}; log:\n{log}"
    );
    assert!(raw.iter().any(|f| f
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("gw-new-"))));
    assert!(
        tree(&dir.path().join("spool/outgoing")).is_empty(),
        "left in the spool: {:?}",
        tree(&dir.path().join("spool/outgoing"))
    );
    assert!(
        log.contains("gw-old"),
        "the old gateway's files are logged: {log}"
    );
}

#[test]
fn one_file_the_store_keeps_refusing_does_not_hold_up_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let key = "alerts/venue_id=testvenue/date=2026-01-01/gw-1-000000000000.parquet";
    let spooled = dir.path().join("spool/outgoing").join(key);
    std::fs::create_dir_all(spooled.parent().unwrap()).unwrap();
    std::fs::write(&spooled, b"an alerts file of an earlier run").unwrap();
    // The store cannot take that one key: its date folder is a file.
    let blocked = dir
        .path()
        .join("store/alerts/venue_id=testvenue/date=2026-01-01");
    std::fs::create_dir_all(blocked.parent().unwrap()).unwrap();
    std::fs::write(&blocked, b"not a folder").unwrap();
    let cfg = VenueConfig::fast(dir.path(), port)
        .set_str("output", "spool_max_bytes", "1MiB")
        .set("sources.simulator", "rate", 4000)
        .write();
    let gw = Gateway::start(&cfg, port, &[]);
    gw.wait_metric(
        "pitchside_uploaded_files_total",
        10.0,
        Duration::from_secs(30),
    );
    assert!(wait_until(Duration::from_secs(10), || gw
        .metric("pitchside_upload_stuck_files")
        == 1.0));
    let evictions = gw.metric("pitchside_spool_evictions_total");
    let status = succeed(bin().args(["status", "--addr", &format!("127.0.0.1:{port}")]));
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    let log = gw.stop();
    assert!(
        status.contains("1 refused by the store, retried on the side"),
        "{status}"
    );
    assert_eq!(
        evictions, 0.0,
        "nothing evicted while the store takes files: {log}"
    );
    assert!(spooled.exists(), "the refused file stays in the spool");
    assert!(
        log.contains("retried on the side") && log.contains(key),
        "{log}"
    );
}

/// The lines of an strace log about `needle`.
fn index_of(trace: &[String], what: &str, needle: &str) -> Option<usize> {
    trace
        .iter()
        .position(|l| l.contains(what) && l.contains(needle))
}

#[test]
fn a_file_store_upload_is_fsynced_before_the_spool_copy_is_deleted() {
    if !have(&["strace"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "");
    let input = simulated_input(dir.path(), "a.jsonl", 300, "2026-11-29T19:00:00Z");
    let trace_file = dir.path().join("trace");
    let mut cmd = std::process::Command::new("strace");
    cmd.args(["-f", "-y", "-qq", "-o"])
        .arg(&trace_file)
        .args([
            "-e",
            "trace=fsync,fdatasync,unlink,unlinkat,rename,renameat,renameat2,link,linkat",
        ])
        .arg(env!("CARGO_BIN_EXE_pitchside"))
        .args(["replay", "--config"])
        .arg(&cfg)
        .arg("--input")
        .arg(&input);
    succeed(&mut cmd);
    let trace: Vec<String> = std::fs::read_to_string(&trace_file)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let store = dir.path().join("store");
    let keys = tree(&store);
    assert!(!keys.is_empty());
    let show = || trace.join("\n");
    for key in &keys {
        let dest = store.join(key).display().to_string();
        let folder = store.join(key).parent().unwrap().display().to_string();
        let spooled = dir
            .path()
            .join("spool/outgoing")
            .join(key)
            .display()
            .to_string();
        let deleted = index_of(&trace, "unlink", &format!("\"{spooled}\""))
            .unwrap_or_else(|| panic!("no unlink of {spooled}:\n{}", show()));
        let file_synced = index_of(&trace, "fsync(", &format!("<{dest}#"))
            .unwrap_or_else(|| panic!("{dest} never fsynced:\n{}", show()));
        let published = index_of(&trace, "link", &format!("\"{dest}\""))
            .unwrap_or_else(|| panic!("{dest} never linked:\n{}", show()));
        let dir_synced = trace[published..]
            .iter()
            .position(|l| l.contains("fsync(") && l.contains(&format!("<{folder}>")))
            .map(|i| i + published)
            .unwrap_or_else(|| panic!("{folder} not fsynced after the link:\n{}", show()));
        assert!(
            file_synced < published && dir_synced < deleted,
            "{key}:\n{}",
            show()
        );
    }
    // The counter's rename is followed by an fsync of its folder.
    let seq_dir = dir.path().join("spool/state/seq").display().to_string();
    let renamed = index_of(&trace, "rename", &format!("{seq_dir}/raw\""))
        .unwrap_or_else(|| panic!("no counter rename:\n{}", show()));
    assert!(
        trace[renamed..]
            .iter()
            .any(|l| l.contains("fsync(") && l.contains(&format!("<{seq_dir}>"))),
        "state/seq not fsynced after the counter's rename:\n{}",
        show()
    );
}
