//! A source's map, entry by entry, against its syntax and sensor kind.

use super::{key_path, Source};
use crate::config::error::Problems;
use crate::config::sources::format::{
    Entry, FieldMap, FieldRef, Fixed, IdentityField, MetricEntry, SensorFrom, Syntax, TimeFormat,
    TimeFrom, EPOCH_NS,
};
use crate::config::sources::input::{EntrySection, EntryTable, MapSection};
use crate::model::SensorKind;
use crate::util::json_pointer::Pointer;
use crate::util::strftime::{parse_utc_offset, TimePattern};

/// Checks map entries against one source's syntax.
pub(super) struct Mapper<'a, 'p> {
    pub(super) src: &'a Source<'a>,
    pub(super) syntax: &'a Syntax,
    pub(super) p: &'p mut Problems,
}

impl Mapper<'_, '_> {
    pub(super) fn map(mut self, m: &MapSection) -> Option<FieldMap> {
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
