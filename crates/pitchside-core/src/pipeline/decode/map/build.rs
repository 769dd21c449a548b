//! A parsed input and its source's map → §1 events, with §1's checks (id
//! alphabet, plausible time, configured ranges). A `generic` map gives one
//! event per metric present, each named by its map key (SPEC §9).

use super::convert;
use super::record::{Record, Value};
use crate::config::sources::format::{Entry, FieldMap, Fixed, IdentityField, SensorFrom, TimeFrom};
use crate::model::{
    Event, Identity, Micros, Readings, Reject, RejectReason, SensorKind, MAX_METRICS,
};
use crate::pipeline::decode::validate::{check_id, check_metric_name, check_player_name};
use crate::pipeline::decode::Decoder;
use std::borrow::Cow;
use std::fmt;

/// What an entry is looked up in besides the record.
pub struct Context<'a> {
    /// The MQTT topic of the input, if it came from MQTT.
    pub topic: Option<&'a str>,
    /// When the gateway received the input.
    pub received_at: Micros,
    /// The wall clock (for the plausibility check on live sources).
    pub clock: Micros,
}

fn unmapped(detail: String) -> Reject {
    Reject::new(RejectReason::Unmapped, detail)
}

/// The value of `entry`; `None` when the input does not have it (a
/// missing or null field, an empty CSV cell, a capture that did not take
/// part in the match).
fn value<'a>(
    entry: &'a Entry,
    record: &Record<'a, '_>,
    cx: &Context<'a>,
) -> Result<Option<Value<'a>>, Reject> {
    Ok(match entry {
        Entry::Field(f) => match record.get(f).map_err(unmapped)? {
            Some(Value::Null) => None,
            Some(Value::Text(t)) if t.trim().is_empty() => None,
            v => v,
        },
        Entry::TopicLevel(n) => match cx.topic {
            Some(t) => Some(Value::Text(Cow::Borrowed(
                t.split('/').nth(*n).ok_or_else(|| {
                    unmapped(format!(
                        "topic {t:?} has no level {n} (levels count from 0)"
                    ))
                })?,
            ))),
            None => {
                return Err(unmapped(format!(
                    "topic_level {n}: the input has no MQTT topic (give replay or tap --topic)"
                )))
            }
        },
        Entry::Value(Fixed::Text(t)) => Some(Value::Text(Cow::Borrowed(t))),
        Entry::Value(Fixed::Int(i)) => Some(Value::Int(*i)),
        Entry::Value(Fixed::Num(x)) => Some(Value::Num(*x)),
    })
}

/// What an entry is, for details: `field /hr/bpm`, `topic level 2`.
/// Written only when a detail is (the hot path formats nothing).
struct Describe<'a>(&'a Entry);

impl fmt::Display for Describe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Entry::Field(r) => write!(f, "{} {}", r.noun, r.text),
            Entry::TopicLevel(n) => write!(f, "topic level {n}"),
            Entry::Value(_) => f.write_str("the fixed value"),
        }
    }
}

/// A mapped part and where it comes from, for details: `heart_rate (field /hr/bpm)`.
struct What<'a>(&'a str, &'a Entry);

impl fmt::Display for What<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.0, Describe(self.1))
    }
}

/// A required value.
fn required<'a>(
    entry: &'a Entry,
    record: &Record<'a, '_>,
    cx: &Context<'a>,
    what: &str,
) -> Result<Value<'a>, Reject> {
    value(entry, record, cx)?
        .ok_or_else(|| unmapped(format!("{what}: {} is missing", Describe(entry))))
}

impl Decoder {
    /// The events `record` makes under `map`.
    pub(super) fn mapped_events(
        &self,
        map: &FieldMap,
        record: &Record<'_, '_>,
        cx: &Context<'_>,
        out: &mut Vec<Event<'static>>,
    ) -> Result<(), Reject> {
        let sensor = sensor(map, record, cx)?;

        let device_id = convert::text(
            required(&map.device_id, record, cx, "device_id")?,
            &What("device_id", &map.device_id),
        )?;
        check_id(&device_id, "device_id")?;
        let event_time = match &map.event_time {
            TimeFrom::Arrival => cx.received_at,
            TimeFrom::Entry(e, format) => {
                let v = required(e, record, cx, "event_time")?;
                convert::time(v, format, &What("event_time", e))?
            }
        };
        self.check_plausible(event_time, cx.clock)?;
        let mut ids = Ids::default();
        for (field, entry) in &map.identity {
            ids.set(*field, entry, record, cx)?;
        }
        if ids.match_id < 0 {
            return Err(Reject::new(
                RejectReason::OutOfRange,
                format!("match_id {} must be >= 0", ids.match_id),
            ));
        }
        let identity = ids.identity(sensor)?;
        let base = Event {
            sensor,
            device_id: Cow::Owned(device_id.into_owned()),
            event_time,
            match_id: ids.match_id,
            event_id: ids.event_id,
            identity,
            values: Readings::new(),
        };
        self.mapped_values(map, record, cx, base, out)
    }

