//! MQTT in and alerts out against a private mosquitto: events published by
//! `mosquitto_pub` become alerts on the alert topic and Parquet rows; the
//! gateway survives a broker restart and a stop of its own (persistent
//! session); bad credentials and a wrong CA give clear errors.

mod common;

use common::broker::{Broker, PASSWORD, PROGRAMS, USER};
use common::services::*;
use common::*;
use std::path::Path;
use std::time::Duration;

const PW_ENV: (&str, &str) = ("PITCHSIDE_TEST_MQTT_PASSWORD", PASSWORD);
const T: Duration = Duration::from_secs(15);

fn broker_table(port: u16, tls: Option<&Path>) -> String {
    let mut t = format!(
        "host = \"127.0.0.1\"\nport = {port}\nusername = \"{USER}\"\npassword_env = \"{}\"\nkeep_alive = \"5s\"\n",
        PW_ENV.0
    );
    if let Some(ca) = tls {
        t.push_str(&format!("tls = {{ ca_file = \"{}\" }}\n", ca.display()));
    }
    t
}

fn mqtt_config(dir: &Path, metrics: u16, port: u16, alerts: bool) -> std::path::PathBuf {
    let mut extra = format!(
        "[[sources.mqtt]]\n[sources.mqtt.broker]\n{}[[sources.mqtt.subscriptions]]\ntopic = \"venue/generic/#\"\nsensor = \"generic\"\n",
        broker_table(port, None)
    );
    if alerts {
        extra.push_str(&format!(
            "[alerts]\ntopic_prefix = \"alerts\"\n[alerts.mqtt]\n{}",
            broker_table(port, None)
        ));
    }
    fast_config(dir, metrics, &extra)
}

#[test]
fn published_events_raise_alerts_on_the_alert_topic_and_land_in_parquet() {
    if !have(&PROGRAMS) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let sub = broker.subscribe("alerts/#");
    let metrics = free_port();
    let gw = Gateway::start(
        &mqtt_config(dir.path(), metrics, broker.port, true),
        metrics,
        &[PW_ENV],
    );
    gw.log.wait_for("Connected to MQTT broker.", 1, T);
    gw.log.wait_for("Alert output connected", 1, T);
    gw.log.wait_for("Subscribed.", 1, T);

    let mut events = generic_events("env-7", 30, Some(25), 95.0);
    events.push("{\"device_id\": broken".into());
    broker.publish("venue/generic/env-7", &events);
    assert!(
        wait_until(T, || !sub.messages().is_empty()),
        "no alert published; log:\n{}",
        gw.log.all().join("\n")
    );
    let (topic, payload) = sub.messages().remove(0);
    assert_eq!(topic, "alerts/generic/env-7");
    let alert: serde_json::Value = serde_json::from_str(&payload).unwrap();
    assert_eq!(alert["device_id"], "env-7");
    assert_eq!(alert["sensor"], "generic");
    assert_eq!(alert["metric"], "temp");
    assert_eq!(alert["value"], 95.0);
    assert_eq!(alert["baseline_count"], 25);
    assert!(alert["event_time"].as_str().unwrap().ends_with('Z'));
    gw.wait_metric("pitchside_input_rows_total", 31.0, T);
    gw.wait_metric("pitchside_alerts_published_total", 1.0, T);

    gw.stop();
    let store = dir.path().join("store");
    let alerts = rows(&store, "alerts");
    assert_eq!(alerts.len(), 1);
    assert_eq!(
        s(&alerts[0], "alert_id"),
        alert["alert_id"].as_str().unwrap()
    );
    assert_eq!(f(&alerts[0], "z_score"), alert["z_score"].as_f64().unwrap());
    assert_eq!(rows(&store, "raw").len(), 30);
    let rejects = rows(&store, "rejects");
    assert_eq!(rejects.len(), 1);
    assert_eq!(s(&rejects[0], "source"), "mqtt:venue/generic/env-7");
    assert_eq!(s(&rejects[0], "reason"), "invalid_json");
    assert_eq!(sub.messages().len(), 1, "one alert, published once");
}

