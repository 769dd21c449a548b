//! `[log]`: log format and level.

use super::error::Problems;

crate::config::section! {
    /// `[log]`.
    #[serde(deny_unknown_fields)]
    pub struct LogSection {
        /// `error`, `warn`, `info`, `debug` or `trace`. `PITCHSIDE_LOG` overrides.
        level: String = "info".into(),
        /// `text` or `json`.
        format: String = "text".into(),
    }
}

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
