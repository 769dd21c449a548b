//! Checking a source's format and map against each other (SPEC §9): a
//! capture the pattern does not have, a column not in `columns`, a bad JSON
//! Pointer, a metric the sensor kind does not know, an entry with two
//! sources. Every problem names its key. The result is the
//! [`SourceFormat`] the decoder uses.

mod map;
mod syntax;

use super::format::SourceFormat;
use super::input::InputSection;
use crate::config::error::Problems;
use crate::model::SensorKind;
use std::sync::Arc;

/// Longest `pattern` accepted, in bytes.
pub const MAX_PATTERN_BYTES: usize = 1024;
/// Most memory a compiled pattern may take (the `regex` crate's size limit).
pub const MAX_PATTERN_SIZE: usize = 1 << 20;

/// The source being checked.
pub(super) struct Source<'a> {
    /// `sources.serial[0]`, `sources.mqtt[1].subscriptions[0]`.
    pub key: &'a str,
    /// Its name.
    pub name: &'a str,
    /// Its `sensor` key.
    pub sensor: Option<SensorKind>,
    /// The topic filter of an MQTT subscription; `None` on serial ports.
    pub filter: Option<&'a str>,
}

/// The checked format of `input`; `None` for `pitchside` (SPEC §1).
pub(super) fn check(
    input: &InputSection,
    src: &Source<'_>,
    p: &mut Problems,
) -> Option<SourceFormat> {
    let key = src.key;
    let format = input.format.as_deref().unwrap_or("pitchside");
    if format == "pitchside" {
        for (set, name) in [
            (input.pattern.is_some(), "pattern"),
            (input.columns.is_some(), "columns"),
            (input.header.is_some(), "header"),
            (input.delimiter.is_some(), "delimiter"),
            (input.map.is_some(), "map"),
        ] {
            p.check(!set, || {
                format!("{key}.{name}: only for a device format; set {key}.format (json, csv, regex, logfmt or influx) or remove it")
            });
        }
        return None;
    }
    let syntax = syntax::syntax(format, input, key, p)?;
    let Some(map) = &input.map else {
        p.push(format!(
            "{key}.map: format {format:?} needs a map ([{}.map] with device_id, event_time and metrics)",
            key_path(key)
        ));
        return None;
    };
    let map = map::Mapper {
        src,
        syntax: &syntax,
        p,
    }
    .map(map)?;
    Some(SourceFormat {
        name: Arc::from(src.name),
        syntax,
        map,
    })
}

/// `sources.serial[0]` → `sources.serial` (the TOML table path).
fn key_path(key: &str) -> String {
    key.split('.')
        .map(|s| s.split('[').next().unwrap_or(s))
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests;
