//! Field extraction: a top-level field's JSON value as the type the event
//! needs, or a [`Reject`] naming the field and what was wrong with it.

use super::json::JsonValue;
use crate::model::{Micros, Reject, RejectReason, SensorKind};
use crate::util::time::{millis_to_micros, parse_rfc3339};
use std::borrow::Cow;

/// A field's value; `None` when the object does not have it.
pub(super) type Field<'a> = Option<&'a JsonValue<'a>>;

/// The top-level fields of one object, in order.
#[derive(Clone, Copy)]
pub(super) struct Fields<'a>(pub(super) &'a [(Cow<'a, str>, JsonValue<'a>)]);

impl<'a> Fields<'a> {
    /// The field `name`; of a repeated key, the last.
    pub(super) fn get(self, name: &str) -> Field<'a> {
        self.0.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
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
pub(super) fn sensor_field(v: Field<'_>, hint: Option<SensorKind>) -> Result<SensorKind, Reject> {
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

/// A required string field, borrowed from the input when it has no escapes.
pub(super) fn required_str<'a>(v: Field<'a>, name: &str) -> Result<Cow<'a, str>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Err(missing(name)),
        Some(JsonValue::Str(s)) => Ok(Cow::Borrowed(s.as_ref())),
        Some(v) => Err(wrong_type(name, "a string", v)),
    }
}

/// An integer literal (no fraction or exponent).
fn parse_int(text: &str, name: &str) -> Result<i64, Reject> {
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
pub(super) fn optional_int(v: Field<'_>, name: &str) -> Result<Option<i64>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Ok(None),
        Some(JsonValue::Num(t)) => parse_int(t, name).map(Some),
        Some(v) => Err(wrong_type(name, "an integer", v)),
    }
}

/// The event time, from `event_time` or (when that is absent or null) its
/// alias `event_ts`.
pub(super) fn event_time(f: Fields<'_>) -> Result<Micros, Reject> {
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
pub(super) fn metric_value(v: Field<'_>, name: &str) -> Result<Option<f64>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Ok(None),
        Some(JsonValue::Num(t)) => {
            // The grammar is already checked, so parse only fails on nothing.
            let x: f64 = t.parse().unwrap_or(f64::INFINITY);
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
