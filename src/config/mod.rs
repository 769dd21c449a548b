//! Configuration: one TOML file per venue (SPEC §7).
//!
//! Parsing is in two steps. [`ConfigFile`] mirrors the TOML exactly, with
//! serde defaults for every optional key, and is what `check-config` prints.
//! [`ConfigFile::validate`] then checks every key, collects *every* problem
//! with the key's name, and builds the typed [`Config`] the pipeline uses.

mod board;
mod file;
mod sources;
mod validate;

pub use board::{detect as detect_board, load_with_board, Board, BoardInfo};
pub use file::*;
pub use validate::{Config, ConfigError, MetricRange};

use std::path::Path;

/// Reads, parses and validates a config file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })?;
    parse(&text, &path.display().to_string())?.validate()
}

/// Parses TOML text into a [`ConfigFile`] (defaults filled, not yet validated).
pub fn parse(text: &str, origin: &str) -> Result<ConfigFile, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        origin: origin.to_string(),
        message: e.to_string(),
    })
}

/// The built-in demo configuration (`config/demo.toml`): simulator → `./outbox`.
pub const DEMO: &str = include_str!("../../config/demo.toml");

#[cfg(test)]
mod tests;
