//! Device formats (SPEC §9): one input in a device's own format (JSON of
//! its own shape, CSV, a line a regular expression reads, logfmt, influx
//! line protocol) → the §1 events its source's map describes.
//!
//! `record`: the input parsed, and a field looked up in it. `convert`: a
//! value as text, number or time. `build`: the events, with §1's checks.

mod build;
mod convert;
mod record;

pub use build::Context;

use super::formats::{csv, influx, logfmt, FormatError};
use super::json;
use crate::config::sources::format::{Entry, FieldMap, SourceFormat, Syntax};
use crate::model::{Event, Reject, RejectReason};
use record::Record;
use std::borrow::Cow;
use std::sync::Arc;

/// One mapped source's decoder: its format and map, and the buffers and
/// state reused from input to input (the CSV header once read).
#[derive(Debug)]
pub struct MapDecoder {
    format: Arc<SourceFormat>,
    /// Capture locations reused by every match (`regex`).
    locations: Option<regex::CaptureLocations>,
    /// The columns of the last header line (`csv` with `header = true`).
    header: Option<Vec<String>>,
    cells: Vec<Cow<'static, str>>,
    pairs: Vec<(Cow<'static, str>, Cow<'static, str>)>,
    /// The events of the input being decoded.
    pub(super) events: Vec<Event<'static>>,
}

/// What a mapped input was.
pub(super) enum Mapped {
    /// Events, in [`MapDecoder::events`].
    Events,
    /// A CSV header line: the columns are learned, nothing else.
    Header,
}

impl MapDecoder {
    /// A decoder for `format`.
    pub fn new(format: Arc<SourceFormat>) -> MapDecoder {
        let locations = match &format.syntax {
            Syntax::Regex(re) => Some(re.capture_locations()),
            _ => None,
        };
        MapDecoder {
            format,
            locations,
            header: None,
            cells: Vec::new(),
            pairs: Vec::new(),
            events: Vec::with_capacity(1),
        }
    }

    /// The source's name.
    pub fn name(&self) -> &str {
        &self.format.name
    }

    /// The source's format and map.
    pub fn format(&self) -> &Arc<SourceFormat> {
        &self.format
    }

    /// Decodes `text` into [`MapDecoder::events`] (cleared first).
    pub(super) fn decode(
        &mut self,
        checks: &super::Decoder,
        text: &str,
        cx: &Context<'_>,
    ) -> Result<Mapped, Reject> {
        self.events.clear();
        let format = Arc::clone(&self.format);
        let map = &format.map;
        match &format.syntax {
            Syntax::Json => self.decode_json(checks, map, text, cx)?,
            Syntax::Csv {
                delimiter, header, ..
            } => return self.decode_csv(checks, map, (*delimiter, *header), text, cx),
            Syntax::Regex(re) => self.decode_regex(checks, map, re, text, cx)?,
            Syntax::Logfmt => self.decode_logfmt(checks, map, text, cx)?,
            Syntax::Influx => {
                let point = influx::parse(text).map_err(|e| not_format(&format.syntax, e))?;
                checks.mapped_events(map, &Record::Influx(point), cx, &mut self.events)?;
            }
        }
        Ok(Mapped::Events)
    }

    /// A JSON document of the device's own shape.
    fn decode_json(
        &mut self,
        checks: &super::Decoder,
        map: &FieldMap,
        text: &str,
        cx: &Context<'_>,
    ) -> Result<(), Reject> {
        let root = json::parse_root(text).map_err(|e| {
            Reject::new(
                RejectReason::InvalidJson,
                format!("at byte {}: expected {}", e.at, e.what),
            )
        })?;
        checks.mapped_events(map, &Record::Json(root), cx, &mut self.events)
    }

