//! Decoder: one input line or message → a checked [`Event`] or a [`Reject`]
//! with its SPEC §1 reason code. Pure: the wall clock is an argument.
//!
//! Here: bytes → UTF-8 → JSON object → event. `json`: the reader.
//! `known`: the field names an event is read from. `fields`: the known
//! fields of one object, and typed values out of them. `validate`: the
//! checks that make an event. `unknown`: numeric fields the kind does not
//! know. `formats` and `map`: the device formats of SPEC §9 and their maps
//! to events. `render`: an event as a §1 line again.

mod fields;
/// The line parsers, in [`crate::util::formats`] (the roster file of
/// `[load]` reads CSV too).
pub use crate::util::formats;
pub mod json;
mod known;
pub mod map;
pub mod render;
pub mod unknown;
mod validate;

use crate::config::sources::format::SourceFormat;
use crate::config::MetricRange;
use crate::model::{Event, Micros, RawInput, Reject, RejectReason, SensorKind};
use fields::Fields;
use map::{Context, MapDecoder, Mapped};
use std::sync::Arc;

/// Earliest plausible event time on a live source: 2020-01-01T00:00:00Z.
pub const EARLIEST_PLAUSIBLE: Micros = 1_577_836_800_000_000;

/// What the decoder made of an input; its events borrow from the input.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded<'a> {
    /// A valid event.
    Event(Event<'a>),
    /// Several events from one input: a mapped `generic` source's metrics,
    /// one event each (SPEC §9).
    Events(Vec<Event<'static>>),
    /// Bad input, to be written to `rejects`.
    Reject(Reject),
    /// An empty or whitespace-only line: not an event, not a reject.
    Skip,
}

/// Decoder settings taken from the configuration.
#[derive(Debug)]
pub struct Decoder {
    max_event_bytes: usize,
    ranges: Vec<MetricRange>,
    /// `Some(max_future)` on live sources: reject implausible times against the clock.
    live_max_future: Option<Micros>,
    /// `false` while the wall clock is not synchronised: `max_future` is not
    /// checked then (the 2020-01-01 floor still is).
    clock_trusted: bool,
    /// The mapped sources' decoders (SPEC §9); each is taken out while it
    /// decodes, so that it can use the checks above.
    mappers: Vec<Option<MapDecoder>>,
}

impl Clone for Decoder {
    /// The settings and maps; the mapped decoders' state starts afresh.
    fn clone(&self) -> Decoder {
        let mut d = Decoder::new(
            self.max_event_bytes,
            self.ranges.clone(),
            self.live_max_future,
        );
        d.clock_trusted = self.clock_trusted;
        d.with_formats(
            self.mappers
                .iter()
                .flatten()
                .map(|m| m.format().clone())
                .collect(),
        )
    }
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
            mappers: Vec::new(),
        }
    }

    /// The decoder with the device formats of the mapped sources.
    pub fn with_formats(mut self, formats: Vec<Arc<SourceFormat>>) -> Decoder {
        self.mappers = formats
            .into_iter()
            .map(|f| Some(MapDecoder::new(f)))
            .collect();
        self
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
    pub fn decode<'a>(&mut self, input: &'a RawInput, clock: Micros) -> Decoded<'a> {
        self.decode_with(input, clock, &mut |_, _, _| {})
    }

    /// [`Decoder::decode`], telling `on_unknown` about the accepted event's
    /// numeric fields that its kind does not know.
    pub fn decode_with<'a>(
        &mut self,
        input: &'a RawInput,
        clock: Micros,
        on_unknown: &mut OnUnknown<'_>,
    ) -> Decoded<'a> {
        if let Some(crate::model::FramingError::TooLarge { len }) = input.framing_error {
            return reject(
                RejectReason::TooLarge,
                format!(
                    "{len} bytes, limit is {} (limits.max_event_bytes)",
                    self.max_event_bytes
                ),
            );
        }
        if let Some(name) = &input.mapping {
            let topic = input.source.strip_prefix("mqtt:");
            let cx = Context {
                topic,
                received_at: input.received_at,
                clock,
            };
            return self.decode_mapped(name, &input.payload, &cx);
        }
        self.decode_bytes_with(&input.payload, input.sensor_hint, clock, on_unknown)
    }

    /// Decodes `bytes` in the device format of the source named `name`
    /// (SPEC §9).
    pub fn decode_mapped(
        &mut self,
        name: &str,
        bytes: &[u8],
        cx: &Context<'_>,
    ) -> Decoded<'static> {
        let text = match self.text(bytes) {
            Ok(Some(t)) => t,
            Ok(None) => return Decoded::Skip,
            Err(r) => return Decoded::Reject(r),
        };
        let Some(at) = self
            .mappers
            .iter()
            .position(|m| m.as_ref().is_some_and(|m| m.name() == name))
        else {
            return reject(
                RejectReason::Unmapped,
                format!(
                    "source {name:?} is not in the config (any more); its inputs cannot be decoded"
                ),
            );
        };
        let Some(mut m) = self.mappers[at].take() else {
            return Decoded::Skip;
        };
        let out = match m.decode(self, text, cx) {
            Ok(Mapped::Header) => Decoded::Skip,
            Ok(Mapped::Events) if m.events.len() == 1 => {
                m.events.pop().map_or(Decoded::Skip, Decoded::Event)
            }
            Ok(Mapped::Events) => Decoded::Events(m.events.drain(..).collect()),
            Err(r) => Decoded::Reject(r),
        };
        self.mappers[at] = Some(m);
        out
    }

    /// The input as text: `None` for a blank line, a reject when too large
    /// or not UTF-8.
    fn text<'a>(&self, bytes: &'a [u8]) -> Result<Option<&'a str>, Reject> {
        if bytes.len() > self.max_event_bytes {
            return Err(Reject::new(
                RejectReason::TooLarge,
                format!(
                    "{} bytes, limit is {} (limits.max_event_bytes)",
                    bytes.len(),
                    self.max_event_bytes
                ),
            ));
        }
        // simdutf8: the same answer and error position as std's check, with SIMD.
        match simdutf8::compat::from_utf8(bytes) {
            Ok(t) if is_blank(t) => Ok(None),
            Ok(t) => Ok(Some(t)),
            Err(e) => Err(Reject::new(
                RejectReason::InvalidUtf8,
                format!("invalid UTF-8 at byte {}", e.valid_up_to()),
            )),
        }
    }

    /// Decodes raw bytes with an optional source kind.
    pub fn decode_bytes<'a>(
        &self,
        bytes: &'a [u8],
        hint: Option<SensorKind>,
        clock: Micros,
    ) -> Decoded<'a> {
        self.decode_bytes_with(bytes, hint, clock, &mut |_, _, _| {})
    }

    /// [`Decoder::decode_bytes`], telling `on_unknown` about unknown numeric fields.
    pub fn decode_bytes_with<'a>(
        &self,
        bytes: &'a [u8],
        hint: Option<SensorKind>,
        clock: Micros,
        on_unknown: &mut OnUnknown<'_>,
    ) -> Decoded<'a> {
        let text = match self.text(bytes) {
            Ok(Some(t)) => t,
            Ok(None) => return Decoded::Skip,
            Err(r) => return Decoded::Reject(r),
        };
        self.object(text, hint, clock, on_unknown)
    }

    /// §1 JSON text → an event, its fields read in one pass.
    fn object<'a>(
        &self,
        text: &'a str,
        hint: Option<SensorKind>,
        clock: Micros,
        on_unknown: &mut OnUnknown<'_>,
    ) -> Decoded<'a> {
        let mut known = Fields::new();
        match known.read(text) {
            Ok(None) => {}
            Ok(Some(t)) => {
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
        }
        match self.event(&known, hint, clock) {
            Ok(e) => {
                if known.may_have_unknown_numbers(e.sensor) {
                    // No allocation here: names are compared, not copied.
                    known.numbers(text, &mut |name| {
                        if !unknown::is_known_field(e.sensor, name) {
                            on_unknown(e.sensor, &e.device_id, name);
                        }
                    });
                }
                Decoded::Event(e)
            }
            Err(r) => Decoded::Reject(r),
        }
    }
}

/// Whether `t` is empty or white space only (Unicode's, as `str::trim`
/// sees it). A line that starts with a visible ASCII character, as every
/// event does, is answered from its first byte.
#[inline]
fn is_blank(t: &str) -> bool {
    match t.as_bytes().first() {
        Some(&b) if b.is_ascii() && !b.is_ascii_whitespace() => false,
        _ => t.trim().is_empty(),
    }
}

fn reject(reason: RejectReason, detail: String) -> Decoded<'static> {
    Decoded::Reject(Reject { reason, detail })
}

#[cfg(test)]
mod tests;
