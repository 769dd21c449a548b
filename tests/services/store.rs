//! Uploads to real object-storage servers on loopback: s3s-fs (checks
//! signatures), moto (a second S3 opinion) and Azurite. Outage and recovery,
//! the spool's ceiling, and wrong credentials.

use crate::common;

use common::services::{free_port, wait_until, Gateway};
use common::stores::{Kind, Server, ACCESS_KEY, AZ_KEY, SECRET_KEY};
use common::*;
use parquet::file::reader::{FileReader, SerializedFileReader};
use pitchside::sinks::store::Store;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

/// Writes credential files and points `c` at `server` (prefix `venues`, a
/// flush every second) with them.
fn with_store(c: VenueConfig, dir: &Path, server: &Server, secret: &str) -> VenueConfig {
    let key_id = dir.join("key_id");
    let secret_file = dir.join("secret");
    std::fs::write(&key_id, ACCESS_KEY).unwrap();
    // Azurite has its own well-known key; "the right secret" means that one.
    let secret = if server.kind == Kind::Azurite && secret == SECRET_KEY {
        AZ_KEY
    } else {
        secret
    };
    std::fs::write(&secret_file, secret).unwrap();
    let c = server.configure(c.set_str("output", "flush_interval", "1s"), "venues");
    match server.kind {
        Kind::S3sFs | Kind::Moto => c
            .set_str("output.s3", "access_key_id_file", key_id.display())
            .set_str("output.s3", "secret_access_key_file", secret_file.display()),
        Kind::Azurite => c.set_str("output.azure", "access_key_file", secret_file.display()),
    }
}

/// A config for replays uploading to `server` with `secret`.
fn replay_config(dir: &Path, server: &Server, secret: &str) -> std::path::PathBuf {
    with_store(VenueConfig::new(dir), dir, server, secret).write()
}

