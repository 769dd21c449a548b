//! Checks every key of a [`ConfigFile`] and builds the typed [`Config`].

use super::file::*;
use crate::model::{Micros, SensorKind};
use crate::util::time::MICROS_PER_SEC;
use crate::util::units::parse_duration;
use std::path::PathBuf;

/// Why a configuration could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// Path given.
        path: String,
        /// OS error.
        source: std::io::Error,
    },
    /// The TOML is malformed, has an unknown key or a value of the wrong type.
    #[error("config {origin}: {message}")]
    Parse {
        /// File name.
        origin: String,
        /// The parser's message, naming the key and line.
        message: String,
    },
    /// Well-formed, but some values are not acceptable. Lists every problem.
    #[error("invalid configuration:\n{}", .problems.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// One line per problem, each starting with the key.
        problems: Vec<String>,
    },
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

/// The validated configuration, in the units the pipeline works in.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file as parsed, defaults filled (printed by `check-config`).
    pub file: ConfigFile,
    /// Venue id.
    pub venue_id: String,
    /// Gateway id.
    pub gateway_id: String,
    /// Detector readings per key.
    pub window: usize,
    /// z-score threshold.
    pub threshold: f64,
    /// Readings before alerts start.
    pub min_baseline: usize,
    /// Idle key timeout, µs.
    pub idle_timeout: Micros,
    /// Live key cap.
    pub max_keys: usize,
    /// Window size, µs.
    pub window_size: Micros,
    /// Watermark delay, µs.
    pub watermark_delay: Micros,
    /// Open group cap.
    pub max_open_groups: usize,
    /// Fatigue baseline windows.
    pub fatigue_baseline: usize,
    /// Fatigue k.
    pub fatigue_k: f64,
    /// Fatigue history cap.
    pub fatigue_max_players: usize,
    /// Longest input line.
    pub max_event_bytes: usize,
    /// Future tolerance, µs.
    pub max_future: Micros,
    /// Per-metric ranges.
    pub ranges: Vec<MetricRange>,
    /// Store URL.
    pub store: String,
    /// Spool folder.
    pub spool_dir: PathBuf,
    /// Flush interval, µs.
    pub flush_interval: Micros,
    /// Rows per file cap.
    pub max_rows_per_file: usize,
    /// Use snappy instead of zstd.
    pub snappy: bool,
    /// Write `raw`.
    pub raw: bool,
    /// Spool byte ceiling.
    pub spool_max_bytes: u64,
    /// Free disk to keep.
    pub min_free_disk: u64,
    /// Per-attempt upload timeout, µs.
    pub upload_timeout: Micros,
    /// Retry interval after a permanent upload error, µs.
    pub permanent_retry: Micros,
    /// Journal fsync interval, µs.
    pub sync_interval: Micros,
    /// Progress interval, µs.
    pub progress_interval: Micros,
    /// Prometheus listen address, if any.
    pub metrics_listen: Option<String>,
    /// `/healthz` grace, µs.
    pub health_grace: Micros,
    /// Input queue capacity.
    pub input_queue: usize,
    /// Encoder queue capacity.
    pub encode_queue: usize,
}

/// Ceiling of the detector's state (`max_keys × window × 16` bytes): 1 GiB,
/// which a 32-bit Raspberry Pi OS process can still map.
pub const MAX_DETECTOR_BYTES: u64 = 1 << 30;

