//! MQTT in and alerts out against a private mosquitto: events published by
//! `mosquitto_pub` become alerts on the alert topic and Parquet rows; the
//! gateway survives a broker restart and a stop of its own (persistent
//! session); bad credentials and a wrong CA give clear errors.

use crate::common;

use common::broker::{mqtt_source, Broker, MqttRig, PASSWORD, PASSWORD_ENV, USER};
use common::services::*;
use common::*;
use std::path::Path;
use std::time::Duration;

const T: Duration = Duration::from_secs(15);

/// Broker-table lines for `port`, with the CA to trust over TLS.
fn broker_table(broker: &Broker, port: u16, tls: Option<&Path>) -> String {
    let mut t = broker.login(port) + "keep_alive = \"5s\"\n";
    if let Some(ca) = tls {
        t.push_str(&format!("tls = {{ ca_file = \"{}\" }}\n", ca.display()));
    }
    t
}

/// Publishes `n` generic events of `device` on `venue/generic/{device}`;
/// waits until the gateway has counted `total` inputs.
fn feed(broker: &Broker, gw: &Gateway, device: &str, n: usize, total: f64) {
    broker.publish(
        &format!("venue/generic/{device}"),
        &generic_events(device, n, None, 0.0),
    );
    gw.wait_metric("pitchside_input_rows_total", total, T);
}

/// A config reading `venue/generic/#` from the rig's broker as generic
/// events; alerts published back to the broker when `alerts`.
fn generic_config(rig: &MqttRig, alerts: bool) -> VenueConfig {
    let table = broker_table(&rig.broker, rig.broker.port, None);
    let mut extra = mqtt_source(
        &table,
        "topic = \"venue/generic/#\"\nsensor = \"generic\"\n",
    );
    if alerts {
        extra.push_str(&format!(
            "[alerts]\ntopic_prefix = \"alerts\"\n[alerts.mqtt]\n{table}"
        ));
    }
    VenueConfig::fast(rig.dir.path(), rig.metrics).extra(&extra)
}

#[test]
fn published_events_raise_alerts_on_the_alert_topic_and_land_in_parquet() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let sub = broker.subscribe("alerts/#");
    let gw = rig.start(&generic_config(&rig, true).write());
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
    // SPEC §10: the identity keys are there, null for a generic sensor.
    for k in ["player_id", "player_name", "zone_id", "delivery_id"] {
        assert!(alert.get(k).is_some_and(|v| v.is_null()), "{k}: {alert}");
    }
    gw.wait_metric("pitchside_input_rows_total", 31.0, T);
    gw.wait_metric("pitchside_alerts_published_total", 1.0, T);

    gw.stop();
    let store = rig.store();
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
    let Some(mut rig) = MqttRig::new() else {
        return;
    };
    let gw = rig.start(&generic_config(&rig, true).write());
    let broker = &mut rig.broker;
    gw.log.wait_for("Subscribed.", 1, T);
    feed(broker, &gw, "env-1", 10, 10.0);

    broker.stop();
    gw.log.wait_for("Disconnected from MQTT broker", 1, T);
    gw.log.wait_for("Alert output disconnected", 1, T);
    std::thread::sleep(Duration::from_secs(1));
    broker.restart();
    gw.log.wait_for("Connected to MQTT broker.", 2, T);
    gw.log.wait_for("Alert output connected", 2, T);
    feed(broker, &gw, "env-2", 10, 20.0);
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
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let cfg = generic_config(&rig, false).write();
    let gw = rig.start(&cfg);
    gw.log.wait_for("Subscribed.", 1, T);
    feed(broker, &gw, "env-1", 1, 1.0);
    gw.stop();

    broker.publish(
        "venue/generic/env-1",
        &generic_events("env-3", 12, None, 0.0),
    );
    let gw = rig.start(&cfg);
    gw.log.wait_for("session_present=true", 1, T);
    gw.wait_metric("pitchside_input_rows_total", 12.0, T);
    gw.stop();
    let raw = rows(&rig.store(), "raw");
    assert_eq!(raw.len(), 13, "every message, once");
}

