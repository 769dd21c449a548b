//! `[log]`: log format and level.

use super::error::Problems;
use super::schema::keys::{k, Key, Ty::Text};
use serde::{Deserialize, Serialize};

/// `[log]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogSection {
    /// `error`, `warn`, `info` (default), `debug` or `trace`. `PITCHSIDE_LOG` overrides.
    pub level: String,
    /// `text` (default) or `json`.
    pub format: String,
}

impl Default for LogSection {
    fn default() -> Self {
        LogSection {
            level: "info".into(),
            format: "text".into(),
        }
    }
}

/// The keys of `[log]`.
pub(super) const KEYS: &[Key] = &[k("level", Text), k("format", Text)];

/// `[log]`, checked.
#[derive(Debug, Clone)]
pub struct LogConfig {
    /// `error`, `warn`, `info`, `debug` or `trace`.
    pub level: String,
    /// JSON lines instead of text.
    pub json: bool,
}

impl LogSection {
    /// Checks the level and the format.
    pub fn validate(&self) -> Result<LogConfig, Vec<String>> {
        let mut p = Problems::default();
        p.check(
            matches!(
                self.level.as_str(),
                "error" | "warn" | "info" | "debug" | "trace"
            ),
            || {
                format!(
                    "log.level: {:?} must be error, warn, info, debug or trace",
                    self.level
                )
            },
        );
        p.check(matches!(self.format.as_str(), "text" | "json"), || {
            format!("log.format: {:?} must be \"text\" or \"json\"", self.format)
        });
        p.finish(LogConfig {
            level: self.level.clone(),
            json: self.format == "json",
        })
    }
}
