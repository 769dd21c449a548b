//! Any bytes as a BLE bridge's JSON (SPEC §9): nested pointers, array
//! indexes, the sensor kind from the input, the player from the topic.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use pitchside::pipeline::decode::Decoder;
use std::sync::OnceLock;

const SOURCE: &str = r#"
[[sources.mqtt]]
[sources.mqtt.broker]
host = "127.0.0.1"
port = 1883

[[sources.mqtt.subscriptions]]
name = "map_json"
topic = "ble/hr/+/+"
format = "json"

[sources.mqtt.subscriptions.map]
sensor = { field = "/kind" }
device_id = { field = "/dev/id" }
player_id = { topic_level = 2 }
player_name = { field = "/who/names/0" }
zone_id = { field = "/zone" }
delivery_id = { field = "/ball/n" }
event_time = { field = "/t", format = "epoch_ms" }

[sources.mqtt.subscriptions.map.metrics]
heart_rate = { field = "/hr/bpm" }
acceleration = { field = "/imu/acc/1", scale = 9.80665 }
running_dist = { field = "/gps/d~1m" }
"#;

static DECODER: OnceLock<std::sync::Mutex<Decoder>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let d = DECODER.get_or_init(|| std::sync::Mutex::new(common::decoder(SOURCE)));
    let mut d = d.lock().unwrap_or_else(|e| e.into_inner());
    common::check(&mut d, "map_json", data);
});
