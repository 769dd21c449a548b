//! An event written back as one SPEC §1 JSON line: what `tap` prints for a
//! decoded device input, and a line `replay` reads to the same event
//! (numbers in Rust's shortest round-trip form, times in µs).

use crate::model::{Event, Identity};
use crate::util::time::format_rfc3339;
use serde_json::{Map, Value};

/// The event as a §1 JSON object.
pub fn to_json(e: &Event) -> Value {
    let mut o = Map::new();
    o.insert("sensor".into(), e.sensor.as_str().into());
    o.insert("device_id".into(), e.device_id.as_ref().into());
    o.insert("event_time".into(), format_rfc3339(e.event_time).into());
    o.insert("match_id".into(), e.match_id.into());
    if let Some(id) = e.event_id {
        o.insert("event_id".into(), id.into());
    }
    match &e.identity {
        Identity::Wearable {
            player_id,
            player_name,
        } => {
            o.insert("player_id".into(), (*player_id).into());
            if let Some(n) = player_name {
                o.insert("player_name".into(), n.as_ref().into());
            }
        }
        Identity::Pitch { delivery_id } => {
            if let Some(d) = delivery_id {
                o.insert("delivery_id".into(), (*d).into());
            }
        }
        Identity::Crowd { zone_id } => {
            o.insert("zone_id".into(), zone_id.as_ref().into());
        }
        Identity::Generic { metric } => {
            o.insert("metric".into(), metric.as_ref().into());
        }
    }
    for &(i, x) in &e.values {
        let name = match e.identity {
            Identity::Generic { .. } => "value",
            _ => e.metric_name(i),
        };
        o.insert(name.into(), number(x));
    }
    Value::Object(o)
}

/// A finite number as JSON (events hold no other).
fn number(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Readings, SensorKind};
    use crate::pipeline::decode::{Decoded, Decoder};

    #[test]
    fn a_rendered_event_decodes_to_the_same_event() {
        let e = Event {
            sensor: SensorKind::Wearable,
            device_id: "strap-C7:1A".into(),
            event_time: 1_764_444_600_123_456,
            match_id: 3,
            event_id: Some(-4),
            identity: Identity::Wearable {
                player_id: 7,
                player_name: Some("A \"quoted\" name".into()),
            },
            values: Readings::from_slice(&[(0, 151.0), (2, 0.1 + 0.2)]).unwrap(),
        };
        let line = to_json(&e).to_string();
        let d = Decoder::new(4096, vec![], None);
        assert_eq!(d.decode_bytes(line.as_bytes(), None, 0), Decoded::Event(e));
    }
}
