//! The checked form of a source's device format and map (SPEC §9): what the
//! decoder needs to turn one input of a device's own format into a §1
//! event. Built by [`super::check`] from the `format`/`map` keys of a
//! `[[sources.serial]]` or an MQTT subscription; everything that can be
//! wrong with a map is found there, so decoding only meets bad input.

use crate::model::{Micros, SensorKind};
use crate::util::json_pointer::Pointer;
use crate::util::strftime::TimePattern;
use std::sync::Arc;

/// One source's format and map. Shared by the source (which names it on
/// every input) and the decoder.
#[derive(Debug, Clone)]
pub struct SourceFormat {
    /// The source's name (`name`, default `serial:{path}` / `mqtt:{filter}`).
    pub name: Arc<str>,
    /// How one input is split into named values.
    pub syntax: Syntax,
    /// How the values make an event.
    pub map: FieldMap,
}

/// The device formats besides `pitchside` (§1 JSON, which has no map).
#[derive(Debug, Clone)]
pub enum Syntax {
    /// A JSON document; fields are JSON Pointers.
    Json,
    /// One CSV record per input; fields are column names.
    Csv {
        /// Column names (from `columns`); empty with `header = true` until a
        /// header line is read.
        columns: Vec<String>,
        /// Learn the columns from the header line (`header = true`).
        header: bool,
        /// The delimiter byte (default `,`).
        delimiter: u8,
    },
    /// A regular expression; fields are capture names.
    Regex(regex::Regex),
    /// `key=value` pairs; fields are keys.
    Logfmt,
    /// InfluxDB line protocol; fields are tag or field names, `measurement`
    /// and `time`.
    Influx,
}

impl Syntax {
    /// The format's name as written in the config.
    pub fn name(&self) -> &'static str {
        match self {
            Syntax::Json => "json",
            Syntax::Csv { .. } => "csv",
            Syntax::Regex(_) => "regex",
            Syntax::Logfmt => "logfmt",
            Syntax::Influx => "influx",
        }
    }
}

/// Where each part of the event comes from.
#[derive(Debug, Clone)]
pub struct FieldMap {
    /// The sensor kind: fixed (the map's `sensor = "crowd"` or the source's
    /// `sensor`), or a field of the input.
    pub sensor: SensorFrom,
    /// The device id (required).
    pub device_id: Entry,
    /// The event time (required).
    pub event_time: TimeFrom,
    /// `match_id`, `event_id`, `player_id`, `player_name`, `zone_id`,
    /// `delivery_id`, as mapped.
    pub identity: Vec<(IdentityField, Entry)>,
    /// The metrics, in the order of the config.
    pub metrics: Vec<MetricEntry>,
}

/// The sensor kind of a mapped source's events.
#[derive(Debug, Clone)]
pub enum SensorFrom {
    /// Every event is of this kind.
    Fixed(SensorKind),
    /// The kind is a value of the input; the source's `sensor`, if set,
    /// must agree with it.
    Entry(Entry, Option<SensorKind>),
}

/// One map entry: where a value comes from.
#[derive(Debug, Clone)]
pub enum Entry {
    /// A field of the input.
    Field(FieldRef),
    /// An MQTT topic level, 0-based.
    TopicLevel(usize),
    /// A fixed value.
    Value(Fixed),
}

/// A field named in a map, as the format looks it up.
#[derive(Debug, Clone)]
pub struct FieldRef {
    /// What the format calls a field: `field`, `column`, `capture`, `key`.
    pub noun: &'static str,
    /// As written (a pointer, a column, a capture, a key): for reject details.
    pub text: String,
    /// For `json`: the JSON Pointer.
    pub pointer: Option<Pointer>,
    /// For `csv` with `columns`: the column's index; for `regex`: the
    /// capture group's index.
    pub index: Option<usize>,
}

/// A fixed value of a map entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Fixed {
    /// Text.
    Text(String),
    /// A whole number.
    Int(i64),
    /// A number.
    Num(f64),
}

/// The identity fields a map may set (SPEC §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdentityField {
    /// `match_id`.
    MatchId,
    /// `event_id`.
    EventId,
    /// `player_id` (wearable).
    PlayerId,
    /// `player_name` (wearable).
    PlayerName,
    /// `zone_id` (crowd).
    ZoneId,
    /// `delivery_id` (pitch).
    DeliveryId,
}

impl IdentityField {
    /// Every identity field, with its key name.
    pub const ALL: [(IdentityField, &'static str); 6] = [
        (IdentityField::MatchId, "match_id"),
        (IdentityField::EventId, "event_id"),
        (IdentityField::PlayerId, "player_id"),
        (IdentityField::PlayerName, "player_name"),
        (IdentityField::ZoneId, "zone_id"),
        (IdentityField::DeliveryId, "delivery_id"),
    ];

    /// The key name.
    pub fn name(self) -> &'static str {
        IdentityField::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("", |(_, n)| n)
    }

    /// The kind this field belongs to; `None` for fields of every kind.
    pub fn kind(self) -> Option<SensorKind> {
        match self {
            IdentityField::MatchId | IdentityField::EventId => None,
            IdentityField::PlayerId | IdentityField::PlayerName => Some(SensorKind::Wearable),
            IdentityField::ZoneId => Some(SensorKind::Crowd),
            IdentityField::DeliveryId => Some(SensorKind::Pitch),
        }
    }
}

/// One metric of the map: value = raw × `scale` + `offset`.
#[derive(Debug, Clone)]
pub struct MetricEntry {
    /// The metric's name (a metric of the kind, or any name for `generic`).
    pub name: String,
    /// Where the raw value comes from.
    pub from: Entry,
    /// Multiplier (default 1).
    pub scale: f64,
    /// Added after scaling (default 0).
    pub offset: f64,
}

/// Where the event time comes from.
#[derive(Debug, Clone)]
pub enum TimeFrom {
    /// The time the gateway received the input (`event_time = "arrival"`).
    Arrival,
    /// A value of the input, read in `format`.
    Entry(Entry, TimeFormat),
}

/// How an event time is written.
#[derive(Debug, Clone)]
pub enum TimeFormat {
    /// As §1: RFC 3339 text or integer epoch milliseconds (no `format`).
    Default,
    /// RFC 3339 text.
    Rfc3339,
    /// A number of seconds, milliseconds, microseconds or nanoseconds since
    /// the epoch: the µs in one unit (1_000_000 for seconds, …; 0 means ns).
    Epoch(Micros),
    /// Local time in a pattern, `utc_offset` seconds east of UTC.
    Pattern(TimePattern, i64),
}

/// The µs of one unit of `epoch_ns`: a marker, since a ns is less than a µs.
pub const EPOCH_NS: Micros = 0;