    /// A CSV line: the header (`header = true`), whose columns are learned, or
    /// data, read by the columns configured or learned. The cells' buffer is
    /// kept for the next line.
    fn decode_csv(
        &mut self,
        checks: &super::Decoder,
        map: &FieldMap,
        (delimiter, header): (u8, bool),
        text: &str,
        cx: &Context<'_>,
    ) -> Result<Mapped, Reject> {
        let mut cells = reuse(std::mem::take(&mut self.cells));
        let r =
            csv::split(text, delimiter, &mut cells).map_err(|e| not_format(&self.format.syntax, e));
        let r = r.and_then(|()| {
            if header && self.is_header(&cells) {
                self.header = Some(cells.iter().map(|c| c.to_string()).collect());
                return Ok(Mapped::Header);
            }
            if header && self.header.is_none() {
                return Err(Reject::new(
                    RejectReason::Unmapped,
                    "no CSV header line read yet (header = true); the device sends it at start, or set columns".to_string(),
                ));
            }
            let names = self.header.as_deref();
            checks.mapped_events(map, &Record::Csv { cells: &cells, names }, cx, &mut self.events)?;
            Ok(Mapped::Events)
        });
        self.cells = reuse(cells);
        r
    }

    /// A line the source's regular expression reads, its captures the fields.
    fn decode_regex(
        &mut self,
        checks: &super::Decoder,
        map: &FieldMap,
        re: &regex::Regex,
        text: &str,
        cx: &Context<'_>,
    ) -> Result<(), Reject> {
        let Some(locations) = self.locations.as_mut() else {
            return Err(Reject::new(
                RejectReason::Unmapped,
                "no capture locations".to_string(),
            ));
        };
        if re.captures_read(locations, text).is_none() {
            return Err(Reject::new(
                RejectReason::Unmapped,
                format!("the pattern did not match ({})", shorten(re.as_str())),
            ));
        }
        let record = Record::Regex { text, locations };
        checks.mapped_events(map, &record, cx, &mut self.events)
    }

    /// A logfmt line (`key=value …`). The pairs' buffer is kept for the next.
    fn decode_logfmt(
        &mut self,
        checks: &super::Decoder,
        map: &FieldMap,
        text: &str,
        cx: &Context<'_>,
    ) -> Result<(), Reject> {
        let mut pairs = reuse_pairs(std::mem::take(&mut self.pairs));
        let r = logfmt::parse(text, &mut pairs)
            .map_err(|e| not_format(&self.format.syntax, e))
            .and_then(|()| {
                checks.mapped_events(map, &Record::Logfmt(&pairs), cx, &mut self.events)
            });
        self.pairs = reuse_pairs(pairs);
        r
    }

    /// A CSV line is the header when every column the map names is one of
    /// its cells (a data line that does that would be a strange device).
    fn is_header(&self, cells: &[Cow<'_, str>]) -> bool {
        let map = &self.format.map;
        let mut fields = map
            .identity
            .iter()
            .map(|(_, e)| e)
            .chain(map.metrics.iter().map(|m| &m.from))
            .chain(std::iter::once(&map.device_id))
            .filter_map(|e| match e {
                Entry::Field(f) => Some(f.text.as_str()),
                _ => None,
            })
            .peekable();
        fields.peek().is_some() && fields.all(|f| cells.iter().any(|c| c.trim() == f))
    }
}

/// A cleared vector's allocation, for borrows of another lifetime (the
/// in-place `collect` reuses it: same element layout, nothing to map).
fn reuse<'b>(mut v: Vec<Cow<'_, str>>) -> Vec<Cow<'b, str>> {
    v.clear();
    v.into_iter().map(|_| Cow::Borrowed("")).collect()
}

fn reuse_pairs<'b>(mut v: Vec<(Cow<'_, str>, Cow<'_, str>)>) -> Vec<(Cow<'b, str>, Cow<'b, str>)> {
    v.clear();
    v.into_iter()
        .map(|_| (Cow::Borrowed(""), Cow::Borrowed("")))
        .collect()
}

/// The reject of an input that is not of its source's syntax.
fn not_format(syntax: &Syntax, e: FormatError) -> Reject {
    Reject::new(
        RejectReason::Unmapped,
        format!("not {}: {e}", syntax.name()),
    )
}

/// At most 60 characters of a pattern, for details.
fn shorten(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests;
