//! The field names an event is read from, and the two ways a key finds its
//! slot among them: [`slot`] for a key already read, [`slot_at`] for one
//! still in the text (which skips scanning it as a string).

use crate::model::SensorKind;

/// The field names an event is read from: common, identity and metric
/// fields of every kind. [`Fields`] finds each in one pass over the object.
pub(super) const KNOWN: [&str; 21] = [
    "sensor",
    "device_id",
    "event_time",
    "event_ts",
    "match_id",
    "event_id",
    "player_id",
    "player_name",
    "delivery_id",
    "zone_id",
    "metric",
    "value",
    "heart_rate",
    "acceleration",
    "running_dist",
    "impact_x",
    "impact_y",
    "ball_speed",
    "spin_rate",
    "decibels",
    "density",
];

/// The slot of the known field `name`, worked out at compile time where
/// it is used as `const { index("…") }` (a name not in [`KNOWN`] does not
/// compile).
pub(super) const fn index(name: &str) -> usize {
    let name = name.as_bytes();
    let mut i = 0;
    while i < KNOWN.len() {
        let k = KNOWN[i].as_bytes();
        if k.len() == name.len() {
            let mut j = 0;
            while j < k.len() && k[j] == name[j] {
                j += 1;
            }
            if j == k.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("not a known field")
}

/// The slots of a kind's metric fields, in the order of
/// [`SensorKind::metrics`] (`value` for generic events): the decoder reads
/// them by slot, not by name.
pub(super) const fn metric_slots(sensor: SensorKind) -> &'static [usize] {
    match sensor {
        SensorKind::Wearable => &[12, 13, 14],
        SensorKind::Pitch => &[15, 16, 17, 18],
        SensorKind::Crowd => &[19, 20],
        SensorKind::Generic => &[11],
    }
}

/// The slots a kind's events are read from besides the common ones (its
/// identity and metric fields), as a bit mask: worked out at compile time.
pub(super) const fn own_slots(sensor: SensorKind) -> u32 {
    let identity: &[usize] = match sensor {
        SensorKind::Wearable => &[index("player_id"), index("player_name")],
        SensorKind::Pitch => &[index("delivery_id")],
        SensorKind::Crowd => &[index("zone_id")],
        SensorKind::Generic => &[index("metric")],
    };
    let metrics = metric_slots(sensor);
    let mut mask = 0;
    let mut k = 0;
    while k < identity.len() {
        mask |= 1 << identity[k];
        k += 1;
    }
    k = 0;
    while k < metrics.len() {
        mask |= 1 << metrics[k];
        k += 1;
    }
    mask
}

/// The index of a known field name in [`KNOWN`]. Length, first and last
/// byte pick the one candidate (they differ for every known name; a test
/// checks it), then one comparison with a constant of that length, which
/// compiles to loads and compares rather than a call to `memcmp`.
#[inline]
pub(super) fn slot(name: &str) -> Option<usize> {
    let b = name.as_bytes();
    let i = match (b.len(), *b.first()?, *b.last()?) {
        (6, b's', b'r') if name == "sensor" => 0,
        (9, b'd', b'd') if name == "device_id" => 1,
        (10, b'e', b'e') if name == "event_time" => 2,
        (8, b'e', b's') if name == "event_ts" => 3,
        (8, b'm', b'd') if name == "match_id" => 4,
        (8, b'e', b'd') if name == "event_id" => 5,
        (9, b'p', b'd') if name == "player_id" => 6,
        (11, b'p', b'e') if name == "player_name" => 7,
        (11, b'd', b'd') if name == "delivery_id" => 8,
        (7, b'z', b'd') if name == "zone_id" => 9,
        (6, b'm', b'c') if name == "metric" => 10,
        (5, b'v', b'e') if name == "value" => 11,
        (10, b'h', b'e') if name == "heart_rate" => 12,
        (12, b'a', b'n') if name == "acceleration" => 13,
        (12, b'r', b't') if name == "running_dist" => 14,
        (8, b'i', b'x') if name == "impact_x" => 15,
        (8, b'i', b'y') if name == "impact_y" => 16,
        (10, b'b', b'd') if name == "ball_speed" => 17,
        (9, b's', b'e') if name == "spin_rate" => 18,
        (8, b'd', b's') if name == "decibels" => 19,
        (7, b'd', b'y') if name == "density" => 20,
        _ => return None,
    };
    Some(i)
}

/// The known field whose name, and then its closing quote, start `rest`
/// (the text after a key's opening quote): (slot, bytes up to and including
/// the quote). The first byte picks the few candidates; each is one
/// comparison with a constant. `None` leaves the key to the string reader
/// (and to [`slot`], which knows the same names).
#[inline]
pub(super) fn slot_at(rest: &[u8]) -> Option<(usize, usize)> {
    macro_rules! keys {
        ($($i:literal $name:literal),+) => {
            $(
                let quoted = concat!($name, "\"").as_bytes();
                if rest.starts_with(quoted) {
                    return Some(($i, quoted.len()));
                }
            )+
        };
    }
    match rest.first()? {
        b's' => {
            keys!(0 "sensor", 18 "spin_rate");
        }
        b'd' => {
            keys!(1 "device_id", 8 "delivery_id", 19 "decibels", 20 "density");
        }
        b'e' => {
            keys!(2 "event_time", 3 "event_ts", 5 "event_id");
        }
        b'm' => {
            keys!(4 "match_id", 10 "metric");
        }
        b'p' => {
            keys!(6 "player_id", 7 "player_name");
        }
        b'z' => {
            keys!(9 "zone_id");
        }
        b'v' => {
            keys!(11 "value");
        }
        b'h' => {
            keys!(12 "heart_rate");
        }
        b'a' => {
            keys!(13 "acceleration");
        }
        b'r' => {
            keys!(14 "running_dist");
        }
        b'i' => {
            keys!(15 "impact_x", 16 "impact_y");
        }
        b'b' => {
            keys!(17 "ball_speed");
        }
        _ => {}
    }
    None
}

#[cfg(test)]
mod tests {
    use super::{index, metric_slots, slot, slot_at, KNOWN};
    use crate::model::SensorKind;

    #[test]
    fn index_finds_every_known_name() {
        for (i, name) in KNOWN.iter().enumerate() {
            assert_eq!(index(name), i, "{name}");
        }
    }

    #[test]
    fn metric_slots_hold_each_kinds_metric_fields_in_order() {
        for kind in SensorKind::ALL {
            let names: Vec<&str> = metric_slots(kind).iter().map(|&i| KNOWN[i]).collect();
            let want: &[&str] = match kind {
                SensorKind::Generic => &["value"],
                k => k.metrics(),
            };
            assert_eq!(names, want, "{kind}");
        }
    }

    #[test]
    fn every_known_name_has_its_own_slot() {
        for (i, name) in KNOWN.iter().enumerate() {
            assert_eq!(slot(name), Some(i), "{name}");
        }
        assert_eq!(slot("sensors"), None);
        assert_eq!(slot(""), None);
    }

    /// The recogniser of quoted keys knows exactly the names [`slot`]
    /// knows, each only when its closing quote follows.
    #[test]
    fn quoted_known_keys_are_recognised_only_whole() {
        for (i, name) in KNOWN.iter().enumerate() {
            let quoted = format!("{name}\":1}}");
            assert_eq!(
                slot_at(quoted.as_bytes()),
                Some((i, name.len() + 1)),
                "{name}"
            );
            for near in [
                format!("{name}s\":1"),
                name.to_string(),
                format!("{}\"", &name[..name.len() - 1]),
                format!("{name}\\u0022\""),
                name.to_uppercase() + "\"",
            ] {
                assert_eq!(slot_at(near.as_bytes()), None, "{near}");
            }
        }
        assert_eq!(slot_at(b""), None);
        assert_eq!(slot_at(b"\""), None);
    }
}
