//! Configuration: one TOML file per venue (SPEC §7).
//!
//! Parsing is in two steps. [`ConfigFile`] mirrors the TOML exactly, with
//! serde defaults for every optional key, and is what `check-config` prints.
//! [`ConfigFile::validate`] then checks every key, collects *every* problem
//! with the key's name, and builds the typed [`Config`] the pipeline uses.
//!
//! One module per section declares its keys once (`section!`: doc text,
//! type, default or required), which makes the struct as parsed
//! (`DetectorSection`), its `Default`, its keys for the schema walker and its
//! rows of the configuration reference ([`mod@reference`], printed by
//! `check-config --reference`). The module also owns the section's `validate`
//! and its checked form (`DetectorConfig`), which is what its component runs
//! with; [`Config`] is their composition. The sources, whose consumers take
//! them as written (`[sources.*]`), are their own checked form.

pub mod alerts;
mod board;
pub mod broker;
pub mod console;
pub mod detector;
mod error;
pub mod fatigue;
mod file;
pub mod health;
pub mod limits;
pub mod load;
pub mod log;
pub mod metrics;
pub mod output;
pub mod pipeline;
pub mod reload;
mod schema;
pub mod sources;
mod validate;
pub mod venue;
pub mod windows;

pub use alerts::{AlertsConfig, AlertsSection};
pub use board::{detect as detect_board, load_with_board, Board, BoardInfo};
pub use broker::{MqttBroker, MqttTls};
pub use console::{ConsoleConfig, ConsoleSection, ConsoleTls};
pub use detector::{DetectorConfig, DetectorSection};
pub use error::ConfigError;
pub use fatigue::{FatigueConfig, FatigueSection};
pub use file::ConfigFile;
pub use health::{HealthConfig, HealthSection};
pub use limits::{ByteSize, LimitsConfig, LimitsSection, MetricRange, RangeEntry};
pub use load::{
    LoadConfig, LoadSection, PositionSection, Profile, Roster, RosterEntry, Rule, RuleSection,
    Watch,
};
pub use log::{LogConfig, LogSection};
pub use metrics::{MetricsConfig, MetricsSection};
pub use output::cloud::{AzureSection, Credentials, GcsSection, S3Section};
pub use output::{OutputConfig, OutputSection};
pub use pipeline::{PipelineConfig, PipelineSection};
pub(crate) use schema::declare::section;
pub use schema::hints::exact_size;
pub use schema::reference;
pub use sources::mqtt::{MqttSourceSection, MqttSubscription};
pub use sources::serial::SerialSection;
pub use sources::simulator::SimulatorSection;
pub use sources::SourcesSection;
pub use validate::Config;
pub use venue::{VenueConfig, VenueSection};
pub use windows::{WindowsConfig, WindowsSection};

use std::path::Path;

/// Reads, parses and validates a config file. Every problem — unknown keys,
/// values of the wrong type, missing keys, invalid values — is reported at once.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.display().to_string(),
        source,
    })?;
    parse_validated(&text, &path.display().to_string())
}

/// Parses TOML text into a [`ConfigFile`] (defaults filled, not yet validated).
/// Unknown keys, values of the wrong type and missing keys are all reported.
pub fn parse(text: &str, origin: &str) -> Result<ConfigFile, ConfigError> {
    match structure(toml_table(text, origin)?, origin) {
        (Some(file), problems) if problems.is_empty() => Ok(file),
        (_, problems) => Err(ConfigError::Invalid { problems }),
    }
}

/// Parses and validates TOML text, reporting every problem of either step.
pub fn parse_validated(text: &str, origin: &str) -> Result<Config, ConfigError> {
    build(toml_table(text, origin)?, origin)
}

/// TOML syntax (one error: the parser cannot go on past it).
fn toml_table(text: &str, origin: &str) -> Result<toml::Table, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        origin: origin.to_string(),
        message: e.to_string(),
    })
}

/// Checks the shape of `table` against the schema and deserializes what is
/// left of it: the file (if the remaining keys are enough) and every problem.
fn structure(mut table: toml::Table, origin: &str) -> (Option<ConfigFile>, Vec<String>) {
    let checked = schema::check(&mut table);
    let mut problems = checked.problems;
    if checked.incomplete {
        // Serde would fill the missing required keys with stand-ins.
        return (None, problems);
    }
    match toml::Value::Table(table).try_into::<ConfigFile>() {
        Ok(file) => (Some(file), problems),
        Err(e) => {
            if problems.is_empty() {
                // The schema let through something serde refuses: say what serde says.
                problems.push(format!("{origin}: {}", e.message()));
            }
            (None, problems)
        }
    }
}

/// Shape and values of a parsed table, every problem of both at once.
fn build(table: toml::Table, origin: &str) -> Result<Config, ConfigError> {
    let (file, mut problems) = structure(table, origin);
    if let Some(file) = file {
        match file.validate() {
            Ok(c) if problems.is_empty() => return Ok(c),
            Ok(_) => {}
            Err(ConfigError::Invalid { problems: more }) => problems.extend(more),
            Err(e) => return Err(e),
        }
    }
    Err(ConfigError::Invalid { problems })
}

/// The built-in demo configuration (`config/demo.toml`): simulator → `./outbox`.
pub const DEMO: &str = include_str!("../../../../config/demo.toml");

#[cfg(test)]
mod tests;
