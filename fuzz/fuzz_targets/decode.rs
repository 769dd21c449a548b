//! Any bytes through the decoder and the pipeline: never a panic, and every
//! non-empty input is either an event or a reject with a reason.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pitchside::pipeline::decode::{Decoded, Decoder};
use pitchside::model::SensorKind;

fuzz_target!(|data: &[u8]| {
    let hint = match data.first().map(|b| b % 5) {
        Some(0) => Some(SensorKind::Wearable),
        Some(1) => Some(SensorKind::Pitch),
        Some(2) => Some(SensorKind::Crowd),
        Some(3) => Some(SensorKind::Generic),
        _ => None,
    };
    let d = Decoder::new(4096, vec![], Some(300_000_000));
    match d.decode_bytes(data, hint, 1_795_980_600_000_000) {
        Decoded::Event(e) => {
            assert!(!e.values.is_empty());
            assert!(e.values.iter().all(|(_, v)| v.is_finite()));
            assert!(!e.device_id.is_empty() && e.device_id.len() <= 64);
        }
        Decoded::Reject(r) => assert!(!r.detail.is_empty()),
        Decoded::Events(_) => panic!("decode_bytes gives one event per input, never several"),
        Decoded::Skip => assert!(data.iter().all(|b| b.is_ascii_whitespace()) || std::str::from_utf8(data).map(|s| s.trim().is_empty()).unwrap_or(false)),
    }
});
