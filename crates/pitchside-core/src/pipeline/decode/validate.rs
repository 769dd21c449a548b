//! Validation: an object's fields → a checked [`Event`], in SPEC §1 order
//! (sensor, device, time and its plausibility, match, identity, metrics and
//! their configured ranges); the first problem is the [`Reject`].

use super::fields::{
    event_time, metric_value, missing, optional_int, required_str, sensor_field, wrong_type, Fields,
};
use super::json::JsonValue;
use super::known::{index, metric_slots};
use super::{Decoder, EARLIEST_PLAUSIBLE};
use crate::model::{Event, Identity, Micros, Readings, Reject, RejectReason, SensorKind};
use crate::util::time::format_rfc3339;

impl Decoder {
    /// The event the fields describe. `clock` is the wall clock.
    pub(super) fn event<'a>(
        &self,
        fields: &Fields<'a>,
        hint: Option<SensorKind>,
        clock: Micros,
    ) -> Result<Event<'a>, Reject> {
        let sensor = sensor_field(fields.at(const { index("sensor") }), hint)?;
        let device_id = required_str(fields.at(const { index("device_id") }), "device_id")?;
        check_id(&device_id, "device_id")?;
        let event_time = event_time(fields)?;
        self.check_plausible(event_time, clock)?;
        let match_id =
            optional_int(fields.at(const { index("match_id") }), "match_id")?.unwrap_or(0);
        if match_id < 0 {
            return Err(Reject::new(
                RejectReason::OutOfRange,
                format!("match_id {match_id} must be >= 0"),
            ));
        }
        let event_id = optional_int(fields.at(const { index("event_id") }), "event_id")?;
        let identity = identity(sensor, fields)?;
        let values = self.values(sensor, &identity, fields)?;
        Ok(Event {
            sensor,
            device_id,
            event_time,
            match_id,
            event_id,
            identity,
            values,
        })
    }

    /// A metric value within its configured range (`limits.range`), if any;
    /// `field` names it in the detail.
    pub(super) fn check_range(
        &self,
        sensor: SensorKind,
        metric: &str,
        field: &str,
        x: f64,
    ) -> Result<(), Reject> {
        let range = self
            .ranges
            .iter()
            .find(|r| r.sensor == sensor && r.metric == metric);
        match range {
            Some(r) if x < r.min || x > r.max => Err(Reject::new(
                RejectReason::OutOfRange,
                format!(
                    "{field} {x} is outside the configured range [{}, {}] (limits.range)",
                    r.min, r.max
                ),
            )),
            _ => Ok(()),
        }
    }

    /// On live sources: not more than `limits.max_future` ahead of a trusted
    /// clock, and not before 2020.
    pub(super) fn check_plausible(&self, event_time: Micros, clock: Micros) -> Result<(), Reject> {
        let Some(max_future) = self.live_max_future else {
            return Ok(());
        };
        if self.clock_trusted && event_time > clock.saturating_add(max_future) {
            return Err(Reject::new(
                RejectReason::ImplausibleTime,
                format!(
                    "event time {} is more than limits.max_future ahead of the gateway clock {}",
                    format_rfc3339(event_time),
                    format_rfc3339(clock)
                ),
            ));
        }
        if event_time < EARLIEST_PLAUSIBLE {
            return Err(Reject::new(
                RejectReason::ImplausibleTime,
                format!(
                    "event time {} is before 2020-01-01 (is the sensor's clock set?)",
                    format_rfc3339(event_time)
                ),
            ));
        }
        Ok(())
    }

    /// The kind's metric values present, as (metric index, value), each
    /// within its configured range; at least one.
    fn values(
        &self,
        sensor: SensorKind,
        identity: &Identity<'_>,
        fields: &Fields<'_>,
    ) -> Result<Readings, Reject> {
        let names: &[&str] = match sensor {
            SensorKind::Generic => &["value"],
            k => k.metrics(),
        };
        let mut values = Readings::new();
        for (i, (name, &slot)) in names.iter().zip(metric_slots(sensor)).enumerate() {
            let Some(x) = metric_value(fields.at(slot), name)? else {
                continue;
            };
            let metric_name = match identity {
                Identity::Generic { metric } => metric.as_ref(),
                _ => name,
            };
            self.check_range(sensor, metric_name, name, x)?;
            // At most MAX_METRICS names, so there is always room.
            let _ = values.push((i as u8, x));
        }
        if values.is_empty() {
            return Err(Reject::new(
                RejectReason::NoMetrics,
                format!(
                    "no metric field; a {sensor} event needs one of {}",
                    names.join(", ")
                ),
            ));
        }
        Ok(values)
    }
}

