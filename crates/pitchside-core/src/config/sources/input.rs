//! The keys every input source shares (a `[[sources.serial]]` and an MQTT
//! subscription): its name, its device format and the map from the
//! device's fields to a §1 event (SPEC §9). Checked by [`super::check`].

use crate::config::schema::keys::{k, Key, Ty};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The name, format and map of one source, as written.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct InputSection {
    /// The source's name, unique in the config (default `serial:{path}` or
    /// `mqtt:{topic filter}`); `replay --source` and `tap --source` use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `pitchside` (default: SPEC §1 JSON), `json`, `csv`, `regex`, `logfmt`
    /// or `influx`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// `regex`: one regular expression with named captures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<String>,
    /// `csv`: the column names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<String>>,
    /// `csv`: read the column names from the header line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header: Option<bool>,
    /// `csv`: one ASCII character (default `","`; `"\t"` for tabs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    /// How to build the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<MapSection>,
}

impl InputSection {
    /// Whether the source has a device format (not `pitchside`), so its
    /// inputs go through its map.
    pub fn is_mapped(&self) -> bool {
        self.format.as_deref().is_some_and(|f| f != "pitchside")
    }
}

/// `[….map]`: where each part of the event comes from.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MapSection {
    /// A sensor kind (`sensor = "crowd"`), or an entry naming where it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<EntrySection>,
    /// The device id (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<EntrySection>,
    /// The event time (required): an entry with an optional `format`, or
    /// `"arrival"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_time: Option<EntrySection>,
    /// Match number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_id: Option<EntrySection>,
    /// Event number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_id: Option<EntrySection>,
    /// Player number (wearable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_id: Option<EntrySection>,
    /// Player name (wearable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_name: Option<EntrySection>,
    /// Zone (crowd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_id: Option<EntrySection>,
    /// Delivery number (pitch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_id: Option<EntrySection>,
    /// `[….map.metrics]`: metric name → entry (with `scale`, `offset`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, EntrySection>,
}

/// One map entry as written: text (`"arrival"`, or a sensor kind) or a table.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EntrySection {
    /// `event_time = "arrival"`, `sensor = "crowd"`.
    Text(String),
    /// `{ field = "…" }`, `{ topic_level = N }` or `{ value = V }`, with
    /// `format`/`utc_offset` (event time) or `scale`/`offset` (metrics).
    Table(EntryTable),
}

/// A map entry's keys.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryTable {
    /// A field of the input: a JSON Pointer, a column, a capture, a key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// An MQTT topic level, 0-based.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topic_level: Option<u32>,
    /// A fixed value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<toml::Value>,
    /// `event_time` only: `rfc3339`, `epoch_s`, `epoch_ms`, `epoch_us`,
    /// `epoch_ns` or a strftime-like pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// `event_time` with a pattern: the fixed offset of the device's local
    /// time (`"+05:30"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub utc_offset: Option<String>,
    /// Metrics only: multiplier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// Metrics only: added after scaling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<f64>,
}

/// The keys of one map entry.
pub(super) const ENTRY_KEYS: &[Key] = &[
    k("field", Ty::Text),
    k("topic_level", crate::config::schema::keys::U16),
    k("value", Ty::Scalar),
    k("format", Ty::Text),
    k("utc_offset", Ty::Text),
    k("scale", Ty::Number),
    k("offset", Ty::Number),
];

const ENTRY: Ty = Ty::TextOrTable(ENTRY_KEYS);

/// The keys every input source has (listed in each source's keys).
pub(super) const INPUT_KEYS: &[Key] = &[
    k("name", Ty::Text),
    k("format", Ty::Text),
    k("pattern", Ty::Text),
    k("columns", Ty::TextList),
    k("header", Ty::Bool),
    k("delimiter", Ty::Text),
    k("map", Ty::Table(MAP_KEYS)),
];

/// The keys of `[….map]`.
pub(super) const MAP_KEYS: &[Key] = &[
    k("sensor", ENTRY),
    k("device_id", ENTRY),
    k("event_time", ENTRY),
    k("match_id", ENTRY),
    k("event_id", ENTRY),
    k("player_id", ENTRY),
    k("player_name", ENTRY),
    k("zone_id", ENTRY),
    k("delivery_id", ENTRY),
    k("metrics", Ty::Named(ENTRY_KEYS)),
];