#[test]
fn wrong_password_is_a_clear_error_naming_the_broker() {
    let Some(rig) = MqttRig::new() else { return };
    let cfg = generic_config(&rig, false).write();
    let gw = Gateway::start(&cfg, rig.metrics, &[(PASSWORD_ENV.0, "not-the-password")]);
    let expected = format!(
        "ERROR MQTT broker 127.0.0.1:{} refused the connection",
        rig.broker.port
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
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    for (ca, ok) in [(&broker.ca, true), (&broker.wrong_ca, false)] {
        let run_dir = rig.dir.path().join(if ok { "good" } else { "bad" });
        std::fs::create_dir_all(&run_dir).unwrap();
        let metrics = free_port();
        let extra = mqtt_source(
            &broker_table(broker, broker.tls_port, Some(ca)),
            "topic = \"venue/#\"\n",
        );
        let gw = Gateway::start(
            &fast_config(&run_dir, metrics, &extra),
            metrics,
            &[PASSWORD_ENV],
        );
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

/// The MQTT hold queue's other side (its full side is the session's unit
/// test): a pipeline queue of 2 and a hold queue of 4 take 100 times the hold
/// queue's bound, published in bursts of five once the last burst is read,
/// and drop nothing.
#[test]
fn small_queues_drop_no_message_of_a_stream_far_past_their_bound_while_the_pipeline_keeps_up() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let max_held = 4;
    let extra = format!(
        "[[sources.mqtt]]\nmax_held = {max_held}\n[sources.mqtt.broker]\n{}\
         [[sources.mqtt.subscriptions]]\ntopic = \"venue/generic/#\"\nsensor = \"generic\"\n",
        broker_table(broker, broker.port, None)
    );
    let cfg = VenueConfig::fast(rig.dir.path(), rig.metrics)
        .set("pipeline", "input_queue", 2)
        .extra(&extra);
    let gw = rig.start(&cfg.write());
    gw.log.wait_for("Subscribed.", 1, T);
    let lines = generic_events("probe-9", 400, None, 0.0);
    for (i, burst) in lines.chunks(5).enumerate() {
        broker.publish("venue/generic/probe-9", burst);
        let read = ((i + 1) * burst.len()) as f64;
        gw.wait_metric("pitchside_input_rows_total", read, T);
    }
    assert!(lines.len() >= 100 * max_held);
    assert_eq!(gw.metric("pitchside_mqtt_dropped_messages_total"), 0.0);
    gw.stop();
    let raw = rows(&rig.store(), "raw");
    assert_eq!(raw.len(), lines.len(), "every message is one reading");
}

/// The alert output's other side (its full side is the alert session's unit
/// tests): `alerts.queue = 4`, `input_queue = 2` and `max_inflight = 2` publish
/// 50 alerts (12 times the queue), one a burst once the last is acknowledged,
/// and drop none.
#[test]
fn a_small_alert_queue_drops_no_alert_of_a_stream_far_past_its_bound_while_the_broker_is_up() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let sub = broker.subscribe("alerts/#");
    let queue = 4;
    let table = broker_table(broker, broker.port, None);
    let extra = format!(
        "{}[alerts]\ntopic_prefix = \"alerts\"\nqueue = {queue}\ninput_queue = 2\n\
         max_inflight = 2\n[alerts.mqtt]\n{table}",
        mqtt_source(
            &table,
            "topic = \"venue/generic/#\"\nsensor = \"generic\"\n"
        )
    );
    let gw = rig.start(
        &VenueConfig::fast(rig.dir.path(), rig.metrics)
            .extra(&extra)
            .write(),
    );
    gw.log.wait_for("Alert output connected", 1, T);
    gw.log.wait_for("Subscribed.", 1, T);
    let alerts = 50;
    for i in 0..alerts {
        // 25 readings of a baseline, then one far off it: one alert.
        let device = format!("env-{i}");
        broker.publish(
            &format!("venue/generic/{device}"),
            &generic_events(&device, 30, Some(25), 95.0),
        );
        gw.wait_metric("pitchside_alerts_published_total", (i + 1) as f64, T);
    }
    assert!(alerts >= 10 * queue);
    assert_eq!(gw.metric("pitchside_alerts_dropped_total"), 0.0);
    assert!(
        wait_until(T, || sub.messages().len() >= alerts),
        "{} of {alerts} alerts arrived",
        sub.messages().len()
    );
    gw.stop();
    let mut devices: Vec<String> = sub
        .messages()
        .iter()
        .map(|(topic, _)| topic.trim_start_matches("alerts/generic/").to_string())
        .collect();
    devices.sort();
    devices.dedup();
    assert_eq!(devices.len(), alerts, "one alert from each device");
    assert_eq!(rows(&rig.store(), "alerts").len(), alerts);
}

#[test]
fn simulate_publishes_to_the_broker_and_the_gateway_reads_every_event() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let extra = mqtt_source(
        &broker_table(broker, broker.port, None),
        "topic = \"sim/#\"\n",
    );
    let gw = rig.start(&fast_config(rig.dir.path(), rig.metrics, &extra));
    gw.log.wait_for("Subscribed.", 1, T);
    succeed(
        bin()
            .args(["simulate", "--count", "500", "--rate", "500"])
            .args(["--mqtt-host", "127.0.0.1"])
            .args(["--mqtt-port", &broker.port.to_string()])
            .args(["--mqtt-topic-prefix", "sim"])
            .args([
                "--mqtt-username",
                USER,
                "--mqtt-password-env",
                PASSWORD_ENV.0,
            ])
            .env(PASSWORD_ENV.0, PASSWORD_ENV.1),
    );
    gw.wait_metric("pitchside_input_rows_total", 500.0, T);
    gw.stop();
    let store = rig.store();
    assert!(rows(&store, "rejects").is_empty());
    assert!(rows(&store, "raw").len() >= 500);
}

#[test]
fn kill_9_after_messages_were_acknowledged_loses_none_of_them() {
    let Some(rig) = MqttRig::new() else { return };
    // No table file is written before the kill: only the journal can save these rows.
    let cfg = generic_config(&rig, false)
        .set_str("output", "flush_interval", "1h")
        .write();
    let gw = rig.start(&cfg);
    gw.log.wait_for("Subscribed.", 1, T);
    feed(&rig.broker, &gw, "env-9", 200, 200.0);
    gw.kill9();

    let gw = rig.start(&cfg);
    gw.log.wait_for("Replayed the journal", 1, T);
    gw.log.wait_for("Connected to MQTT broker.", 1, T);
    std::thread::sleep(Duration::from_secs(1)); // any redelivery arrives
    gw.stop();
    let raw = rows(&rig.store(), "raw");
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
