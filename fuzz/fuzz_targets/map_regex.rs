//! Any bytes as a sound-level meter's line read by a pattern (SPEC §9): an
//! optional capture and a local time with a fixed UTC offset.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use pitchside::pipeline::decode::Decoder;
use std::sync::OnceLock;

const SOURCE: &str = r#"
[[sources.serial]]
name = "map_regex"
path = "/dev/ttyFUZZ0"
format = "regex"
pattern = '^(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s+(?:(?P<zone>\S+)\s+)?LAeq,1s=(?P<db>-?\d+(?:\.\d+)?) dB(?:\s+LCpeak=(?P<peak>[^ ]+) dB)?\s*$'

[sources.serial.map]
sensor = "crowd"
device_id = { value = "slm-north" }
zone_id = { field = "zone" }
event_time = { field = "ts", format = "%Y-%m-%d %H:%M:%S", utc_offset = "+05:30" }

[sources.serial.map.metrics]
decibels = { field = "db" }
density = { field = "peak", scale = 0.01 }
"#;

static DECODER: OnceLock<std::sync::Mutex<Decoder>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let d = DECODER.get_or_init(|| std::sync::Mutex::new(common::decoder(SOURCE)));
    let mut d = d.lock().unwrap_or_else(|e| e.into_inner());
    common::check(&mut d, "map_regex", data);
});
