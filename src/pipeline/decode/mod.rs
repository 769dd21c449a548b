//! Decoder: one input line or message → a checked [`Event`] or a [`Reject`]
//! with its SPEC §1 reason code. Pure: the wall clock is an argument.

pub mod json;
pub mod unknown;

use crate::config::MetricRange;
use crate::model::{Event, Identity, Micros, RawInput, Reject, RejectReason, SensorKind};
use crate::util::time::{millis_to_micros, parse_rfc3339};
use json::{Document, JsonValue};
use std::borrow::Cow;

/// Earliest plausible event time on a live source: 2020-01-01T00:00:00Z.
pub const EARLIEST_PLAUSIBLE: Micros = 1_577_836_800_000_000;

/// What the decoder made of an input.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// A valid event.
    Event(Event),
    /// Bad input, to be written to `rejects`.
    Reject(Reject),
    /// An empty or whitespace-only line: not an event, not a reject.
    Skip,
}

/// Decoder settings taken from the configuration.
#[derive(Debug, Clone)]
pub struct Decoder {
    max_event_bytes: usize,
    ranges: Vec<MetricRange>,
    /// `Some(max_future)` on live sources: reject implausible times against the clock.
    live_max_future: Option<Micros>,
    /// `false` while the wall clock is not synchronised: `max_future` is not
    /// checked then (the 2020-01-01 floor still is).
    clock_trusted: bool,
}

/// Called for every numeric field of an accepted event that its kind does
/// not know: (sensor, device_id, field name).
pub type OnUnknown<'a> = dyn FnMut(SensorKind, &str, &str) + 'a;

type Field<'a> = Option<&'a JsonValue<'a>>;

impl Decoder {
    /// A decoder. `live_max_future` is `Some` outside `replay`.
    pub fn new(
        max_event_bytes: usize,
        ranges: Vec<MetricRange>,
        live_max_future: Option<Micros>,
    ) -> Decoder {
        Decoder {
            max_event_bytes,
            ranges,
            live_max_future,
            clock_trusted: true,
        }
    }

    /// Replaces the per-metric ranges (config reload).
    pub fn set_ranges(&mut self, ranges: Vec<MetricRange>) {
        self.ranges = ranges;
    }

    /// Whether the wall clock may judge event times (`limits.max_future`).
    pub fn set_clock_trusted(&mut self, trusted: bool) {
        self.clock_trusted = trusted;
    }

    /// Decodes one input. `clock` is the wall clock (used on live sources only).
    pub fn decode(&self, input: &RawInput, clock: Micros) -> Decoded {
        self.decode_with(input, clock, &mut |_, _, _| {})
    }

    /// [`Decoder::decode`], telling `on_unknown` about the accepted event's
    /// numeric fields that its kind does not know.
    pub fn decode_with(
        &self,
        input: &RawInput,
        clock: Micros,
        on_unknown: &mut OnUnknown<'_>,
    ) -> Decoded {
        if let Some(crate::model::FramingError::TooLarge { len }) = input.framing_error {
            return reject(
                RejectReason::TooLarge,
                format!(
                    "{len} bytes, limit is {} (limits.max_event_bytes)",
                    self.max_event_bytes
                ),
            );
        }
        self.decode_bytes_with(&input.payload, input.sensor_hint, clock, on_unknown)
    }

    /// Decodes raw bytes with an optional source kind.
    pub fn decode_bytes(&self, bytes: &[u8], hint: Option<SensorKind>, clock: Micros) -> Decoded {
        self.decode_bytes_with(bytes, hint, clock, &mut |_, _, _| {})
    }

