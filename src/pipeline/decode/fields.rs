//! Field extraction: a top-level field's JSON value as the type the event
//! needs, or a [`Reject`] naming the field and what was wrong with it.

use super::json::JsonValue;
use super::numbers;
use crate::model::{Micros, Reject, RejectReason, SensorKind};
use crate::util::time::{millis_to_micros, parse_rfc3339};
use std::borrow::Cow;

/// A field's value; `None` when the object does not have it.
pub(super) type Field<'f, 'a> = Option<&'f JsonValue<'a>>;

/// The field names an event is read from: common, identity and metric
/// fields of every kind. [`Fields`] finds each in one pass over the object.
const KNOWN: [&str; 21] = [
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

/// The index of a known field name in [`KNOWN`]. A `match`, so that each
/// comparison is with a constant of known length (a load and compare, not
/// a call to `memcmp`).
#[inline]
fn slot(name: &str) -> Option<usize> {
    Some(match name {
        "sensor" => 0,
        "device_id" => 1,
        "event_time" => 2,
        "event_ts" => 3,
        "match_id" => 4,
        "event_id" => 5,
        "player_id" => 6,
        "player_name" => 7,
        "delivery_id" => 8,
        "zone_id" => 9,
        "metric" => 10,
        "value" => 11,
        "heart_rate" => 12,
        "acceleration" => 13,
        "running_dist" => 14,
        "impact_x" => 15,
        "impact_y" => 16,
        "ball_speed" => 17,
        "spin_rate" => 18,
        "decibels" => 19,
        "density" => 20,
        _ => return None,
    })
}

/// The top-level fields of one object, in order, with the known ones
/// indexed: each is looked up once per object, not once per question.
#[derive(Clone, Copy)]
pub(super) struct Fields<'f, 'a> {
    known: [Field<'f, 'a>; KNOWN.len()],
    /// Bit `i` set: known field `i` holds a number.
    numeric: u32,
    /// A field whose name is not in [`KNOWN`] holds a number.
    other_numeric: bool,
}

impl<'f, 'a> Fields<'f, 'a> {
    /// Indexes `all`; of a repeated key, the last wins.
    pub(super) fn new(all: &'f [(Cow<'a, str>, JsonValue<'a>)]) -> Fields<'f, 'a> {
        let mut f = Fields {
            known: [None; KNOWN.len()],
            numeric: 0,
            other_numeric: false,
        };
        for (k, v) in all {
            let number = matches!(v, JsonValue::Num(_) | JsonValue::NonFinite(_));
            match slot(k) {
                Some(i) => {
                    f.known[i] = Some(v);
                    f.numeric |= (number as u32) << i;
                }
                None => f.other_numeric |= number,
            }
        }
        f
    }

    /// The field `name` (one of the names an event is read from).
    pub(super) fn get(&self, name: &str) -> Field<'f, 'a> {
        debug_assert!(slot(name).is_some(), "{name} is not a known field");
        slot(name).and_then(|i| self.known[i])
    }

    /// Whether some numeric field may be one a `sensor` event does not
    /// know (see [`super::unknown`]); `false` means surely none, so the
    /// fields need not be looked at again.
    pub(super) fn may_have_unknown_numbers(&self, sensor: SensorKind) -> bool {
        let own: &[usize] = match sensor {
            SensorKind::Wearable => &[6, 7, 12, 13, 14],
            SensorKind::Pitch => &[8, 15, 16, 17, 18],
            SensorKind::Crowd => &[9, 19, 20],
            SensorKind::Generic => &[10, 11],
        };
        let known = own.iter().fold(0b11_1111u32, |m, &i| m | 1 << i);
        self.other_numeric || self.numeric & !known != 0
    }
}

/// A required field is absent or null.
pub(super) fn missing(name: &str) -> Reject {
    Reject::new(RejectReason::MissingField, format!("{name} is required"))
}

/// A field of the wrong JSON type (`non_finite` for NaN and infinities).
pub(super) fn wrong_type(name: &str, expected: &str, v: &JsonValue<'_>) -> Reject {
    match v {
        JsonValue::NonFinite(t) => Reject::new(
            RejectReason::NonFinite,
            format!("{name} is {t}; only finite numbers are accepted"),
        ),
        _ => Reject::new(
            RejectReason::InvalidField,
            format!("{name} must be {expected}, not {}", v.type_name()),
        ),
    }
}

/// The sensor kind: the field, else the source's kind; the two must agree.
pub(super) fn sensor_field(
    v: Field<'_, '_>,
    hint: Option<SensorKind>,
) -> Result<SensorKind, Reject> {
    match (v, hint) {
        (None | Some(JsonValue::Null), Some(h)) => Ok(h),
        (None | Some(JsonValue::Null), None) => Err(Reject::new(
            RejectReason::MissingField,
            "sensor is required (the source has no sensor kind configured)",
        )),
        (Some(JsonValue::Str(s)), hint) => {
            let kind = SensorKind::parse(s).ok_or_else(|| {
                Reject::new(
                    RejectReason::UnknownSensor,
                    format!("sensor {s:?} is not one of wearable, pitch, crowd, generic"),
                )
            })?;
            match hint {
                Some(h) if h != kind => Err(Reject::new(
                    RejectReason::SensorMismatch,
                    format!("sensor {kind} differs from the source's kind {h}"),
                )),
                _ => Ok(kind),
            }
        }
        (Some(v), _) => Err(wrong_type("sensor", "a string", v)),
    }
}

/// A required string field, borrowed from the input when it has no
/// escapes (an escaped one is copied: the only case that allocates).
pub(super) fn required_str<'a>(v: Field<'_, 'a>, name: &str) -> Result<Cow<'a, str>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Err(missing(name)),
        Some(JsonValue::Str(s)) => Ok(reborrow(s)),
        Some(v) => Err(wrong_type(name, "a string", v)),
    }
}

