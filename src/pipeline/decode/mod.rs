//! Decoder: one input line or message → a checked [`Event`] or a [`Reject`]
//! with its SPEC §1 reason code. Pure: the wall clock is an argument.
//!
//! Here: bytes → UTF-8 → JSON object → event. `json`: the reader.
//! `fields`: typed values out of fields. `validate`: the checks that make an
//! event. `unknown`: numeric fields the kind does not know.

mod fields;
pub mod formats;
pub mod json;
pub mod unknown;
mod validate;

use crate::config::MetricRange;
use crate::model::{Event, Micros, RawInput, Reject, RejectReason, SensorKind};
use fields::Fields;
use json::{Document, JsonValue};

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
        match self.event(Fields(&fields), hint, clock) {
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
}

fn reject(reason: RejectReason, detail: String) -> Decoded {
    Decoded::Reject(Reject { reason, detail })
}

#[cfg(test)]
mod tests;
