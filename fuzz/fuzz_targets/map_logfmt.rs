//! Any bytes as a hub's logfmt through a generic map with two metrics:
//! several events from one input (SPEC §9).
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use pitchside::pipeline::decode::Decoder;
use std::sync::OnceLock;

const SOURCE: &str = r#"
[[sources.serial]]
name = "map_logfmt"
path = "/dev/ttyFUZZ0"
format = "logfmt"

[sources.serial.map]
sensor = "generic"
device_id = { field = "vest" }
event_time = { field = "ts", format = "rfc3339" }
event_id = { field = "seq" }

[sources.serial.map.metrics]
"hub.temp_c" = { field = "temp" }
battery_pct = { field = "bat", scale = 100.0 }
"#;

static DECODER: OnceLock<std::sync::Mutex<Decoder>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let d = DECODER.get_or_init(|| std::sync::Mutex::new(common::decoder(SOURCE)));
    let mut d = d.lock().unwrap_or_else(|e| e.into_inner());
    common::check(&mut d, "map_logfmt", data);
});