/// Who or what the event is about, by kind: player, delivery, zone or metric name.
fn identity<'a>(sensor: SensorKind, fields: &Fields<'a>) -> Result<Identity<'a>, Reject> {
    Ok(match sensor {
        SensorKind::Wearable => {
            let player_id = optional_int(fields.at(const { index("player_id") }), "player_id")?
                .ok_or_else(|| missing("player_id"))?;
            let player_name = match fields.at(const { index("player_name") }) {
                None | Some(JsonValue::Null) => None,
                Some(JsonValue::Str(s)) => {
                    check_player_name(&s)?;
                    Some(s)
                }
                Some(v) => return Err(wrong_type("player_name", "a string", &v)),
            };
            Identity::Wearable {
                player_id,
                player_name,
            }
        }
        SensorKind::Pitch => Identity::Pitch {
            delivery_id: optional_int(fields.at(const { index("delivery_id") }), "delivery_id")?,
        },
        SensorKind::Crowd => {
            let zone_id = required_str(fields.at(const { index("zone_id") }), "zone_id")?;
            check_id(&zone_id, "zone_id")?;
            Identity::Crowd { zone_id }
        }
        SensorKind::Generic => {
            let metric = required_str(fields.at(const { index("metric") }), "metric")?;
            check_metric_name(&metric)?;
            Identity::Generic { metric }
        }
    })
}

/// A player name: at most 64 characters.
pub(super) fn check_player_name(s: &str) -> Result<&str, Reject> {
    // 64 bytes or fewer are 64 characters or fewer: no need to count them.
    if s.len() <= 64 || s.chars().count() <= 64 {
        Ok(s)
    } else {
        Err(Reject::new(
            RejectReason::InvalidField,
            "player_name is longer than 64 characters",
        ))
    }
}

/// The bytes of an id: ASCII letters and digits, `.`, `_`, `:`, `-`.
const ID_BYTES: [bool; 256] = byte_class(b"._:-");
/// The bytes of a metric name: ASCII letters and digits, `_`, `.`, `-`.
const METRIC_BYTES: [bool; 256] = byte_class(b"_.-");

/// A table of the bytes that are ASCII letters, digits or in `extra`: one
/// load a byte instead of a chain of range compares.
const fn byte_class(extra: &[u8]) -> [bool; 256] {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = (c as u8).is_ascii_alphanumeric();
        c += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        t[extra[i] as usize] = true;
        i += 1;
    }
    t
}

/// An id (`device_id`, `zone_id`): 1-64 characters of A-Z, a-z, 0-9, `.`, `_`, `:`, `-`.
pub(super) fn check_id(s: &str, name: &str) -> Result<(), Reject> {
    let ok = (1..=64).contains(&s.len()) && s.bytes().all(|c| ID_BYTES[c as usize]);
    if ok {
        Ok(())
    } else {
        Err(Reject::new(
            RejectReason::InvalidField,
            format!("{name} must be 1-64 characters of A-Z, a-z, 0-9, '.', '_', ':', '-'"),
        ))
    }
}

/// A generic event's metric name: 1-64 characters of A-Z, a-z, 0-9, `_`, `.`, `-`.
pub(super) fn check_metric_name(metric: &str) -> Result<(), Reject> {
    let ok = (1..=64).contains(&metric.len()) && metric.bytes().all(|c| METRIC_BYTES[c as usize]);
    if !ok {
        return Err(Reject::new(
            RejectReason::InvalidField,
            "metric must be 1-64 characters of A-Z, a-z, 0-9, '_', '.', '-'",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{ID_BYTES, METRIC_BYTES};

    #[test]
    fn the_byte_tables_are_the_documented_classes() {
        for c in 0..=255u8 {
            let plain = c.is_ascii_alphanumeric();
            assert_eq!(
                ID_BYTES[c as usize],
                plain || matches!(c, b'.' | b'_' | b':' | b'-'),
                "{c}"
            );
            assert_eq!(
                METRIC_BYTES[c as usize],
                plain || matches!(c, b'_' | b'.' | b'-'),
                "{c}"
            );
        }
    }
}
