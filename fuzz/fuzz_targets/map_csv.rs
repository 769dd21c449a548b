//! Any bytes as a ball tracker's CSV with a header line (SPEC §9): the
//! first line that names every mapped column is the header; the decoder
//! keeps it from input to input, so the fuzzer can teach it new ones.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;
use pitchside::pipeline::decode::Decoder;
use std::sync::OnceLock;

const SOURCE: &str = r#"
[[sources.serial]]
name = "map_csv"
path = "/dev/ttyFUZZ0"
format = "csv"
header = true

[sources.serial.map]
sensor = "pitch"
device_id = { field = "tracker" }
event_time = { field = "timestamp_ms", format = "epoch_ms" }
delivery_id = { field = "delivery" }
match_id = { field = "match" }

[sources.serial.map.metrics]
ball_speed = { field = "speed_kmh" }
spin_rate = { field = "spin_rpm" }
impact_x = { field = "impact_x" }
impact_y = { field = "impact_y", offset = -0.5 }
"#;

static DECODER: OnceLock<std::sync::Mutex<Decoder>> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let d = DECODER.get_or_init(|| std::sync::Mutex::new(common::decoder(SOURCE)));
    let mut d = d.lock().unwrap_or_else(|e| e.into_inner());
    common::check(&mut d, "map_csv", data);
});
