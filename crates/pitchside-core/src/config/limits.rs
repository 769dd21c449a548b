//! `[limits]`: input limits and per-metric ranges (SPEC §1, §3).

use super::error::{not_a_sensor_kind, Problems};
use crate::model::{Micros, SensorKind};
use serde::{Deserialize, Serialize};

crate::config::section! {
    /// `[limits]`.
    #[serde(deny_unknown_fields)]
    pub struct LimitsSection {
        /// Longest accepted line or message: bytes, or a size string such as "4KiB".
        max_event_bytes: ByteSize [BytesOrSize] = ByteSize::Bytes(4096),
        /// Live sources reject event times further ahead of the clock.
        max_future: String [Duration] = "5m".into(),
        /// Optional per-metric ranges; a value outside rejects the event (`out_of_range`).
        range: Vec<RangeEntry> = Vec::new(),
    }
}

crate::config::section! {
    /// `[[limits.range]]`: an accepted interval for one metric.
    #[serde(deny_unknown_fields)]
    pub struct RangeEntry {
        /// Sensor kind.
        sensor: String,
        /// Metric name (for `generic`, the event's `metric`).
        metric: String,
        /// Smallest accepted value (inclusive).
        min: Option<f64> = None,
        /// Largest accepted value (inclusive).
        max: Option<f64> = None,
    }
}

/// A size given as a plain number of bytes or as a string with a unit
/// (`B`, `KiB`, `MiB`, `GiB`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ByteSize {
    /// A number of bytes.
    Bytes(u64),
    /// A string such as "4KiB".
    Text(String),
}

impl ByteSize {
    /// The size in bytes.
    pub fn bytes(&self) -> Result<u64, String> {
        match self {
            ByteSize::Bytes(n) => Ok(*n),
            ByteSize::Text(t) => crate::util::units::parse_size(t),
        }
    }
}

/// An accepted interval for one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricRange {
    /// Sensor kind.
    pub sensor: SensorKind,
    /// Metric name.
    pub metric: String,
    /// Inclusive lower bound.
    pub min: f64,
    /// Inclusive upper bound.
    pub max: f64,
}

/// `[limits]`, checked.
#[derive(Debug, Clone)]
pub struct LimitsConfig {
    /// Longest input line.
    pub max_event_bytes: usize,
    /// Future tolerance, µs.
    pub max_future: Micros,
    /// Per-metric ranges.
    pub ranges: Vec<MetricRange>,
}

impl LimitsSection {
    /// Checks every key and every range.
    pub fn validate(&self) -> Result<LimitsConfig, Vec<String>> {
        let mut p = Problems::default();
        let max_event_bytes = match self.max_event_bytes.bytes() {
            Ok(n) if (64..=1 << 20).contains(&n) => n as usize,
            Ok(n) => {
                p.push(format!(
                    "limits.max_event_bytes: {n} must be between 64 and 1048576 bytes"
                ));
                4096
            }
            Err(e) => {
                p.push(format!("limits.max_event_bytes: {e}"));
                4096
            }
        };
        let max_future = p.duration("limits.max_future", &self.max_future, 0);
        let mut ranges = Vec::new();
        for (i, r) in self.range.iter().enumerate() {
            match r.validate(&format!("limits.range[{i}]")) {
                Ok(range) => ranges.push(range),
                Err(problem) => p.push(problem),
            }
        }
        p.finish(LimitsConfig {
            max_event_bytes,
            max_future,
            ranges,
        })
    }
}

impl RangeEntry {
    /// The range, or the first problem with it (`key` is `limits.range[i]`).
    fn validate(&self, key: &str) -> Result<MetricRange, String> {
        let Some(sensor) = SensorKind::parse(&self.sensor) else {
            return Err(not_a_sensor_kind(&format!("{key}.sensor"), &self.sensor));
        };
        let generic_ok = (1..=64).contains(&self.metric.len())
            && self
                .metric
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
        if sensor == SensorKind::Generic && !generic_ok {
            return Err(format!(
                "{key}.metric: {:?} must be 1-64 characters of A-Z, a-z, 0-9, '_', '.', '-' (a generic metric name)",
                self.metric
            ));
        }
        if sensor != SensorKind::Generic && !sensor.metrics().contains(&self.metric.as_str()) {
            return Err(format!(
                "{key}.metric: {:?} is not a {sensor} metric (one of {})",
                self.metric,
                sensor.metrics().join(", ")
            ));
        }
        let (min, max) = (self.min.unwrap_or(f64::MIN), self.max.unwrap_or(f64::MAX));
        if min.is_nan() || max.is_nan() || min > max {
            return Err(format!("{key}: min {min} must not exceed max {max}"));
        }
        Ok(MetricRange {
            sensor,
            metric: self.metric.clone(),
            min,
            max,
        })
    }
}