/// A string value as a `Cow` of the input's lifetime.
pub(super) fn reborrow<'a>(s: &Cow<'a, str>) -> Cow<'a, str> {
    match s {
        Cow::Borrowed(b) => Cow::Borrowed(b),
        Cow::Owned(o) => Cow::Owned(o.clone()),
    }
}

/// An integer literal (no fraction or exponent).
fn parse_int(text: &str, name: &str) -> Result<i64, Reject> {
    if let Some(v) = numbers::int(text) {
        return Ok(v);
    }
    if text.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) {
        return Err(Reject::new(
            RejectReason::InvalidField,
            format!("{name} must be an integer, not {text}"),
        ));
    }
    text.parse::<i64>().map_err(|_| {
        Reject::new(
            RejectReason::OutOfRange,
            format!("{name} {text} does not fit in a 64-bit integer"),
        )
    })
}

/// An optional integer field.
pub(super) fn optional_int(v: Field<'_, '_>, name: &str) -> Result<Option<i64>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Ok(None),
        Some(JsonValue::Num(t)) => parse_int(t, name).map(Some),
        Some(v) => Err(wrong_type(name, "an integer", v)),
    }
}

/// The event time, from `event_time` or (when that is absent or null) its
/// alias `event_ts`.
pub(super) fn event_time(f: &Fields<'_, '_>) -> Result<Micros, Reject> {
    let field = match f.get("event_time") {
        Some(JsonValue::Null) | None => f.get("event_ts").map(|v| (v, "event_ts")),
        Some(v) => Some((v, "event_time")),
    };
    time_value(field)
}

/// The event time: RFC 3339 text or integer epoch milliseconds.
fn time_value(v: Option<(&JsonValue<'_>, &str)>) -> Result<Micros, Reject> {
    let Some((v, name)) = v else {
        return Err(missing("event_time"));
    };
    match v {
        JsonValue::Null => Err(missing("event_time")),
        JsonValue::Str(s) => parse_rfc3339(s).map_err(|why| {
            Reject::new(
                RejectReason::InvalidTime,
                format!("{name} {s:?} is not RFC 3339: {why}"),
            )
        }),
        JsonValue::Num(t) => {
            let ms = parse_int(t, name).map_err(|_| {
                Reject::new(
                    RejectReason::InvalidTime,
                    format!("{name} {t} must be RFC 3339 text or integer epoch milliseconds"),
                )
            })?;
            millis_to_micros(ms).ok_or_else(|| {
                Reject::new(
                    RejectReason::InvalidTime,
                    format!("{name} {t} ms is out of range"),
                )
            })
        }
        v => Err(wrong_type(name, "RFC 3339 text or epoch milliseconds", v)),
    }
}

/// An optional metric: a finite number.
pub(super) fn metric_value(v: Field<'_, '_>, name: &str) -> Result<Option<f64>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Ok(None),
        Some(JsonValue::Num(t)) => {
            // The grammar is already checked, so parse only fails on nothing.
            let x: f64 = numbers::float(t).unwrap_or_else(|| t.parse().unwrap_or(f64::INFINITY));
            if x.is_finite() {
                Ok(Some(x))
            } else {
                Err(Reject::new(
                    RejectReason::OutOfRange,
                    format!("{name} {t} is outside the range of a 64-bit float"),
                ))
            }
        }
        Some(v) => Err(wrong_type(name, "a number", v)),
    }
}

#[cfg(test)]
mod tests {
    use super::{slot, KNOWN};

    #[test]
    fn the_slots_each_kind_owns_are_its_known_fields() {
        use crate::model::SensorKind;
        use crate::pipeline::decode::unknown::is_known_field;
        use std::borrow::Cow;
        for kind in SensorKind::ALL {
            for (i, name) in KNOWN.iter().enumerate() {
                let doc = [(Cow::Borrowed(*name), super::JsonValue::Num("1"))];
                let f = super::Fields::new(&doc);
                assert_eq!(
                    f.may_have_unknown_numbers(kind),
                    !is_known_field(kind, name),
                    "{kind} {name} (slot {i})"
                );
            }
            let doc = [(Cow::Borrowed("accel"), super::JsonValue::Num("1"))];
            assert!(super::Fields::new(&doc).may_have_unknown_numbers(kind));
            let text = [(Cow::Borrowed("accel"), super::JsonValue::Str("x".into()))];
            assert!(!super::Fields::new(&text).may_have_unknown_numbers(kind));
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
}