#[test]
fn gateway_reconnects_by_itself_when_the_broker_restarts_mid_stream() {
    if !have(&PROGRAMS) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut broker = Broker::start(dir.path());
    let metrics = free_port();
    let gw = Gateway::start(
        &mqtt_config(dir.path(), metrics, broker.port, true),
        metrics,
        &[PW_ENV],
    );
    gw.log.wait_for("Subscribed.", 1, T);
    broker.publish(
        "venue/generic/env-1",
        &generic_events("env-1", 10, None, 0.0),
    );
    gw.wait_metric("pitchside_input_rows_total", 10.0, T);

    broker.stop();
    gw.log.wait_for("Disconnected from MQTT broker", 1, T);
    gw.log.wait_for("Alert output disconnected", 1, T);
    std::thread::sleep(Duration::from_secs(1));
    broker.restart();
    gw.log.wait_for("Connected to MQTT broker.", 2, T);
    gw.log.wait_for("Alert output connected", 2, T);
    broker.publish(
        "venue/generic/env-2",
        &generic_events("env-2", 10, None, 0.0),
    );
    gw.wait_metric("pitchside_input_rows_total", 20.0, T);
    assert!(gw.metric("pitchside_mqtt_disconnects_total") >= 1.0);
    let log = gw.stop();
    assert_eq!(
        log.matches("Disconnected from MQTT broker").count(),
        1,
        "the outage is logged once, not per retry:\n{log}"
    );
}

#[test]
fn messages_published_while_the_gateway_was_stopped_arrive_after_it_restarts() {
    if !have(&PROGRAMS) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let metrics = free_port();
    let cfg = mqtt_config(dir.path(), metrics, broker.port, false);
    let gw = Gateway::start(&cfg, metrics, &[PW_ENV]);
    gw.log.wait_for("Subscribed.", 1, T);
    broker.publish(
        "venue/generic/env-1",
        &generic_events("env-1", 1, None, 0.0),
    );
    gw.wait_metric("pitchside_input_rows_total", 1.0, T);
    gw.stop();

    broker.publish(
        "venue/generic/env-1",
        &generic_events("env-3", 12, None, 0.0),
    );
    let gw = Gateway::start(&cfg, metrics, &[PW_ENV]);
    gw.log.wait_for("session_present=true", 1, T);
    gw.wait_metric("pitchside_input_rows_total", 12.0, T);
    gw.stop();
    let raw = rows(&dir.path().join("store"), "raw");
    assert_eq!(raw.len(), 13, "every message, once");
}

#[test]
fn wrong_password_is_a_clear_error_naming_the_broker() {
    if !have(&PROGRAMS) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let metrics = free_port();
    let cfg = mqtt_config(dir.path(), metrics, broker.port, false);
    let gw = Gateway::start(&cfg, metrics, &[(PW_ENV.0, "not-the-password")]);
    let expected = format!(
        "ERROR MQTT broker 127.0.0.1:{} refused the connection",
        broker.port
    );
    gw.log.wait_for(&expected, 1, T);
    std::thread::sleep(Duration::from_secs(2));
    let log = gw.stop();
    let errors: Vec<&str> = log.lines().filter(|l| l.contains(&expected)).collect();
    assert_eq!(errors.len(), 1, "said once, not per retry:\n{log}");
    assert!(errors[0].contains("password"), "{}", errors[0]);
    assert!(
        !log.contains(PASSWORD) && !log.contains("not-the-password"),
        "secret in log"
    );
}

