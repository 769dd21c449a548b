//! The known fields of one object ([`Fields`], read in one pass with the
//! JSON), and extraction: a field's JSON value as the type the event
//! needs, or a [`Reject`] naming the field and what was wrong with it.

use super::json::{self, JsonValue, Key, Number, SyntaxError};
use super::known::{index, own_slots, slot, slot_at, KNOWN};
use crate::model::{Micros, Reject, RejectReason, SensorKind};
use crate::util::time::{millis_to_micros, parse_rfc3339};
use std::borrow::Cow;

/// A field's value; `None` when the object does not have it.
pub(super) type Field<'a> = Option<JsonValue<'a>>;

/// Most numeric fields of one event that [`Fields`] keeps by name, for
/// [`Fields::numbers`]; past it they are read again from the text.
const NUMBERS: usize = 16;

/// A known field's value as [`Fields`] keeps it: a copy of the
/// [`JsonValue`] without its owned strings (a string with escapes, the one
/// value the reader allocates for, is kept aside in [`Fields::escaped`]).
/// So `Fields` is filled and dropped without looking at its slots.
#[derive(Debug, Clone, Copy)]
enum Slot<'a> {
    /// Absent or `null` (the two mean the same).
    Null,
    Bool(bool),
    /// A string without escapes, as in the input.
    Str(&'a str),
    /// A string with escapes: its index in [`Fields::escaped`].
    Escaped(usize),
    Num(Number<'a>),
    NonFinite(&'a str),
    Object(&'a str),
    Array(&'a str),
}

/// The known fields of one object, each in its slot, read in the same pass
/// as the JSON: nothing is collected that an event does not use. A
/// repeated key's last value wins.
pub(super) struct Fields<'a> {
    /// By [`KNOWN`] slot.
    known: [Slot<'a>; KNOWN.len()],
    /// The unescaped strings of [`Slot::Escaped`] (empty, so free, on
    /// nearly every line).
    escaped: Vec<String>,
    /// Bit `i` set: known field `i` held a number.
    numeric: u32,
    /// A field whose name is not in [`KNOWN`] held a number.
    other_numeric: bool,
    /// The names of numeric fields that are not common to every kind, in
    /// order: the candidates for [`Fields::numbers`].
    numbers: heapless::Vec<&'a str, NUMBERS>,
    /// More of them than [`NUMBERS`], or one spelled with escapes: the
    /// names are read again from the text.
    numbers_overflow: bool,
}

/// The slots common to every kind (sensor, device_id, event_time,
/// event_ts, match_id, event_id): never unknown.
const COMMON: u32 = 0b11_1111;

/// A member's slot (`None` for a name not in [`KNOWN`]) and its name.
#[inline]
fn slot_of(key: Key<'_>) -> (Option<usize>, Cow<'_, str>) {
    match key {
        Key::Known(i) => (Some(i), Cow::Borrowed(KNOWN[i])),
        Key::Name(name) => (slot(&name), name),
    }
}

/// Whether a slot is one of [`COMMON`].
fn is_common(slot: Option<usize>) -> bool {
    slot.is_some_and(|i| COMMON & 1 << i != 0)
}

/// A number, finite or not: a candidate for the unknown-field counter.
fn is_number(v: &JsonValue<'_>) -> bool {
    matches!(v, JsonValue::Num(_) | JsonValue::NonFinite(_))
}

impl<'a> Fields<'a> {
    /// No fields yet.
    pub(super) fn new() -> Fields<'a> {
        Fields {
            known: [Slot::Null; KNOWN.len()],
            escaped: Vec::new(),
            numeric: 0,
            other_numeric: false,
            numbers: heapless::Vec::new(),
            numbers_overflow: false,
        }
    }

    /// Reads the fields of `text` in place: `Ok(None)` for an object,
    /// `Ok(Some(type name))` for other JSON.
    #[inline]
    pub(super) fn read(&mut self, text: &'a str) -> Result<Option<&'static str>, SyntaxError> {
        json::for_each_member(text, slot_at, |k, v| self.add(k, v))
    }

    /// One field, in document order.
    #[inline]
    pub(super) fn add(&mut self, key: Key<'a>, v: JsonValue<'a>) {
        let i = match key {
            Key::Known(i) => i,
            Key::Name(name) => match slot(&name) {
                Some(i) => i,
                None => return self.add_other(name, v),
            },
        };
        let slot = self.keep(v);
        let number = matches!(slot, Slot::Num(_) | Slot::NonFinite(_));
        self.known[i] = slot;
        self.numeric |= (number as u32) << i;
        if number && COMMON & 1 << i == 0 {
            self.note_number(Cow::Borrowed(KNOWN[i]));
        }
    }

    /// A field whose name is not in [`KNOWN`]: only counted when numeric.
    fn add_other(&mut self, name: Cow<'a, str>, v: JsonValue<'a>) {
        if is_number(&v) {
            self.other_numeric = true;
            self.note_number(name);
        }
    }

    /// The name of a numeric field that is not common to every kind.
    fn note_number(&mut self, name: Cow<'a, str>) {
        let kept = match name {
            Cow::Borrowed(name) => self.numbers.push(name).is_ok(),
            Cow::Owned(_) => false,
        };
        self.numbers_overflow |= !kept;
    }

    /// A value as its slot keeps it.
    #[inline]
    fn keep(&mut self, v: JsonValue<'a>) -> Slot<'a> {
        match v {
            JsonValue::Null => Slot::Null,
            JsonValue::Bool(b) => Slot::Bool(b),
            JsonValue::Str(Cow::Borrowed(s)) => Slot::Str(s),
            JsonValue::Str(Cow::Owned(s)) => {
                self.escaped.push(s);
                Slot::Escaped(self.escaped.len() - 1)
            }
            JsonValue::Num(t) => Slot::Num(t),
            JsonValue::NonFinite(t) => Slot::NonFinite(t),
            JsonValue::Object(t) => Slot::Object(t),
            JsonValue::Array(t) => Slot::Array(t),
        }
    }

    /// The field in slot `i` of [`KNOWN`]; `None` when absent or null. A
    /// string with escapes is copied (the event keeps it).
    #[inline]
    pub(super) fn at(&self, i: usize) -> Field<'a> {
        Some(match self.known[i] {
            Slot::Null => return None,
            Slot::Bool(b) => JsonValue::Bool(b),
            Slot::Str(s) => JsonValue::Str(Cow::Borrowed(s)),
            Slot::Escaped(k) => JsonValue::Str(Cow::Owned(self.escaped[k].clone())),
            Slot::Num(t) => JsonValue::Num(t),
            Slot::NonFinite(t) => JsonValue::NonFinite(t),
            Slot::Object(t) => JsonValue::Object(t),
            Slot::Array(t) => JsonValue::Array(t),
        })
    }

    /// Whether some numeric field may be one a `sensor` event does not
    /// know (see [`super::unknown`]); `false` means surely none, so the
    /// fields need not be looked at again.
    pub(super) fn may_have_unknown_numbers(&self, sensor: SensorKind) -> bool {
        let own = match sensor {
            SensorKind::Wearable => const { own_slots(SensorKind::Wearable) },
            SensorKind::Pitch => const { own_slots(SensorKind::Pitch) },
            SensorKind::Crowd => const { own_slots(SensorKind::Crowd) },
            SensorKind::Generic => const { own_slots(SensorKind::Generic) },
        };
        let known = COMMON | own;
        self.other_numeric || self.numeric & !known != 0
    }

    /// Calls `each` with the name of every numeric field that is not
    /// common to all kinds, in document order, repeats included. `text` is
    /// the document these fields were read from, read again when the kept
    /// names are not all of them.
    pub(super) fn numbers(&self, text: &str, each: &mut dyn FnMut(&str)) {
        if !self.numbers_overflow {
            self.numbers.iter().for_each(|n| each(n));
            return;
        }
        let _ = json::for_each_member(text, slot_at, |key, v| {
            let (slot, name) = slot_of(key);
            if is_number(&v) && !is_common(slot) {
                each(&name);
            }
        });
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
            let kind = SensorKind::parse(&s).ok_or_else(|| {
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
        (Some(v), _) => Err(wrong_type("sensor", "a string", &v)),
    }
}

/// A required string field, borrowed from the input when it has no
/// escapes (an escaped one is copied: the only case that allocates).
pub(super) fn required_str<'a>(v: Field<'a>, name: &str) -> Result<Cow<'a, str>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Err(missing(name)),
        Some(JsonValue::Str(s)) => Ok(s),
        Some(v) => Err(wrong_type(name, "a string", &v)),
    }
}

/// An integer literal (no fraction or exponent). The plain integer every
/// event has was read with the number; the rest is [`parse_int_slow`].
#[inline]
fn parse_int(n: Number<'_>, name: &str) -> Result<i64, Reject> {
    match n.int() {
        Some(v) => Ok(v),
        None => parse_int_slow(n.text(), name),
    }
}

/// An integer that is long, malformed or not an integer at all.
#[cold]
#[inline(never)]
fn parse_int_slow(text: &str, name: &str) -> Result<i64, Reject> {
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
        Some(v) => Err(wrong_type(name, "an integer", &v)),
    }
}

/// The event time, from `event_time` or (when that is absent or null) its
/// alias `event_ts`.
pub(super) fn event_time(f: &Fields<'_>) -> Result<Micros, Reject> {
    let field = match f.at(const { index("event_time") }) {
        Some(JsonValue::Null) | None => f.at(const { index("event_ts") }).map(|v| (v, "event_ts")),
        Some(v) => Some((v, "event_time")),
    };
    time_value(field)
}

/// The event time: RFC 3339 text or integer epoch milliseconds.
fn time_value(v: Option<(JsonValue<'_>, &str)>) -> Result<Micros, Reject> {
    let Some((v, name)) = v else {
        return Err(missing("event_time"));
    };
    match v {
        JsonValue::Null => Err(missing("event_time")),
        JsonValue::Str(s) => parse_rfc3339(&s).map_err(|why| {
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
        v => Err(wrong_type(name, "RFC 3339 text or epoch milliseconds", &v)),
    }
}

/// An optional metric: a finite number.
pub(super) fn metric_value(v: Field<'_>, name: &str) -> Result<Option<f64>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Ok(None),
        Some(JsonValue::Num(t)) => {
            // The grammar is already checked, so parse only fails on nothing.
            let x: f64 = t
                .float()
                .unwrap_or_else(|| t.text().parse().unwrap_or(f64::INFINITY));
            if x.is_finite() {
                Ok(Some(x))
            } else {
                Err(Reject::new(
                    RejectReason::OutOfRange,
                    format!("{name} {t} is outside the range of a 64-bit float"),
                ))
            }
        }
        Some(v) => Err(wrong_type(name, "a number", &v)),
    }
}

#[cfg(test)]
mod tests;