fn simulated_input(dir: &Path, count: u32) -> std::path::PathBuf {
    let out = bin()
        .args([
            "simulate",
            "--count",
            &count.to_string(),
            "--rate",
            "100",
            "--start",
            "2026-11-29T19:00:00Z",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let p = dir.join("in.jsonl");
    std::fs::write(&p, out.stdout).unwrap();
    p
}

fn store_for(cfg: &Path) -> Store {
    let c = pitchside::config::load(cfg).unwrap();
    Store::open(&c).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Every key under the store, and the number of rows of each table.
fn store_contents(store: &Store) -> (Vec<String>, std::collections::BTreeMap<String, usize>) {
    let rt = runtime();
    let keys = rt.block_on(store.list("")).unwrap();
    let mut rows = std::collections::BTreeMap::new();
    for k in &keys {
        let bytes = rt.block_on(store.get(k)).unwrap();
        let r = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
        let n = r.metadata().file_metadata().num_rows() as usize;
        *rows
            .entry(k.split('/').next().unwrap().to_string())
            .or_insert(0) += n;
    }
    (keys, rows)
}

fn replay_uploads_every_table(kind: Kind) {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(kind, &dir.path().join("server")) else {
        return;
    };
    let input = simulated_input(dir.path(), 6000);
    let cfg = replay_config(dir.path(), &server, SECRET_KEY);
    Replay::new(&cfg, &input).succeed();

    // The same input into a local folder is the reference.
    let local = dir.path().join("local");
    Replay::new(&cfg, &input).output(&local).succeed();

    let (keys, rows) = store_contents(&store_for(&cfg));
    let mut local_keys = Vec::new();
    for t in pitchside::tables::TableId::ALL {
        for f in files(&local, t.name()) {
            local_keys.push(
                f.strip_prefix(&local)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    local_keys.sort();
    assert_eq!(
        keys, local_keys,
        "same object keys in the store as in the local replay"
    );
    for t in [
        "alerts",
        "windows_wearable",
        "windows_pitch",
        "raw",
        "progress",
    ] {
        assert_eq!(
            rows.get(t).copied().unwrap_or(0),
            common::rows(&local, t).len(),
            "{t} rows"
        );
    }
    assert!(rows["alerts"] > 0);
    // Nothing left waiting locally.
    assert!(files(&dir.path().join("spool"), "outgoing").is_empty());
}

#[test]
fn replay_uploads_every_table_to_s3s_fs() {
    replay_uploads_every_table(Kind::S3sFs);
}

#[test]
fn replay_uploads_every_table_to_moto() {
    replay_uploads_every_table(Kind::Moto);
}

#[test]
fn replay_uploads_every_table_to_azurite() {
    replay_uploads_every_table(Kind::Azurite);
}

/// A gateway config uploading to `server`, fed by the simulator at `rate`,
/// with `output` keys added to `[output]`; and its metrics port.
fn gateway_config(
    dir: &Path,
    server: &Server,
    output: &[(&str, &str)],
    rate: u32,
) -> (std::path::PathBuf, u16) {
    let port = free_port();
    let cfg = with_store(VenueConfig::fast(dir, port), dir, server, SECRET_KEY)
        .set_strs("output", output)
        .set_str("metrics", "progress_interval", "500ms")
        .set("sources.simulator", "rate", rate)
        .write();
    (cfg, port)
}

#[test]
fn store_outage_keeps_files_in_the_spool_then_drains_every_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut server) = Server::start(Kind::S3sFs, &dir.path().join("server")) else {
        return;
    };
    let (cfg, port) = gateway_config(dir.path(), &server, &[("upload_timeout", "2s")], 400);
    let gw = Gateway::start(&cfg, port, &[]);
    gw.wait_metric(
        "pitchside_uploaded_files_total",
        3.0,
        Duration::from_secs(30),
    );

    server.stop();
    gw.wait_metric(
        "pitchside_upload_failures_total",
        1.0,
        Duration::from_secs(30),
    );
    gw.wait_metric("pitchside_spool_files", 5.0, Duration::from_secs(30));
    let during = gw.metric("pitchside_input_rows_total");
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        gw.metric("pitchside_input_rows_total") > during,
        "detection goes on during the outage"
    );

    server.restart();
    assert!(
        wait_until(Duration::from_secs(60), || gw
            .metric("pitchside_spool_files")
            == 0.0
            && gw.metric("pitchside_uploaded_files_total") > 10.0),
        "spool did not drain: {} files waiting",
        gw.metric("pitchside_spool_files")
    );
    let log = gw.stop();
    assert!(log.contains("Upload failed"), "the outage was logged");
    assert!(
        log.contains("Uploads succeed again"),
        "the end of the outage was logged: {log}"
    );
    assert!(
        files(&dir.path().join("spool"), "outgoing").is_empty(),
        "everything uploaded at shutdown"
    );

    let (keys, _) = store_contents(&store_for(&cfg));
    let unique: BTreeSet<_> = keys.iter().collect();
    assert_eq!(unique.len(), keys.len());
    // Per table, sequence numbers run 0..n without gaps: nothing lost, nothing twice.
    assert_contiguous_seqs(keys.iter().map(String::as_str));
}

#[test]
fn full_spool_evicts_raw_first_and_keeps_alerts() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut server) = Server::start(Kind::S3sFs, &dir.path().join("server")) else {
        return;
    };
    server.stop(); // the uplink is down from the start
    let (cfg, port) = gateway_config(
        dir.path(),
        &server,
        &[("upload_timeout", "1s"), ("spool_max_bytes", "1MiB")],
        4000,
    );
    let gw = Gateway::start(&cfg, port, &[]);
    gw.wait_metric(
        "pitchside_spool_evictions_total",
        3.0,
        Duration::from_secs(60),
    );
    let spool_bytes = gw.metric("pitchside_spool_bytes");
    let log = gw.stop();
    assert!(log.contains("Spool full"), "evictions are logged");
    assert!(
        spool_bytes <= (1 << 20) as f64,
        "spool at {spool_bytes} bytes"
    );
    let spool = dir.path().join("spool").join("outgoing");
    assert!(!files(&spool, "alerts").is_empty(), "alerts are kept");
    assert!(
        !files(&spool, "windows_wearable").is_empty(),
        "windows are kept"
    );
    let on_disk: u64 = pitchside::tables::TableId::ALL
        .iter()
        .flat_map(|t| files(&spool, t.name()))
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    // The last flush at shutdown may add one round of files on top.
    assert!(on_disk < 2 << 20, "{on_disk} bytes in the spool");
}

#[test]
fn wrong_credentials_give_a_clear_error_and_keep_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = Server::start(Kind::S3sFs, &dir.path().join("server")) else {
        return;
    };
    let input = simulated_input(dir.path(), 500);
    let cfg = replay_config(dir.path(), &server, "not-the-secret");
    let o = Replay::new(&cfg, &input).run();
    assert!(!o.status.success(), "a replay that cannot upload fails");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("credentials") && err.contains("s3://pitchside/venues"),
        "{err}"
    );
    assert!(
        !err.contains(SECRET_KEY) && !err.contains("not-the-secret"),
        "no secrets in messages"
    );
    let kept = files(&dir.path().join("spool").join("outgoing"), "raw");
    assert!(
        !kept.is_empty(),
        "files stay in the spool for the next attempt"
    );
}

#[test]
fn a_lost_spool_continues_the_store_sequence_instead_of_overwriting() {
    let dir = tempfile::tempdir().unwrap();
    let input = simulated_input(dir.path(), 300);
    let cfg = config(dir.path(), "");
    let replay = || Replay::new(&cfg, &input).succeed();
    replay();
    let store = dir.path().join("store");
    let first = files(&store, "raw");
    assert_eq!(first.len(), 1);
    let before = std::fs::read(&first[0]).unwrap();
    std::fs::remove_dir_all(dir.path().join("spool")).unwrap(); // SD card swapped
    replay();
    let after = files(&store, "raw");
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(
        std::fs::read(&first[0]).unwrap(),
        before,
        "the first file was not overwritten"
    );
    assert!(after[1].ends_with("gw-1-000000000001.parquet"));
}

#[test]
fn replay_into_the_spool_of_a_running_gateway_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    // config() turns the metrics endpoint off: this test only reads the log.
    let cfg = config(dir.path(), "[sources.simulator]\nrate = 50\n");
    let gw = Gateway::start(&cfg, port, &[]);
    assert!(wait_until(Duration::from_secs(20), || gw
        .log
        .count("running")
        > 0));
    let input = simulated_input(dir.path(), 10);
    let o = Replay::new(&cfg, &input).run();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("in use by another pitchside process"), "{err}");
    gw.stop();
}