    /// The metric values: into `base` for a fixed kind, one event each for
    /// `generic`. At least one must be present.
    fn mapped_values(
        &self,
        map: &FieldMap,
        record: &Record<'_, '_>,
        cx: &Context<'_>,
        mut base: Event<'static>,
        out: &mut Vec<Event<'static>>,
    ) -> Result<(), Reject> {
        let sensor = base.sensor;
        let start = out.len();
        for m in &map.metrics {
            let Some(v) = value(&m.from, record, cx)? else {
                continue;
            };
            let what = What(&m.name, &m.from);
            let x = convert::number(v, &what)? * m.scale + m.offset;
            if !x.is_finite() {
                return Err(Reject::new(
                    RejectReason::OutOfRange,
                    format!("{what} scaled is outside the range of a 64-bit float"),
                ));
            }
            if sensor == SensorKind::Generic {
                check_metric_name(&m.name)?;
                self.check_range(sensor, &m.name, &m.name, x)?;
                let mut e = base.clone();
                e.identity = Identity::Generic {
                    metric: Cow::Owned(m.name.clone()),
                };
                e.values = Readings::from_iter([(0, x)]);
                out.push(e);
                continue;
            }
            let Some(i) = sensor.metrics().iter().position(|n| *n == m.name) else {
                return Err(unmapped(format!(
                    "{} is not a {sensor} metric (those are {})",
                    m.name,
                    sensor.metrics().join(", ")
                )));
            };
            self.check_range(sensor, &m.name, &m.name, x)?;
            if base.values.push((i as u8, x)).is_err() {
                return Err(unmapped(format!(
                    "more than {MAX_METRICS} metrics map to one {sensor} event"
                )));
            }
        }
        if sensor != SensorKind::Generic && !base.values.is_empty() {
            base.values.sort_by_key(|(i, _)| *i);
            out.push(base);
        }
        if out.len() == start {
            // Say where each metric was looked for, as `tap` shows the operator
            // (SPEC §9: a detail naming what was missing); §1's reason stays.
            let looked: Vec<String> = map
                .metrics
                .iter()
                .map(|m| What(&m.name, &m.from).to_string())
                .collect();
            return Err(Reject::new(
                RejectReason::NoMetrics,
                format!(
                    "none of the mapped metrics is present: {} missing",
                    looked.join(", ")
                ),
            ));
        }
        Ok(())
    }
}

/// The sensor kind: fixed, or from the input (checked against the source's).
fn sensor(map: &FieldMap, record: &Record<'_, '_>, cx: &Context<'_>) -> Result<SensorKind, Reject> {
    let (entry, own) = match &map.sensor {
        SensorFrom::Fixed(k) => return Ok(*k),
        SensorFrom::Entry(e, own) => (e, *own),
    };
    let t = convert::text(
        required(entry, record, cx, "sensor")?,
        &What("sensor", entry),
    )?;
    let kind = SensorKind::parse(t.trim()).ok_or_else(|| {
        Reject::new(
            RejectReason::UnknownSensor,
            format!("sensor {t:?} is not one of wearable, pitch, crowd, generic"),
        )
    })?;
    match own {
        Some(o) if o != kind => Err(Reject::new(
            RejectReason::SensorMismatch,
            format!("sensor {kind} differs from the source's kind {o}"),
        )),
        _ => Ok(kind),
    }
}

/// The identity fields read so far.
#[derive(Default)]
struct Ids {
    match_id: i64,
    event_id: Option<i64>,
    player_id: Option<i64>,
    player_name: Option<String>,
    zone_id: Option<String>,
    delivery_id: Option<i64>,
}

impl Ids {
    fn set(
        &mut self,
        field: IdentityField,
        entry: &Entry,
        record: &Record<'_, '_>,
        cx: &Context<'_>,
    ) -> Result<(), Reject> {
        let name = field.name();
        let Some(v) = value(entry, record, cx)? else {
            return Ok(());
        };
        let what = What(name, entry);
        match field {
            IdentityField::MatchId => self.match_id = convert::int(v, &what)?,
            IdentityField::EventId => self.event_id = Some(convert::int(v, &what)?),
            IdentityField::PlayerId => self.player_id = Some(convert::int(v, &what)?),
            IdentityField::DeliveryId => self.delivery_id = Some(convert::int(v, &what)?),
            IdentityField::PlayerName => {
                let t = convert::text(v, &what)?;
                self.player_name = Some(check_player_name(&t)?.to_string());
            }
            IdentityField::ZoneId => {
                let t = convert::text(v, &what)?;
                check_id(&t, "zone_id")?;
                self.zone_id = Some(t.into_owned());
            }
        }
        Ok(())
    }

    /// The identity of a `sensor` event (a generic one's metric is set per value).
    fn identity(&mut self, sensor: SensorKind) -> Result<Identity<'static>, Reject> {
        let missing = |name: &str| {
            unmapped(format!(
                "{name} is required for a {sensor} event and the input does not have it"
            ))
        };
        Ok(match sensor {
            SensorKind::Wearable => Identity::Wearable {
                player_id: self.player_id.ok_or_else(|| missing("player_id"))?,
                player_name: self.player_name.take().map(Cow::Owned),
            },
            SensorKind::Pitch => Identity::Pitch {
                delivery_id: self.delivery_id,
            },
            SensorKind::Crowd => Identity::Crowd {
                zone_id: Cow::Owned(self.zone_id.take().ok_or_else(|| missing("zone_id"))?),
            },
            SensorKind::Generic => Identity::Generic {
                metric: Cow::Borrowed(""),
            },
        })
    }
}