fn valid_id(s: &str) -> bool {
    (1..=32).contains(&s.len())
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

struct Problems(Vec<String>);

impl Problems {
    fn duration(&mut self, key: &str, value: &str, min: Micros) -> Micros {
        match parse_duration(value) {
            Ok(d) if d >= min => d,
            Ok(_) => {
                self.0.push(format!(
                    "{key}: {value:?} is too short (at least {} ms)",
                    min / 1000
                ));
                min
            }
            Err(e) => {
                self.0.push(format!("{key}: {e}"));
                min
            }
        }
    }

    fn size(&mut self, key: &str, value: &str, min: u64) -> u64 {
        match crate::util::units::parse_size(value) {
            Ok(n) if n >= min => n,
            Ok(_) => {
                self.0.push(format!(
                    "{key}: {value:?} is too small (at least {min} bytes)"
                ));
                min
            }
            Err(e) => {
                self.0.push(format!("{key}: {e}"));
                min
            }
        }
    }

    fn check(&mut self, ok: bool, message: impl FnOnce() -> String) {
        if !ok {
            self.0.push(message());
        }
    }
}

impl ConfigFile {
    /// Checks every key; on success the typed config, else every problem found.
    pub fn validate(self) -> Result<Config, ConfigError> {
        let mut p = Problems(Vec::new());
        let f = &self;
        p.check(valid_id(&f.venue.id), || {
            format!(
                "venue.id: {:?} must be 1-32 characters of a-z, 0-9 and '-'",
                f.venue.id
            )
        });
        p.check(valid_id(&f.venue.gateway_id), || {
            format!(
                "venue.gateway_id: {:?} must be 1-32 characters of a-z, 0-9 and '-'",
                f.venue.gateway_id
            )
        });
        let d = &f.detector;
        p.check((2..=100_000).contains(&d.window), || {
            format!("detector.window: {} must be between 2 and 100000", d.window)
        });
        p.check(d.threshold.is_finite() && d.threshold > 0.0, || {
            format!(
                "detector.threshold: {} must be a positive number",
                d.threshold
            )
        });
        p.check(d.min_baseline >= 2 && d.min_baseline <= d.window, || {
            format!(
                "detector.min_baseline: {} must be between 2 and detector.window ({})",
                d.min_baseline, d.window
            )
        });
        let idle_timeout = p.duration("detector.idle_timeout", &d.idle_timeout, MICROS_PER_SEC);
        p.check((1..=10_000_000).contains(&d.max_keys), || {
            format!(
                "detector.max_keys: {} must be between 1 and 10000000",
                d.max_keys
            )
        });
        // The detector's windows are allocated up front (and paged in as keys
        // appear): max_keys x window x 16 bytes must fit the machine.
        let state = d.max_keys as u64 * d.window as u64 * 16;
        p.check(state <= MAX_DETECTOR_BYTES, || {
            format!(
                "detector.max_keys x detector.window: {} x {} readings need {} MiB of memory; at most {} MiB is allowed (lower one of them)",
                d.max_keys,
                d.window,
                state >> 20,
                MAX_DETECTOR_BYTES >> 20
            )
        });
        let w = &f.windows;
        let window_size = p.duration("windows.size", &w.size, MICROS_PER_SEC);
        let watermark_delay = p.duration("windows.watermark_delay", &w.watermark_delay, 0);
        p.check(w.max_open_groups >= 1, || {
            "windows.max_open_groups: must be at least 1".to_string()
        });
        let fa = &f.fatigue;
        p.check(fa.baseline_windows >= 2, || {
            format!(
                "fatigue.baseline_windows: {} must be at least 2 (a standard deviation needs two windows)",
                fa.baseline_windows
            )
        });
        p.check(fa.k.is_finite() && fa.k >= 0.0, || {
            format!("fatigue.k: {} must be a non-negative number", fa.k)
        });
        p.check(fa.max_players >= 1, || {
            "fatigue.max_players: must be at least 1".to_string()
        });
        let l = &f.limits;
        let max_event_bytes = match l.max_event_bytes.bytes() {
            Ok(n) if (64..=1 << 20).contains(&n) => n as usize,
            Ok(n) => {
                p.0.push(format!(
                    "limits.max_event_bytes: {n} must be between 64 and 1048576 bytes"
                ));
                4096
            }
            Err(e) => {
                p.0.push(format!("limits.max_event_bytes: {e}"));
                4096
            }
        };
        let max_future = p.duration("limits.max_future", &l.max_future, 0);
        let mut ranges = Vec::new();
        for (i, r) in l.range.iter().enumerate() {
            let key = format!("limits.range[{i}]");
            let Some(sensor) = SensorKind::parse(&r.sensor) else {
                p.0.push(format!(
                    "{key}.sensor: {:?} is not one of wearable, pitch, crowd, generic",
                    r.sensor
                ));
                continue;
            };
            let generic_ok = (1..=64).contains(&r.metric.len())
                && r.metric
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'));
            if sensor == SensorKind::Generic && !generic_ok {
                p.0.push(format!(
                    "{key}.metric: {:?} must be 1-64 characters of A-Z, a-z, 0-9, '_', '.', '-' (a generic metric name)",
                    r.metric
                ));
                continue;
            }
            if sensor != SensorKind::Generic && !sensor.metrics().contains(&r.metric.as_str()) {
                p.0.push(format!(
                    "{key}.metric: {:?} is not a {sensor} metric (one of {})",
                    r.metric,
                    sensor.metrics().join(", ")
                ));
                continue;
            }
            let (min, max) = (r.min.unwrap_or(f64::MIN), r.max.unwrap_or(f64::MAX));
            if min.is_nan() || max.is_nan() || min > max {
                p.0.push(format!("{key}: min {min} must not exceed max {max}"));
                continue;
            }
            ranges.push(MetricRange {
                sensor,
                metric: r.metric.clone(),
                min,
                max,
            });
        }
        let o = &f.output;
        p.check(
            ["file://", "s3://", "gs://", "az://"]
                .iter()
                .any(|s| o.store.starts_with(s)),
            || {
                format!(
                    "output.store: {:?} must be a URL: file:///path, s3://bucket/prefix, gs://bucket/prefix or az://container/prefix",
                    o.store
                )
            },
        );
        if let Some(path) = o.store.strip_prefix("file://") {
            p.check(path.starts_with('/') || path.starts_with("./") || path.starts_with("../"), || {
                format!(
                    "output.store: {:?} must name a folder as file:///absolute/path or file://./relative/path",
                    o.store
                )
            });
        }
        for scheme in ["s3://", "gs://", "az://"] {
            if let Some(rest) = o.store.strip_prefix(scheme) {
                p.check(!rest.trim_matches('/').is_empty(), || {
                    format!("output.store: {:?} must name a bucket or container, e.g. {scheme}bucket/prefix", o.store)
                });
            }
        }
        p.check(!o.spool_dir.is_empty(), || {
            "output.spool_dir: must name a folder".to_string()
        });
        let flush_interval = p.duration(
            "output.flush_interval",
            &o.flush_interval,
            MICROS_PER_SEC / 10,
        );
        p.check(o.max_rows_per_file >= 1, || {
            "output.max_rows_per_file: must be at least 1".to_string()
        });
        p.check(matches!(o.compression.as_str(), "zstd" | "snappy"), || {
            format!(
                "output.compression: {:?} must be \"zstd\" or \"snappy\"",
                o.compression
            )
        });
        let spool_max_bytes = p.size("output.spool_max_bytes", &o.spool_max_bytes, 1 << 20);
        let min_free_disk = p.size("output.min_free_disk", &o.min_free_disk, 0);
        let upload_timeout = p.duration("output.upload_timeout", &o.upload_timeout, MICROS_PER_SEC);
        let permanent_retry =
            p.duration("output.permanent_retry", &o.permanent_retry, MICROS_PER_SEC);
        let sync_interval = p.duration("output.sync_interval", &o.sync_interval, 1000);
        let scheme = o.store.split("://").next().unwrap_or("");
        for (section, used, wanted) in [
            ("output.s3", o.s3.is_some(), "s3"),
            ("output.azure", o.azure.is_some(), "az"),
            ("output.gcs", o.gcs.is_some(), "gs"),
        ] {
            p.check(!used || scheme == wanted, || {
                format!(
                    "[{section}]: only used with a {wanted}:// store, but output.store is {:?}",
                    o.store
                )
            });
        }
        for (key, credentials) in [
            (
                "output.s3.credentials",
                o.s3.as_ref().map(|s| &s.credentials),
            ),
            (
                "output.azure.credentials",
                o.azure.as_ref().map(|s| &s.credentials),
            ),
            (
                "output.gcs.credentials",
                o.gcs.as_ref().map(|s| &s.credentials),
            ),
        ] {
            if let Some(c) = credentials {
                p.check(matches!(c.as_str(), "explicit" | "instance"), || {
                    format!("{key}: {c:?} must be \"explicit\" (credentials from the environment or files) or \"instance\" (the cloud's instance metadata service)")
                });
            }
        }
        let m = &f.metrics;
        let progress_interval = p.duration(
            "metrics.progress_interval",
            &m.progress_interval,
            MICROS_PER_SEC / 10,
        );
        let health_grace = p.duration("metrics.health_grace", &m.health_grace, 0);
        let host_port = m
            .listen
            .rsplit_once(':')
            .is_some_and(|(h, port)| !h.is_empty() && port.parse::<u16>().is_ok());
        p.check(m.listen.is_empty() || host_port, || {
            format!(
                "metrics.listen: {:?} must be host:port, e.g. 127.0.0.1:9898 or localhost:9898, or \"\"",
                m.listen
            )
        });
        let pl = &f.pipeline;
        p.check(pl.input_queue >= 1 && pl.encode_queue >= 1, || {
            "pipeline.input_queue, pipeline.encode_queue: must be at least 1".to_string()
        });
        if let Some(s) = &f.sources.simulator {
            p.check(s.rate.is_finite() && s.rate > 0.0, || {
                format!(
                    "sources.simulator.rate: {} must be a positive number of events per second",
                    s.rate
                )
            });
            p.check(
                s.players + s.pitch_devices + s.crowd_zones + s.generic_devices > 0,
                || "sources.simulator: at least one of players, pitch_devices, crowd_zones, generic_devices must be > 0".to_string(),
            );
            p.check((0.0..=1.0).contains(&s.anomaly_rate), || {
                format!(
                    "sources.simulator.anomaly_rate: {} must be between 0 and 1",
                    s.anomaly_rate
                )
            });
            p.check((0.0..=1.0).contains(&s.fatigue_rate), || {
                format!(
                    "sources.simulator.fatigue_rate: {} must be between 0 and 1",
                    s.fatigue_rate
                )
            });
        }
        p.0.extend(super::sources::check(
            &f.sources.serial,
            &f.sources.mqtt,
            &f.alerts,
        ));
        p.check(
            matches!(
                f.log.level.as_str(),
                "error" | "warn" | "info" | "debug" | "trace"
            ),
            || {
                format!(
                    "log.level: {:?} must be error, warn, info, debug or trace",
                    f.log.level
                )
            },
        );
        p.check(matches!(f.log.format.as_str(), "text" | "json"), || {
            format!(
                "log.format: {:?} must be \"text\" or \"json\"",
                f.log.format
            )
        });
        if !p.0.is_empty() {
            return Err(ConfigError::Invalid { problems: p.0 });
        }
        Ok(Config {
            venue_id: self.venue.id.clone(),
            gateway_id: self.venue.gateway_id.clone(),
            window: self.detector.window as usize,
            threshold: self.detector.threshold,
            min_baseline: self.detector.min_baseline as usize,
            idle_timeout,
            max_keys: self.detector.max_keys as usize,
            window_size,
            watermark_delay,
            max_open_groups: self.windows.max_open_groups as usize,
            fatigue_baseline: self.fatigue.baseline_windows as usize,
            fatigue_k: self.fatigue.k,
            fatigue_max_players: self.fatigue.max_players as usize,
            max_event_bytes,
            max_future,
            ranges,
            store: self.output.store.clone(),
            spool_dir: PathBuf::from(&self.output.spool_dir),
            flush_interval,
            max_rows_per_file: self.output.max_rows_per_file as usize,
            snappy: self.output.compression == "snappy",
            raw: self.output.raw,
            spool_max_bytes,
            min_free_disk,
            upload_timeout,
            permanent_retry,
            sync_interval,
            progress_interval,
            health_grace,
            metrics_listen: (!self.metrics.listen.is_empty()).then(|| self.metrics.listen.clone()),
            input_queue: self.pipeline.input_queue as usize,
            encode_queue: self.pipeline.encode_queue as usize,
            file: self,
        })
    }
}

impl Config {
    /// The effective configuration as TOML, defaults filled in.
    pub fn to_toml(&self) -> String {
        // Serialising plain structs of strings and numbers cannot fail.
        toml::to_string_pretty(&self.file).unwrap_or_else(|e| format!("# cannot print: {e}\n"))
    }
}
