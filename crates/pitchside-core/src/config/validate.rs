//! The validated configuration: every section checked by its own
//! `validate`, every problem of every section reported at once.

use super::alerts::AlertsConfig;
use super::console::ConsoleConfig;
use super::detector::DetectorConfig;
use super::error::{ConfigError, Problems};
use super::fatigue::FatigueConfig;
use super::file::ConfigFile;
use super::health::HealthConfig;
use super::limits::LimitsConfig;
use super::load::LoadConfig;
use super::log::LogConfig;
use super::metrics::MetricsConfig;
use super::output::OutputConfig;
use super::pipeline::PipelineConfig;
use super::sources::{Inputs, SourcesSection};
use super::venue::VenueConfig;
use super::windows::WindowsConfig;

/// The validated configuration, section by section, in the units the
/// pipeline works in.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file as parsed, defaults filled (printed by `check-config`).
    pub file: ConfigFile,
    /// `[venue]`.
    pub venue: VenueConfig,
    /// `[detector]`.
    pub detector: DetectorConfig,
    /// `[windows]`.
    pub windows: WindowsConfig,
    /// `[fatigue]`.
    pub fatigue: FatigueConfig,
    /// `[load]`, with its roster.
    pub load: LoadConfig,
    /// `[limits]`.
    pub limits: LimitsConfig,
    /// `[output]`.
    pub output: OutputConfig,
    /// `[metrics]`.
    pub metrics: MetricsConfig,
    /// `[pipeline]`.
    pub pipeline: PipelineConfig,
    /// `[sources.*]`, checked.
    pub sources: SourcesSection,
    /// The serial ports and MQTT subscriptions with their formats (SPEC §9).
    pub inputs: Inputs,
    /// `[alerts]`.
    pub alerts: AlertsConfig,
    /// `[log]`.
    pub log: LogConfig,
    /// `[health]`.
    pub health: HealthConfig,
    /// `[console]`.
    pub console: ConsoleConfig,
}

impl ConfigFile {
    /// Checks every key; on success the typed config, else every problem
    /// found, section by section in the order of the file's sections.
    pub fn validate(self) -> Result<Config, ConfigError> {
        let mut p = Problems::default();
        let f = &self;
        let venue = p.keep(f.venue.validate());
        let detector = p.keep(f.detector.validate());
        let windows = p.keep(f.windows.validate());
        let fatigue = p.keep(f.fatigue.validate());
        let load = p.keep(f.load.validate());
        let limits = p.keep(f.limits.validate());
        let output = p.keep(f.output.validate());
        let metrics = p.keep(f.metrics.validate());
        let pipeline = p.keep(f.pipeline.validate());
        let sources = p.keep(f.sources.validate());
        let inputs = p.keep(f.sources.inputs());
        let alerts = p.keep(f.alerts.validate());
        let log = p.keep(f.log.validate());
        let health = p.keep(f.health.validate());
        let console = p.keep(f.console.validate());
        let (
            Some(venue),
            Some(detector),
            Some(windows),
            Some(fatigue),
            Some(load),
            Some(limits),
            Some(output),
            Some(metrics),
            Some(pipeline),
            Some(sources),
            Some(inputs),
            Some(alerts),
            Some(log),
            Some(health),
            Some(console),
        ) = (
            venue, detector, windows, fatigue, load, limits, output, metrics, pipeline, sources,
            inputs, alerts, log, health, console,
        )
        else {
            return Err(ConfigError::Invalid {
                problems: p.into_vec(),
            });
        };
        Ok(Config {
            file: self,
            venue,
            detector,
            windows,
            fatigue,
            load,
            limits,
            output,
            metrics,
            pipeline,
            sources,
            inputs,
            alerts,
            log,
            health,
            console,
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
