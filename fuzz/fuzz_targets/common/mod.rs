//! What every mapped-format fuzz target shares: a decoder for one source
//! built from a small config, and SPEC §1's checks on what it decodes.

use pitchside::model::{Event, Identity};
use pitchside::pipeline::decode::map::Context;
use pitchside::pipeline::decode::{Decoded, Decoder};

/// The `[venue]` and `[output]` a config needs before its source.
const HEADER: &str = "[venue]\nid = \"fuzz\"\ngateway_id = \"gw-fuzz\"\n\
[output]\nstore = \"file:///tmp/pitchside-fuzz/store\"\nspool_dir = \"/tmp/pitchside-fuzz/spool\"\n\
[metrics]\nlisten = \"\"\n";

/// The source named `name` in `source` (TOML after the venue header), as a
/// decoder: what the gateway builds at start-up.
pub fn decoder(source: &str) -> Decoder {
    let text = format!("{HEADER}{source}");
    let config = pitchside::config::parse(&text, "fuzz")
        .and_then(|c| c.validate())
        .unwrap_or_else(|e| panic!("the fuzz target's config is wrong: {e}"));
    Decoder::new(4096, vec![], Some(300_000_000)).with_formats(config.inputs.formats())
}

/// Decodes `data` as source `name` and checks the outcome.
pub fn check(d: &mut Decoder, name: &str, data: &[u8]) {
    let cx = Context {
        topic: Some("ble/hr/7/x"),
        received_at: 1_764_444_600_000_000,
        clock: 1_764_444_600_000_000,
    };
    match d.decode_mapped(name, data, &cx) {
        Decoded::Event(e) => check_event(&e),
        Decoded::Events(es) => {
            assert!(!es.is_empty(), "Events with no event");
            es.iter().for_each(check_event);
        }
        Decoded::Reject(r) => assert!(!r.detail.is_empty(), "reject {:?} without detail", r.reason),
        Decoded::Skip => {}
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

/// SPEC §1: what every event must be.
pub fn check_event(e: &Event) {
    assert!(is_id(&e.device_id), "device_id {:?}", e.device_id);
    assert!(!e.values.is_empty(), "no value: {e:?}");
    assert!(e.values.iter().all(|(_, v)| v.is_finite()), "{e:?}");
    match &e.identity {
        Identity::Crowd { zone_id } => assert!(is_id(zone_id), "zone_id {zone_id:?}"),
        Identity::Generic { metric } => assert!(is_metric(metric), "metric {metric:?}"),
        Identity::Wearable {
            player_name: Some(n),
            ..
        } => {
            assert!(n.chars().count() <= 64, "player_name {n:?}")
        }
        _ => {}
    }
}
