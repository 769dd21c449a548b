//! The keys every input source shares (a `[[sources.serial]]` and an MQTT
//! subscription): its name, its device format and the map from the
//! device's fields to a §1 event (SPEC §9). Checked by [`super::check`].

use crate::config::schema::keys::{Section, Setting, Ty};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

crate::config::section! {
    /// The name, format and map of one source, as written.
    pub struct InputSection {
        /// The source's name, unique in the config (unset: `serial:{path}` or
        /// `mqtt:{topic filter}`); `replay --source` and `tap --source` use it.
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String> = None,
        /// `pitchside` (unset: SPEC §1 JSON), `json`, `csv`, `regex`, `logfmt`
        /// or `influx`.
        #[serde(skip_serializing_if = "Option::is_none")]
        format: Option<String> = None,
        /// `regex`: one regular expression with named captures.
        #[serde(skip_serializing_if = "Option::is_none")]
        pattern: Option<String> = None,
        /// `csv`: the column names.
        #[serde(skip_serializing_if = "Option::is_none")]
        columns: Option<Vec<String>> [TextList] = None,
        /// `csv`: read the column names from the header line.
        #[serde(skip_serializing_if = "Option::is_none")]
        header: Option<bool> = None,
        /// `csv`: one ASCII character (unset: `","`; `"\t"` for tabs).
        #[serde(skip_serializing_if = "Option::is_none")]
        delimiter: Option<String> = None,
        /// How to build the event.
        #[serde(skip_serializing_if = "Option::is_none")]
        map: Option<MapSection> = None,
    }
}

impl InputSection {
    /// Whether the source has a device format (not `pitchside`), so its
    /// inputs go through its map.
    pub fn is_mapped(&self) -> bool {
        self.format.as_deref().is_some_and(|f| f != "pitchside")
    }
}

crate::config::section! {
    /// `[….map]`: where each part of the event comes from.
    #[serde(deny_unknown_fields)]
    pub struct MapSection {
        /// A sensor kind (`sensor = "crowd"`), or an entry naming where it is.
        #[serde(skip_serializing_if = "Option::is_none")]
        sensor: Option<EntrySection> = None,
        /// The device id (required).
        #[serde(skip_serializing_if = "Option::is_none")]
        device_id: Option<EntrySection> = None,
        /// The event time (required): an entry with an optional `format`, or
        /// `"arrival"`.
        #[serde(skip_serializing_if = "Option::is_none")]
        event_time: Option<EntrySection> = None,
        /// Match number.
        #[serde(skip_serializing_if = "Option::is_none")]
        match_id: Option<EntrySection> = None,
        /// Event number.
        #[serde(skip_serializing_if = "Option::is_none")]
        event_id: Option<EntrySection> = None,
        /// Player number (wearable).
        #[serde(skip_serializing_if = "Option::is_none")]
        player_id: Option<EntrySection> = None,
        /// Player name (wearable).
        #[serde(skip_serializing_if = "Option::is_none")]
        player_name: Option<EntrySection> = None,
        /// Zone (crowd).
        #[serde(skip_serializing_if = "Option::is_none")]
        zone_id: Option<EntrySection> = None,
        /// Delivery number (pitch).
        #[serde(skip_serializing_if = "Option::is_none")]
        delivery_id: Option<EntrySection> = None,
        /// `[….map.metrics]`: metric name → entry (with `scale`, `offset`).
        #[serde(skip_serializing_if = "BTreeMap::is_empty")]
        metrics: BTreeMap<String, EntrySection> [Named(EntryTable::KEYS)] = BTreeMap::new(),
    }
}

/// One map entry as written: text (`"arrival"`, or a sensor kind) or a table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EntrySection {
    /// `event_time = "arrival"`, `sensor = "crowd"`.
    Text(String),
    /// `{ field = "…" }`, `{ topic_level = N }` or `{ value = V }`, with
    /// `format`/`utc_offset` (event time) or `scale`/`offset` (metrics).
    Table(EntryTable),
}

impl Setting for EntrySection {
    const TY: Ty = Ty::TextOrTable(EntryTable::KEYS);
}

crate::config::section! {
    /// A map entry's keys.
    #[serde(deny_unknown_fields)]
    pub struct EntryTable {
        /// A field of the input: a JSON Pointer, a column, a capture, a key.
        #[serde(skip_serializing_if = "Option::is_none")]
        field: Option<String> = None,
        /// An MQTT topic level, 0-based.
        #[serde(skip_serializing_if = "Option::is_none")]
        topic_level: Option<u32> [U16] = None,
        /// A fixed value.
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<toml::Value> [Scalar] = None,
        /// `event_time` only: `rfc3339`, `epoch_s`, `epoch_ms`, `epoch_us`,
        /// `epoch_ns` or a strftime-like pattern.
        #[serde(skip_serializing_if = "Option::is_none")]
        format: Option<String> = None,
        /// `event_time` with a pattern: the fixed offset of the device's local
        /// time (`"+05:30"`).
        #[serde(skip_serializing_if = "Option::is_none")]
        utc_offset: Option<String> = None,
        /// Metrics only: multiplier.
        #[serde(skip_serializing_if = "Option::is_none")]
        scale: Option<f64> = None,
        /// Metrics only: added after scaling.
        #[serde(skip_serializing_if = "Option::is_none")]
        offset: Option<f64> = None,
    }
}
