//! What can go wrong with a config, and the collector each section's
//! `validate` uses to gather every problem of its keys at once.

use crate::model::{Micros, SensorKind};
use crate::util::units::{parse_duration, parse_size};

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

/// The problems found in one section so far, one line each, each starting
/// with its key. The helpers return a stand-in value when a key is wrong,
/// so that checking can go on and report the rest.
#[derive(Debug, Default)]
pub struct Problems(Vec<String>);

impl Problems {
    /// Records one problem.
    pub fn push(&mut self, problem: String) {
        self.0.push(problem);
    }

    /// Records `message()` unless `ok`.
    pub fn check(&mut self, ok: bool, message: impl FnOnce() -> String) {
        if !ok {
            self.0.push(message());
        }
    }

    /// A duration string of at least `min` µs (else `min`).
    pub fn duration(&mut self, key: &str, value: &str, min: Micros) -> Micros {
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

    /// A size string of at least `min` bytes (else `min`).
    pub fn size(&mut self, key: &str, value: &str, min: u64) -> u64 {
        match parse_size(value) {
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

    /// An optional sensor kind name.
    pub fn sensor_kind(&mut self, key: &str, kind: &Option<String>) {
        if let Some(s) = kind {
            if SensorKind::parse(s).is_none() {
                self.0.push(not_a_sensor_kind(key, s));
            }
        }
    }

    /// The value of a section's `validate`, its problems recorded here.
    pub fn keep<T>(&mut self, checked: Result<T, Vec<String>>) -> Option<T> {
        checked.map_err(|problems| self.0.extend(problems)).ok()
    }

    /// Every problem recorded.
    pub fn into_vec(self) -> Vec<String> {
        self.0
    }

    /// `value` if no problem was found, else every problem.
    pub fn finish<T>(self, value: T) -> Result<T, Vec<String>> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self.0)
        }
    }
}

/// The problem with `key`'s value `s`, which names no sensor kind.
pub fn not_a_sensor_kind(key: &str, s: &str) -> String {
    format!("{key}: {s:?} is not one of wearable, pitch, crowd, generic")
}