    /// [`Decoder::decode_bytes`], telling `on_unknown` about unknown numeric fields.
    pub fn decode_bytes_with(
        &self,
        bytes: &[u8],
        hint: Option<SensorKind>,
        clock: Micros,
        on_unknown: &mut OnUnknown<'_>,
    ) -> Decoded {
        if bytes.len() > self.max_event_bytes {
            return reject(
                RejectReason::TooLarge,
                format!(
                    "{} bytes, limit is {} (limits.max_event_bytes)",
                    bytes.len(),
                    self.max_event_bytes
                ),
            );
        }
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t,
            Err(e) => {
                return reject(
                    RejectReason::InvalidUtf8,
                    format!("invalid UTF-8 at byte {}", e.valid_up_to()),
                )
            }
        };
        if text.trim().is_empty() {
            return Decoded::Skip;
        }
        let fields = match json::parse(text) {
            Ok(Document::Object(f)) => f,
            Ok(Document::NotObject(t)) => {
                return reject(
                    RejectReason::NotAnObject,
                    format!("top level is {t}, not an object"),
                )
            }
            Err(e) => {
                return reject(
                    RejectReason::InvalidJson,
                    format!("at byte {}: expected {}", e.at, e.what),
                )
            }
        };
        match self.event(&fields, hint, clock) {
            Ok(e) => {
                // No allocation here: names are compared, not copied.
                for (name, v) in &fields {
                    if matches!(v, JsonValue::Num(_) | JsonValue::NonFinite(_))
                        && !unknown::is_known_field(e.sensor, name)
                    {
                        on_unknown(e.sensor, &e.device_id, name);
                    }
                }
                Decoded::Event(e)
            }
            Err(r) => Decoded::Reject(r),
        }
    }

    fn event(
        &self,
        fields: &[(Cow<'_, str>, JsonValue<'_>)],
        hint: Option<SensorKind>,
        clock: Micros,
    ) -> Result<Event, Reject> {
        let get = |name: &str| -> Field<'_> {
            fields.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v)
        };
        let sensor = sensor_field(get("sensor"), hint)?;
        let device_id = required_str(get("device_id"), "device_id")?;
        check_id(&device_id, "device_id")?;
        let time_field = match get("event_time") {
            Some(JsonValue::Null) | None => get("event_ts").map(|v| (v, "event_ts")),
            Some(v) => Some((v, "event_time")),
        };
        let event_time = time_value(time_field)?;
        if let Some(max_future) = self.live_max_future {
            if self.clock_trusted && event_time > clock.saturating_add(max_future) {
                return Err(Reject::new(
                    RejectReason::ImplausibleTime,
                    format!(
                        "event time {} is more than limits.max_future ahead of the gateway clock {}",
                        crate::util::time::format_rfc3339(event_time),
                        crate::util::time::format_rfc3339(clock)
                    ),
                ));
            }
            if event_time < EARLIEST_PLAUSIBLE {
                return Err(Reject::new(
                    RejectReason::ImplausibleTime,
                    format!(
                        "event time {} is before 2020-01-01 (is the sensor's clock set?)",
                        crate::util::time::format_rfc3339(event_time)
                    ),
                ));
            }
        }
        let match_id = optional_int(get("match_id"), "match_id")?.unwrap_or(0);
        if match_id < 0 {
            return Err(Reject::new(
                RejectReason::OutOfRange,
                format!("match_id {match_id} must be >= 0"),
            ));
        }
        let event_id = optional_int(get("event_id"), "event_id")?;
        let identity = match sensor {
            SensorKind::Wearable => {
                let player_id = optional_int(get("player_id"), "player_id")?
                    .ok_or_else(|| missing("player_id"))?;
                let player_name = match get("player_name") {
                    None | Some(JsonValue::Null) => None,
                    Some(JsonValue::Str(s)) if s.chars().count() <= 64 => Some(s.to_string()),
                    Some(JsonValue::Str(_)) => {
                        return Err(Reject::new(
                            RejectReason::InvalidField,
                            "player_name is longer than 64 characters",
                        ))
                    }
                    Some(v) => return Err(wrong_type("player_name", "a string", v)),
                };
                Identity::Wearable {
                    player_id,
                    player_name,
                }
            }
            SensorKind::Pitch => Identity::Pitch {
                delivery_id: optional_int(get("delivery_id"), "delivery_id")?,
            },
            SensorKind::Crowd => {
                let zone_id = required_str(get("zone_id"), "zone_id")?;
                check_id(&zone_id, "zone_id")?;
                Identity::Crowd {
                    zone_id: zone_id.into_owned(),
                }
            }
            SensorKind::Generic => {
                let metric = required_str(get("metric"), "metric")?;
                let ok = (1..=64).contains(&metric.len())
                    && metric
                        .bytes()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
                if !ok {
                    return Err(Reject::new(
                        RejectReason::InvalidField,
                        "metric must be 1-64 characters of A-Z, a-z, 0-9, '_', '.', '-'",
                    ));
                }
                Identity::Generic {
                    metric: metric.into_owned(),
                }
            }
        };
        let names: &[&str] = match sensor {
            SensorKind::Generic => &["value"],
            k => k.metrics(),
        };
        let mut values = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let Some(x) = metric_value(get(name), name)? else {
                continue;
            };
            let metric_name = match &identity {
                Identity::Generic { metric } => metric.as_str(),
                _ => name,
            };
            if let Some(r) = self
                .ranges
                .iter()
                .find(|r| r.sensor == sensor && r.metric == metric_name)
            {
                if x < r.min || x > r.max {
                    return Err(Reject::new(
                        RejectReason::OutOfRange,
                        format!(
                            "{name} {x} is outside the configured range [{}, {}] (limits.range)",
                            r.min, r.max
                        ),
                    ));
                }
            }
            values.push((i as u8, x));
        }
        if values.is_empty() {
            return Err(Reject::new(
                RejectReason::NoMetrics,
                format!(
                    "no metric field; a {sensor} event needs one of {}",
                    names.join(", ")
                ),
            ));
        }
        Ok(Event {
            sensor,
            device_id: device_id.into_owned(),
            event_time,
            match_id,
            event_id,
            identity,
            values,
        })
    }
}

fn reject(reason: RejectReason, detail: String) -> Decoded {
    Decoded::Reject(Reject { reason, detail })
}

fn missing(name: &str) -> Reject {
    Reject::new(RejectReason::MissingField, format!("{name} is required"))
}

fn wrong_type(name: &str, expected: &str, v: &JsonValue<'_>) -> Reject {
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

fn sensor_field(v: Field<'_>, hint: Option<SensorKind>) -> Result<SensorKind, Reject> {
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

fn required_str<'a>(v: Field<'a>, name: &str) -> Result<Cow<'a, str>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Err(missing(name)),
        Some(JsonValue::Str(s)) => Ok(Cow::Borrowed(s.as_ref())),
        Some(v) => Err(wrong_type(name, "a string", v)),
    }
}

fn check_id(s: &str, name: &str) -> Result<(), Reject> {
    let ok = (1..=64).contains(&s.len())
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Reject::new(
            RejectReason::InvalidField,
            format!("{name} must be 1-64 characters of A-Z, a-z, 0-9, '.', '_', ':', '-'"),
        ))
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

fn optional_int(v: Field<'_>, name: &str) -> Result<Option<i64>, Reject> {
    match v {
        None | Some(JsonValue::Null) => Ok(None),
        Some(JsonValue::Num(t)) => parse_int(t, name).map(Some),
        Some(v) => Err(wrong_type(name, "an integer", v)),
    }
}

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

fn metric_value(v: Field<'_>, name: &str) -> Result<Option<f64>, Reject> {
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

#[cfg(test)]
mod tests;