#[test]
fn tls_with_the_right_ca_connects_and_a_wrong_ca_is_a_clear_error() {
    if !have(&PROGRAMS) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    for (ca, ok) in [(&broker.ca, true), (&broker.wrong_ca, false)] {
        let run_dir = dir.path().join(if ok { "good" } else { "bad" });
        std::fs::create_dir_all(&run_dir).unwrap();
        let metrics = free_port();
        let extra = format!(
            "[[sources.mqtt]]\n[sources.mqtt.broker]\n{}[[sources.mqtt.subscriptions]]\ntopic = \"venue/#\"\n",
            broker_table(broker.tls_port, Some(ca))
        );
        let gw = Gateway::start(&fast_config(&run_dir, metrics, &extra), metrics, &[PW_ENV]);
        if ok {
            gw.log.wait_for("Connected to MQTT broker.", 1, T);
        } else {
            let expected = format!("TLS with MQTT broker 127.0.0.1:{} failed", broker.tls_port);
            gw.log.wait_for(&expected, 1, T);
            let log = gw.log.all().join("\n");
            assert!(
                log.contains("UnknownIssuer") || log.contains("certificate"),
                "{log}"
            );
        }
        gw.stop();
    }
}

#[test]
fn simulate_publishes_to_the_broker_and_the_gateway_reads_every_event() {
    if !have(&PROGRAMS) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let metrics = free_port();
    let extra = format!(
        "[[sources.mqtt]]\n[sources.mqtt.broker]\n{}[[sources.mqtt.subscriptions]]\ntopic = \"sim/#\"\n",
        broker_table(broker.port, None)
    );
    let gw = Gateway::start(
        &fast_config(dir.path(), metrics, &extra),
        metrics,
        &[PW_ENV],
    );
    gw.log.wait_for("Subscribed.", 1, T);
    let out = bin()
        .args([
            "simulate",
            "--count",
            "500",
            "--rate",
            "500",
            "--mqtt-host",
            "127.0.0.1",
        ])
        .args([
            "--mqtt-port",
            &broker.port.to_string(),
            "--mqtt-topic-prefix",
            "sim",
        ])
        .args(["--mqtt-username", USER, "--mqtt-password-env", PW_ENV.0])
        .env(PW_ENV.0, PW_ENV.1)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    gw.wait_metric("pitchside_input_rows_total", 500.0, T);
    gw.stop();
    let store = dir.path().join("store");
    assert!(rows(&store, "rejects").is_empty());
    assert!(rows(&store, "raw").len() >= 500);
}

#[test]
fn kill_9_after_messages_were_acknowledged_loses_none_of_them() {
    if !have(&PROGRAMS) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let broker = Broker::start(dir.path());
    let metrics = free_port();
    let cfg = mqtt_config(dir.path(), metrics, broker.port, false);
    // No table file is written before the kill: only the journal can save these rows.
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("flush_interval = \"500ms\"", "flush_interval = \"1h\"");
    std::fs::write(&cfg, text).unwrap();
    let gw = Gateway::start(&cfg, metrics, &[PW_ENV]);
    gw.log.wait_for("Subscribed.", 1, T);
    broker.publish(
        "venue/generic/env-9",
        &generic_events("env-9", 200, None, 0.0),
    );
    gw.wait_metric("pitchside_input_rows_total", 200.0, T);
    gw.kill9();

    let gw = Gateway::start(&cfg, metrics, &[PW_ENV]);
    gw.log.wait_for("Replayed the journal", 1, T);
    gw.log.wait_for("Connected to MQTT broker.", 1, T);
    std::thread::sleep(Duration::from_secs(1)); // any redelivery arrives
    gw.stop();
    let raw = rows(&dir.path().join("store"), "raw");
    let mut times: Vec<i64> = raw.iter().map(|r| i(r, "event_time")).collect();
    times.sort();
    times.dedup();
    assert_eq!(
        times.len(),
        200,
        "every acknowledged message survives kill -9"
    );
    assert_eq!(
        raw.len(),
        200,
        "a redelivered message is a duplicate, not a second row"
    );
}
