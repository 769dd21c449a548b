//! Numeric fields an accepted event carried that its sensor kind does not
//! know: unknown fields are ignored (SPEC §1), but a misspelled metric
//! (`"accel"` for `"acceleration"`) would otherwise vanish without a trace.
//! Counted per (sensor, field name), bounded: at most [`MAX_TRACKED`] names,
//! later ones counted together as [`OTHER`].

use crate::model::SensorKind;

/// Distinct (sensor, field) pairs tracked by name.
pub const MAX_TRACKED: usize = 64;
/// Longest field name kept (longer names are cut at a character boundary).
pub const MAX_NAME_BYTES: usize = 64;
/// The name counting every field beyond [`MAX_TRACKED`].
pub const OTHER: &str = "other";

/// Whether `name` is a field of a `sensor` event (common, identity or metric).
pub fn is_known_field(sensor: SensorKind, name: &str) -> bool {
    let common = matches!(
        name,
        "sensor" | "device_id" | "event_time" | "event_ts" | "match_id" | "event_id"
    );
    common
        || match sensor {
            SensorKind::Wearable => matches!(name, "player_id" | "player_name"),
            SensorKind::Pitch => name == "delivery_id",
            SensorKind::Crowd => name == "zone_id",
            SensorKind::Generic => matches!(name, "metric" | "value"),
        }
        || sensor.metrics().contains(&name)
}

/// One tracked field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownField {
    /// The kind of the events that carried it.
    pub sensor: SensorKind,
    /// The field name (at most [`MAX_NAME_BYTES`]).
    pub name: Box<str>,
    /// Events that carried it.
    pub events: u64,
}

/// What [`UnknownFields::note`] made of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Noted {
    /// Seen for the first time: worth a log line.
    First,
    /// The first name that did not fit: counted as [`OTHER`] from now on.
    Overflow,
    /// Counted again.
    Again,
}

/// Counts of unknown numeric fields; no allocation until a new name is seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnknownFields {
    tracked: Vec<UnknownField>,
    /// Events with a field beyond the cap, by kind.
    other: [u64; 4],
}

impl UnknownFields {
    /// Counts one event of kind `sensor` that carried field `name`.
    pub fn note(&mut self, sensor: SensorKind, name: &str) -> Noted {
        let name = cut(name, MAX_NAME_BYTES);
        if let Some(f) = self.find(sensor, name) {
            f.events += 1;
            return Noted::Again;
        }
        if self.tracked.len() < MAX_TRACKED {
            self.tracked.push(UnknownField {
                sensor,
                name: name.into(),
                events: 1,
            });
            return Noted::First;
        }
        // A tracked field literally named "other" is the bucket itself, so
        // one (sensor, "other") series never appears twice.
        if let Some(f) = self.find(sensor, OTHER) {
            f.events += 1;
            return Noted::Again;
        }
        let first = self.other.iter().all(|&n| n == 0);
        self.other[sensor.index()] += 1;
        if first {
            Noted::Overflow
        } else {
            Noted::Again
        }
    }

    fn find(&mut self, sensor: SensorKind, name: &str) -> Option<&mut UnknownField> {
        self.tracked
            .iter_mut()
            .find(|f| f.sensor == sensor && &*f.name == name)
    }

    /// Every count as (sensor, name, events), the [`OTHER`] buckets last.
    pub fn iter(&self) -> impl Iterator<Item = (SensorKind, &str, u64)> + '_ {
        let tracked = self.tracked.iter().map(|f| (f.sensor, &*f.name, f.events));
        let other = SensorKind::ALL
            .into_iter()
            .filter(|k| self.other[k.index()] > 0)
            .map(|k| (k, OTHER, self.other[k.index()]));
        tracked.chain(other)
    }

    /// No unknown field seen.
    pub fn is_empty(&self) -> bool {
        self.tracked.is_empty()
    }
}

fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use SensorKind::*;

    #[test]
    fn names_are_counted_per_sensor_and_name() {
        let mut u = UnknownFields::default();
        assert_eq!(u.note(Wearable, "accel"), Noted::First);
        assert_eq!(u.note(Wearable, "accel"), Noted::Again);
        assert_eq!(u.note(Pitch, "accel"), Noted::First);
        let all: Vec<_> = u.iter().collect();
        assert_eq!(all, [(Wearable, "accel", 2), (Pitch, "accel", 1)]);
    }

    #[test]
    fn names_beyond_the_cap_are_counted_as_other_and_memory_stays_bounded() {
        let mut u = UnknownFields::default();
        for i in 0..MAX_TRACKED {
            assert_eq!(u.note(Crowd, &format!("f{i}")), Noted::First);
        }
        assert_eq!(u.note(Crowd, "late-1"), Noted::Overflow);
        assert_eq!(u.note(Pitch, "late-2"), Noted::Again);
        assert_eq!(
            u.note(Crowd, "f3"),
            Noted::Again,
            "tracked names still count"
        );
        for i in 0..10_000 {
            u.note(Crowd, &format!("more{i}"));
        }
        assert_eq!(u.tracked.len(), MAX_TRACKED);
        let other: Vec<_> = u.iter().filter(|(_, n, _)| *n == OTHER).collect();
        assert_eq!(other, [(Pitch, OTHER, 1), (Crowd, OTHER, 10_001)]);
    }

    #[test]
    fn a_real_field_named_other_is_the_bucket_so_no_series_repeats() {
        let mut u = UnknownFields::default();
        u.note(Generic, OTHER);
        for i in 0..MAX_TRACKED {
            u.note(Generic, &format!("f{i}"));
        }
        let others: Vec<_> = u.iter().filter(|(_, n, _)| *n == OTHER).collect();
        assert_eq!(others, [(Generic, OTHER, 2)]);
    }

    #[test]
    fn long_names_are_cut_at_a_character_boundary() {
        let mut u = UnknownFields::default();
        let long = "é".repeat(100);
        u.note(Generic, &long);
        let (_, name, _) = u.iter().next().unwrap();
        assert!(name.len() <= MAX_NAME_BYTES && long.starts_with(name));
    }

    #[test]
    fn every_spec_field_is_known_and_misspellings_are_not() {
        for k in SensorKind::ALL {
            for m in k.metrics() {
                assert!(is_known_field(k, m));
            }
            assert!(is_known_field(k, "event_ts") && is_known_field(k, "match_id"));
            assert!(!is_known_field(k, "accel") && !is_known_field(k, "body_temp"));
        }
        assert!(is_known_field(Generic, "value"));
        assert!(!is_known_field(Wearable, "value"));
        assert!(!is_known_field(Pitch, "heart_rate"));
    }
}
