//! What the mapped-format fuzz targets and `tests/offline/formats_props.rs`
//! share: the device maps (`fuzz/maps/*.toml`), a decoder built from them as
//! the gateway builds it, and SPEC §1's checks on what it decodes. One copy:
//! the property tests include this file by path.
// Each fuzz target uses one map; the property tests use them all, and not
// the fuzz targets' macro.
#![allow(dead_code, unused_macros)]

use pitchside::model::{Event, Identity, Micros};
use pitchside::pipeline::decode::map::Context;
use pitchside::pipeline::decode::{Decoded, Decoder};

/// When the inputs arrive, and the wall clock: 2025-11-29T19:30:00Z.
pub const NOW: Micros = 1_764_444_600_000_000;

/// A BLE bridge's JSON: nested pointers, array indexes, the kind from the input.
pub const JSON: &str = include_str!("../../maps/json.toml");
/// A ball tracker's CSV with a header line, `;` apart.
pub const CSV: &str = include_str!("../../maps/csv.toml");
/// A sound-level meter read by a pattern, local time at +05:30.
pub const REGEX: &str = include_str!("../../maps/regex.toml");
/// A wearable hub's logfmt.
pub const LOGFMT: &str = include_str!("../../maps/logfmt.toml");
/// The same hub through a generic map with two metrics.
pub const GENERIC: &str = include_str!("../../maps/generic.toml");
/// A crowd counter's line protocol, plain (`influx`) and scaled (`influx_scaled`).
pub const INFLUX: &str = include_str!("../../maps/influx.toml");

/// The `[venue]`, `[output]` and `[metrics]` a config needs before its sources.
const HEADER: &str = "[venue]\nid = \"maps\"\ngateway_id = \"gw-maps\"\n\
[output]\nstore = \"file:///tmp/pitchside-maps/store\"\nspool_dir = \"/tmp/pitchside-maps/spool\"\n\
[metrics]\nlisten = \"\"\n";

/// A decoder for the sources in `sources` (TOML after the venue header), as
/// the gateway builds it at start-up.
pub fn decoder(sources: &str) -> Decoder {
    let text = format!("{HEADER}{sources}");
    let config = pitchside::config::parse(&text, "maps")
        .and_then(|c| c.validate())
        .unwrap_or_else(|e| panic!("the maps' config is wrong: {e}"));
    Decoder::new(4096, vec![], Some(300_000_000)).with_formats(config.inputs.formats())
}

/// Where and when an input arrives: an MQTT topic (the JSON map takes the
/// player from it), at [`NOW`].
pub fn context() -> Context<'static> {
    Context {
        topic: Some("ble/hr/7/x"),
        received_at: NOW,
        clock: NOW,
    }
}

fn is_id(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
}

fn is_metric(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
}

/// What is wrong with `e` as a SPEC §1 event, if anything.
pub fn event_problem(e: &Event) -> Option<String> {
    if !is_id(&e.device_id) {
        return Some(format!("device_id {:?}", e.device_id));
    }
    if e.values.is_empty() {
        return Some(format!("no value: {e:?}"));
    }
    if !e.values.iter().all(|(_, v)| v.is_finite()) {
        return Some(format!("a value not finite: {e:?}"));
    }
    match &e.identity {
        Identity::Crowd { zone_id } if !is_id(zone_id) => Some(format!("zone_id {zone_id:?}")),
        Identity::Generic { metric } if !is_metric(metric) => Some(format!("metric {metric:?}")),
        Identity::Wearable {
            player_name: Some(n),
            ..
        } if n.chars().count() > 64 => Some(format!("player_name {n:?}")),
        _ => None,
    }
}

/// What is wrong with a decoder's outcome, if anything: it must be §1
/// events, a reject with a detail, or nothing (a blank line, a CSV header).
pub fn outcome_problem(out: &Decoded) -> Option<String> {
    match out {
        Decoded::Event(e) => event_problem(e),
        Decoded::Events(es) if es.is_empty() => Some("Events with no event".into()),
        Decoded::Events(es) => es.iter().find_map(event_problem),
        Decoded::Reject(r) if r.detail.is_empty() => {
            Some(format!("reject {:?} without detail", r.reason))
        }
        Decoded::Reject(_) | Decoded::Skip => None,
    }
}

/// Decodes `data` as source `name` and panics on a wrong outcome: the body
/// of every mapped-format fuzz target.
pub fn check(d: &mut Decoder, name: &str, data: &[u8]) {
    if let Some(problem) = outcome_problem(&d.decode_mapped(name, data, &context())) {
        panic!("source {name}: {problem}");
    }
}

/// A mapped-format fuzz target: any bytes as source `$name` of the maps in
/// `$sources`, through one decoder kept from input to input (so a CSV
/// header the fuzzer sends stays), checked by [`check`].
macro_rules! map_target {
    ($sources:expr, $name:literal) => {
        static DECODER: std::sync::OnceLock<
            std::sync::Mutex<pitchside::pipeline::decode::Decoder>,
        > = std::sync::OnceLock::new();

        libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            let d = DECODER.get_or_init(|| std::sync::Mutex::new(common::decoder($sources)));
            let mut d = d.lock().unwrap_or_else(|e| e.into_inner());
            common::check(&mut d, $name, data);
        });
    };
}
