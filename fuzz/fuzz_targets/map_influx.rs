//! Any bytes as a crowd counter's line protocol (SPEC §9): tags, fields,
//! a nanosecond timestamp, scale and offset.
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
name = "map_influx"
topic = "venue/crowd/+"
format = "influx"

[sources.mqtt.subscriptions.map]
sensor = "crowd"
device_id = { field = "counter" }
zone_id = { field = "zone" }
event_time = { field = "time", format = "epoch_ns" }

[sources.mqtt.subscriptions.map.metrics]
density = { field = "density", scale = 0.1, offset = 0.5 }
decibels = { field = "level", scale = 1.5, offset = -3.0 }
"#;

static DECODER: OnceLock<std::sync::Mutex<Decoder>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let d = DECODER.get_or_init(|| std::sync::Mutex::new(common::decoder(SOURCE)));
    let mut d = d.lock().unwrap_or_else(|e| e.into_inner());
    common::check(&mut d, "map_influx", data);
});
