//! `alerts.notify_cooldown` live: a flapping device over MQTT raises many
//! alerts; with a cooldown of an hour each key notifies once (one MQTT
//! message, one log line) while the `alerts` table holds every alert, and
//! `pitchside status` says how many were held back.

use crate::common;

use common::broker::{mqtt_source, MqttRig};
use common::*;
use std::time::Duration;

const T: Duration = Duration::from_secs(20);

/// `n` generic readings of `device` (20 ± 0.5, 10 ms apart, a minute ago)
/// with a spike of 95 every 15 readings after the first 40: a sensor that
/// keeps flapping.
fn flapping(device: &str, n: usize) -> Vec<String> {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    (0..n)
        .map(|i| {
            let v = if i >= 40 && (i - 40) % 15 == 0 {
                95.0
            } else {
                20.0 + if i % 2 == 0 { 0.5 } else { -0.5 }
            };
            format!(
                r#"{{"device_id":"{device}","event_time":{},"metric":"temp","value":{v}}}"#,
                now_ms - 60_000 + i as i64 * 10
            )
        })
        .collect()
}

#[test]
fn a_flapping_device_notifies_once_per_key_while_the_alerts_table_keeps_every_alert() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let table = broker.login(broker.port);
    let mut extra = mqtt_source(
        &table,
        "topic = \"venue/generic/#\"\nsensor = \"generic\"\n",
    );
    extra.push_str(&format!(
        "[alerts]\ntopic_prefix = \"alerts\"\nnotify_cooldown = \"1h\"\n[alerts.mqtt]\n{table}"
    ));
    let cfg = VenueConfig::fast(rig.dir.path(), rig.metrics)
        .extra(&extra)
        .write();
    let sub = broker.subscribe("alerts/#");
    let gw = rig.start(&cfg);
    gw.log.wait_for("Alert output connected", 1, T);
    gw.log.wait_for("Subscribed.", 1, T);

    for device in ["env-1", "env-2"] {
        broker.publish(&format!("venue/generic/{device}"), &flapping(device, 115));
    }
    gw.wait_metric("pitchside_input_rows_total", 230.0, T);
    gw.wait_metric("pitchside_alerts_published_total", 2.0, T);
    // Every alert is counted as raised or held back before the gateway stops.
    let alerts_total = gw.metric("pitchside_alerts_total");
    assert!(
        alerts_total >= 8.0,
        "a flapping device alerts often: {alerts_total}"
    );
    gw.wait_metric("pitchside_notify_suppressed_total", alerts_total - 2.0, T);
    eprintln!("{alerts_total} alerts raised, 2 notified");
    let status = bin()
        .args(["status", "--addr", &format!("127.0.0.1:{}", rig.metrics)])
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains(&format!(
            "notify      {} alerts not notified within alerts.notify_cooldown",
            alerts_total - 2.0
        )),
        "{status}"
    );
    std::thread::sleep(Duration::from_millis(500));
    let log = gw.stop();

    let messages = sub.messages();
    let mut topics: Vec<&str> = messages.iter().map(|(t, _)| t.as_str()).collect();
    topics.sort();
    assert_eq!(
        topics,
        ["alerts/generic/env-1", "alerts/generic/env-2"],
        "{messages:?}"
    );
    assert_eq!(
        log.matches("ALERT anomaly").count(),
        2,
        "one log line per key"
    );

    let rows = rows(&rig.store(), "alerts");
    assert_eq!(
        rows.len() as f64,
        alerts_total,
        "the table keeps every alert"
    );
    for device in ["env-1", "env-2"] {
        let n = rows.iter().filter(|r| s(r, "device_id") == device).count();
        assert!(n >= 4, "{device}: {n} alerts in the table");
    }
}
