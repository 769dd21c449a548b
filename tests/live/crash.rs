//! The durability promise end to end: a gateway fed over MQTT and killed
//! with `kill -9` twenty times at arbitrary moments (during flushes,
//! uploads, checkpoints, journal syncs and replays) ends with the same
//! alerts, readings, windows and player load (its match totals included)
//! as an uninterrupted run on the same input —
//! after de-duplicating on `alert_id` and the natural keys, as the lakehouse
//! MERGE does.

use crate::common;

use common::broker::{mqtt_source, MqttRig};
use common::services::*;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

/// Asserts two keyed tables are equal, naming the first difference.
fn assert_same(table: &str, live: &BTreeMap<String, Row>, reference: &BTreeMap<String, Row>) {
    if let Some(k) = reference.keys().find(|k| live.get(*k) != reference.get(*k)) {
        panic!(
            "{table}: {} live rows vs {} reference; first difference at {k}: live {:?}",
            live.len(),
            reference.len(),
            live.get(k)
        );
    }
    assert_eq!(live.len(), reference.len(), "{table}: extra live rows");
}

/// Rows of a table keyed by `key`, wall-clock columns removed; a key written
/// twice must carry identical rows.
fn keyed(root: &Path, table: &str, key: &[&str]) -> BTreeMap<String, Row> {
    let mut out = BTreeMap::new();
    for mut r in rows(root, table) {
        // Wall-clock columns: a live run's restarts show in gateway_downtime_ms,
        // and its clock's state in clock_synchronized (a replay has none).
        for c in [
            "detected_at",
            "received_at",
            "gateway_downtime_ms",
            "clock_synchronized",
        ] {
            r.remove(c);
        }
        let k = key
            .iter()
            .map(|c| format!("{:?}", r[*c]))
            .collect::<Vec<_>>()
            .join("|");
        if let Some(prev) = out.get(&k) {
            assert_eq!(
                prev, &r,
                "{table} row {k} written twice with different values"
            );
        }
        out.insert(k, r);
    }
    out
}

#[test]
fn twenty_kill_9s_give_the_same_results_as_an_uninterrupted_run() {
    let Some(rig) = MqttRig::new() else { return };
    let (dir, broker) = (&rig.dir, &rig.broker);
    let cfg = fast_config(
        dir.path(),
        rig.metrics,
        &mqtt_source(
            &(broker.login(broker.port) + "client_id = \"crash-test\"\n"),
            "topic = \"venue/#\"\n",
        ),
    );
    // Two hours ago, so every event is plausible to the live gateway.
    let start =
        pitchside::util::time::format_rfc3339(pitchside::util::time::now_micros() - 7_200_000_000);
    let out = bin()
        .args(["simulate", "--count", "6000", "--rate", "100"])
        .args(["--anomaly-rate", "0.01", "--start", &start])
        .output()
        .unwrap();
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    let input = dir.path().join("input.jsonl");
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let reference = dir.path().join("reference");
    Replay::new(&cfg, &input).output(&reference).succeed();

    let first = rig.start(&cfg);
    first.log.wait_for("Subscribed.", 1, T);
    let gw = std::thread::scope(|scope| {
        let mut gw = first;
        let publisher = scope.spawn(|| {
            for chunk in lines.chunks(300) {
                broker.publish("venue/sim", chunk);
                std::thread::sleep(Duration::from_millis(150));
            }
        });
        let mut rng = 12345u64;
        for _ in 0..20 {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // 0.1-1 s: kills land in flushes (every 0.5 s), uploads, checkpoints,
            // journal syncs and journal replays.
            std::thread::sleep(Duration::from_millis(100 + (rng >> 33) % 900));
            gw.kill9();
            gw = rig.start(&cfg);
            gw.log.wait_for("Connected to MQTT broker.", 1, T);
        }
        publisher.join().unwrap();
        gw
    });
    // Let the broker hand over what it still holds, then stop cleanly.
    std::thread::sleep(Duration::from_secs(3));
    gw.stop();

    let live = dir.path().join("store");
    let alerts = (
        keyed(&live, "alerts", &["alert_id"]),
        keyed(&reference, "alerts", &["alert_id"]),
    );
    assert!(alerts.1.len() > 50, "the input raises alerts");
    assert_same("alerts", &alerts.0, &alerts.1);
    let reading = ["sensor", "device_id", "metric", "event_time"];
    let raw = (
        keyed(&live, "raw", &reading),
        keyed(&reference, "raw", &reading),
    );
    assert_same("raw", &raw.0, &raw.1);
    for (table, key) in [
        (
            "windows_wearable",
            &["match_id", "player_id", "window_start"][..],
        ),
        ("windows_pitch", &["match_id", "window_start"][..]),
        (
            "windows_crowd",
            &["match_id", "zone_id", "window_start"][..],
        ),
        (
            "windows_generic",
            &["device_id", "metric", "window_start"][..],
        ),
        ("fatigue_alerts", &["alert_id"][..]),
        (
            "load_player_1m",
            &["match_id", "player_id", "window_start"][..],
        ),
    ] {
        let (l, r) = (keyed(&live, table, key), keyed(&reference, table, key));
        // The live gateway keeps its last windows open (in the checkpoint);
        // the replay flushes them at the end of input.
        for (k, row) in &l {
            assert_eq!(r.get(k), Some(row), "{table} {k}");
        }
        assert!(
            l.len() + 30 >= r.len(),
            "{table}: {} live vs {} reference",
            l.len(),
            r.len()
        );
    }
}
