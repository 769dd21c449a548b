//! Checking a source's format and map against each other (SPEC §9): a
//! capture the pattern does not have, a column not in `columns`, a bad JSON
//! Pointer, a metric the sensor kind does not know, an entry with two
//! sources. Every problem names its key. The result is the
//! [`SourceFormat`] the decoder uses.

use super::format::{
    Entry, FieldMap, FieldRef, Fixed, IdentityField, MetricEntry, SensorFrom, SourceFormat, Syntax,
    TimeFormat, TimeFrom, EPOCH_NS,
};
use super::input::{EntrySection, EntryTable, InputSection, MapSection};
use crate::config::error::Problems;
use crate::model::SensorKind;
use crate::util::json_pointer::Pointer;
use crate::util::strftime::{parse_utc_offset, TimePattern};
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
    let syntax = syntax(format, input, key, p)?;
    let Some(map) = &input.map else {
        p.push(format!(
            "{key}.map: format {format:?} needs a map ([{}.map] with device_id, event_time and metrics)",
            key_path(key)
        ));
        return None;
    };
    let map = Mapper {
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

/// The format's syntax, with its own keys checked.
fn syntax(format: &str, input: &InputSection, key: &str, p: &mut Problems) -> Option<Syntax> {
    let only = |name: &str, set: bool, for_format: &str, p: &mut Problems| {
        p.check(!set || format == for_format, || {
            format!("{key}.{name}: only for format \"{for_format}\", not {format:?}")
        })
    };
    only("pattern", input.pattern.is_some(), "regex", p);
    only("columns", input.columns.is_some(), "csv", p);
    only("header", input.header.is_some(), "csv", p);
    only("delimiter", input.delimiter.is_some(), "csv", p);
    Some(match format {
        "json" => Syntax::Json,
        "logfmt" => Syntax::Logfmt,
        "influx" => Syntax::Influx,
        "regex" => Syntax::Regex(regex(input.pattern.as_deref(), key, p)?),
        "csv" => csv(input, key, p)?,
        other => {
            p.push(format!(
                "{key}.format: {other:?} must be pitchside, json, csv, regex, logfmt or influx"
            ));
            return None;
        }
    })
}

fn regex(pattern: Option<&str>, key: &str, p: &mut Problems) -> Option<regex::Regex> {
    let Some(pattern) = pattern else {
        p.push(format!("{key}.pattern: format \"regex\" needs a pattern with named captures such as (?P<db>[0-9.]+)"));
        return None;
    };
    if pattern.len() > MAX_PATTERN_BYTES {
        p.push(format!(
            "{key}.pattern: {} bytes, at most {MAX_PATTERN_BYTES}",
            pattern.len()
        ));
        return None;
    }
    match regex::RegexBuilder::new(pattern)
        .size_limit(MAX_PATTERN_SIZE)
        .dfa_size_limit(MAX_PATTERN_SIZE)
        .build()
    {
        Ok(r) if r.capture_names().flatten().next().is_some() => Some(r),
        Ok(_) => {
            p.push(format!("{key}.pattern: has no named capture; name what the map uses, as in (?P<db>[0-9.]+)"));
            None
        }
        Err(e) => {
            p.push(format!(
                "{key}.pattern: not a valid regular expression: {e}"
            ));
            None
        }
    }
}

fn csv(input: &InputSection, key: &str, p: &mut Problems) -> Option<Syntax> {
    let delimiter = match input.delimiter.as_deref().unwrap_or(",") {
        "\\t" => b'\t',
        d if d.len() == 1 && d.is_ascii() && !matches!(d, "\"" | "\n" | "\r") => d.as_bytes()[0],
        d => {
            p.push(format!("{key}.delimiter: {d:?} must be one ASCII character other than a quote or a newline (\"\\t\" for a tab)"));
            return None;
        }
    };
    let header = input.header.unwrap_or(false);
    let columns = input.columns.clone().unwrap_or_default();
    match (header, columns.is_empty()) {
        (true, false) => p.push(format!(
            "{key}: columns and header = true are exclusive; keep one"
        )),
        (false, true) => p.push(format!(
            "{key}.columns: format \"csv\" needs columns = [\"…\", …] or header = true"
        )),
        _ => {}
    }
    for (i, c) in columns.iter().enumerate() {
        p.check(!c.is_empty() && !columns[..i].contains(c), || {
            format!("{key}.columns: {c:?} is empty or named twice")
        });
    }
    Some(Syntax::Csv {
        columns,
        header,
        delimiter,
    })
}

/// Checks map entries against one source's syntax.
struct Mapper<'a, 'p> {
    src: &'a Source<'a>,
    syntax: &'a Syntax,
    p: &'p mut Problems,
}

impl Mapper<'_, '_> {
    fn map(mut self, m: &MapSection) -> Option<FieldMap> {
        let key = format!("{}.map", self.src.key);
        let sensor = self.sensor(m.sensor.as_ref(), &key);
        let device_id = self.required(m.device_id.as_ref(), &format!("{key}.device_id"));
        let event_time = self.event_time(m.event_time.as_ref(), &format!("{key}.event_time"));
        let fixed_kind = match &sensor {
            Some(SensorFrom::Fixed(k)) => Some(*k),
            _ => None,
        };
        let mut identity = Vec::new();
        for (field, name) in IdentityField::ALL {
            let set = match field {
                IdentityField::MatchId => &m.match_id,
                IdentityField::EventId => &m.event_id,
                IdentityField::PlayerId => &m.player_id,
                IdentityField::PlayerName => &m.player_name,
                IdentityField::ZoneId => &m.zone_id,
                IdentityField::DeliveryId => &m.delivery_id,
            };
            let k = format!("{key}.{name}");
            if let (Some(kind), Some(of)) = (fixed_kind, field.kind()) {
                self.p
                    .check(set.is_some() || !required_for(field, kind), || {
                        format!("{k}: a {kind} event needs {name}; map it")
                    });
                self.p.check(set.is_none() || of == kind, || {
                    format!("{k}: a {kind} event has no {name} (it belongs to {of} events)")
                });
            }
            if let Some(e) = set.as_ref().and_then(|e| self.entry(e, &k)) {
                identity.push((field, e));
            }
        }
        let metrics = self.metrics(m, fixed_kind, &key);
        Some(FieldMap {
            sensor: sensor?,
            device_id: device_id?,
            event_time: event_time?,
            identity,
            metrics: metrics?,
        })
    }

    fn sensor(&mut self, e: Option<&EntrySection>, key: &str) -> Option<SensorFrom> {
        let key = format!("{key}.sensor");
        let own = self.src.sensor;
        match e {
            None => match own {
                Some(k) => Some(SensorFrom::Fixed(k)),
                None => {
                    self.p.push(format!("{key}: required: a sensor kind (sensor = \"crowd\") or where the input names it; or set sensor on the source"));
                    None
                }
            },
            Some(EntrySection::Text(t)) => match SensorKind::parse(t) {
                Some(k) if own.is_none_or(|o| o == k) => Some(SensorFrom::Fixed(k)),
                Some(k) => {
                    self.p.push(format!(
                        "{key}: {k} differs from the source's sensor {}",
                        own.map_or("", |o| o.as_str())
                    ));
                    None
                }
                None => {
                    self.p.push(format!(
                        "{key}: {t:?} is not one of wearable, pitch, crowd, generic"
                    ));
                    None
                }
            },
            Some(e) => Some(SensorFrom::Entry(self.entry(e, &key)?, own)),
        }
    }

    fn required(&mut self, e: Option<&EntrySection>, key: &str) -> Option<Entry> {
        match e {
            Some(e) => self.entry(e, key),
            None => {
                self.p.push(format!("{key}: required; map it ({{ field = \"…\" }}, {{ topic_level = N }} or {{ value = … }})"));
                None
            }
        }
    }

    fn event_time(&mut self, e: Option<&EntrySection>, key: &str) -> Option<TimeFrom> {
        let t = match e {
            Some(EntrySection::Text(t)) if t == "arrival" => return Some(TimeFrom::Arrival),
            Some(EntrySection::Table(t)) => t,
            _ => {
                self.p.push(format!("{key}: required: {{ field = \"…\", format = \"…\" }} or \"arrival\" (the time the gateway received the input)"));
                return None;
            }
        };
        let format = match t.format.as_deref() {
            None => TimeFormat::Default,
            Some("rfc3339") => TimeFormat::Rfc3339,
            Some("epoch_s") => TimeFormat::Epoch(1_000_000),
            Some("epoch_ms") => TimeFormat::Epoch(1_000),
            Some("epoch_us") => TimeFormat::Epoch(1),
            Some("epoch_ns") => TimeFormat::Epoch(EPOCH_NS),
            Some(pattern) => match TimePattern::parse(pattern) {
                Ok(tp) => {
                    let offset = t.utc_offset.as_deref().unwrap_or("Z");
                    match parse_utc_offset(offset) {
                        Ok(o) => TimeFormat::Pattern(tp, o),
                        Err(e) => {
                            self.p.push(format!("{key}.utc_offset: {e}"));
                            return None;
                        }
                    }
                }
                Err(e) => {
                    self.p.push(format!("{key}.format: {pattern:?} is not rfc3339, epoch_s, epoch_ms, epoch_us, epoch_ns or a time pattern: it {e}"));
                    return None;
                }
            },
        };
        self.p.check(t.utc_offset.is_none() || matches!(format, TimeFormat::Pattern(..)), || {
            format!("{key}.utc_offset: only with a local-time pattern in format (RFC 3339 and epoch times carry their zone)")
        });
        self.p.check(t.scale.is_none() && t.offset.is_none(), || {
            format!("{key}: scale and offset are for metrics")
        });
        let entry = self.table(t, key)?;
        Some(TimeFrom::Entry(entry, format))
    }

    fn metrics(
        &mut self,
        m: &MapSection,
        kind: Option<SensorKind>,
        key: &str,
    ) -> Option<Vec<MetricEntry>> {
        let key = format!("{key}.metrics");
        if m.metrics.is_empty() {
            self.p.push(format!(
                "{key}: at least one metric ([{}.map.metrics] with name = {{ field = \"…\" }})",
                key_path(self.src.key)
            ));
            return None;
        }
        let mut out = Vec::new();
        for (name, e) in &m.metrics {
            let k = format!("{key}.{name}");
            match kind {
                Some(SensorKind::Generic) | None => self.p.check(generic_name_ok(name) || kind.is_none() && known_metric(name), || {
                    format!("{k}: a generic metric name is 1-64 characters of A-Z, a-z, 0-9, '_', '.', '-'")
                }),
                Some(kind) => self.p.check(kind.metrics().contains(&name.as_str()), || {
                    format!("{k}: {name:?} is not a {kind} metric (those are {})", kind.metrics().join(", "))
                }),
            }
            let EntrySection::Table(t) = e else {
                self.p
                    .push(format!("{k}: write {name} = {{ field = \"…\" }}"));
                continue;
            };
            let (scale, offset) = (t.scale.unwrap_or(1.0), t.offset.unwrap_or(0.0));
            self.p.check(scale.is_finite() && offset.is_finite(), || {
                format!("{k}: scale and offset must be finite numbers")
            });
            self.p
                .check(t.format.is_none() && t.utc_offset.is_none(), || {
                    format!("{k}: format and utc_offset are for event_time")
                });
            if let Some(from) = self.table(t, &k) {
                out.push(MetricEntry {
                    name: name.clone(),
                    from,
                    scale,
                    offset,
                });
            }
        }
        (out.len() == m.metrics.len()).then_some(out)
    }

    /// An entry of identity or device: a table without time or scale keys.
    fn entry(&mut self, e: &EntrySection, key: &str) -> Option<Entry> {
        match e {
            EntrySection::Text(t) => {
                self.p.push(format!("{key}: write {{ field = {t:?} }} for a field, or {{ value = {t:?} }} for a fixed value"));
                None
            }
            EntrySection::Table(t) => {
                self.p
                    .check(t.format.is_none() && t.utc_offset.is_none(), || {
                        format!("{key}: format and utc_offset are for event_time")
                    });
                self.p.check(t.scale.is_none() && t.offset.is_none(), || {
                    format!("{key}: scale and offset are for metrics")
                });
                self.table(t, key)
            }
        }
    }

    /// The one source of an entry: a field, a topic level or a value.
    fn table(&mut self, t: &EntryTable, key: &str) -> Option<Entry> {
        match (&t.field, t.topic_level, &t.value) {
            (Some(f), None, None) => self.field(f, key).map(Entry::Field),
            (None, Some(level), None) => self.topic_level(level as usize, key),
            (None, None, Some(v)) => fixed(v, key, self.p).map(Entry::Value),
            _ => {
                self.p
                    .push(format!("{key}: exactly one of field, topic_level, value"));
                None
            }
        }
    }

    fn topic_level(&mut self, level: usize, key: &str) -> Option<Entry> {
        let Some(filter) = self.src.filter else {
            self.p
                .push(format!("{key}.topic_level: only on an MQTT subscription"));
            return None;
        };
        let levels: Vec<&str> = filter.split('/').collect();
        let ok = levels.contains(&"#") || level < levels.len();
        self.p.check(ok, || format!("{key}.topic_level: {level} is past the last level of {filter:?} (levels count from 0)"));
        ok.then_some(Entry::TopicLevel(level))
    }

    /// A field as the syntax names it.
    fn field(&mut self, f: &str, key: &str) -> Option<FieldRef> {
        let noun = match self.syntax {
            Syntax::Csv { .. } => "column",
            Syntax::Regex(_) => "capture",
            Syntax::Logfmt => "key",
            Syntax::Json | Syntax::Influx => "field",
        };
        let mut r = FieldRef {
            noun,
            text: f.to_string(),
            pointer: None,
            index: None,
        };
        let fail = |p: &mut Problems, why: String| {
            p.push(format!("{key}.field: {why}"));
            None
        };
        match self.syntax {
            Syntax::Json => match Pointer::parse(f) {
                Ok(t) => r.pointer = Some(t),
                Err(why) => return fail(self.p, why),
            },
            Syntax::Csv {
                columns,
                header: false,
                ..
            } => match columns.iter().position(|c| c == f) {
                Some(i) => r.index = Some(i),
                None => {
                    return fail(
                        self.p,
                        format!("{f:?} is not one of the columns ({})", columns.join(", ")),
                    )
                }
            },
            Syntax::Regex(re) => match re.capture_names().position(|n| n == Some(f)) {
                Some(i) => r.index = Some(i),
                None => {
                    let names: Vec<_> = re.capture_names().flatten().collect();
                    return fail(
                        self.p,
                        format!(
                            "capture {f:?} is not in the pattern (its named captures are {})",
                            names.join(", ")
                        ),
                    );
                }
            },
            _ if f.is_empty() => return fail(self.p, "must name a field".into()),
            _ => {}
        }
        Some(r)
    }
}

fn required_for(field: IdentityField, kind: SensorKind) -> bool {
    matches!(
        (field, kind),
        (IdentityField::PlayerId, SensorKind::Wearable)
            | (IdentityField::ZoneId, SensorKind::Crowd)
    )
}

fn known_metric(name: &str) -> bool {
    SensorKind::ALL.iter().any(|k| k.metrics().contains(&name))
}

fn generic_name_ok(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

fn fixed(v: &toml::Value, key: &str, p: &mut Problems) -> Option<Fixed> {
    Some(match v {
        toml::Value::String(s) => Fixed::Text(s.clone()),
        toml::Value::Integer(n) => Fixed::Int(*n),
        toml::Value::Float(f) if f.is_finite() => Fixed::Num(*f),
        _ => {
            p.push(format!("{key}.value: must be text or a finite number"));
            return None;
        }
    })
}
