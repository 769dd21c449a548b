//! The TOML file as written by a person: one section struct per table, each
//! in its own module with its defaults, its keys and its `validate`.

use super::alerts::{self, AlertsSection};
use super::console::{self, ConsoleSection};
use super::detector::{self, DetectorSection};
use super::fatigue::{self, FatigueSection};
use super::health::{self, HealthSection};
use super::limits::{self, LimitsSection};
use super::log::{self, LogSection};
use super::metrics::{self, MetricsSection};
use super::output::{self, OutputSection};
use super::pipeline::{self, PipelineSection};
use super::schema::keys::{k, req, Key, Ty::Table};
use super::sources::{self, SourcesSection};
use super::venue::{self, VenueSection};
use super::windows::{self, WindowsSection};
use serde::{Deserialize, Serialize};

/// The whole file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[venue]`: who this gateway is.
    pub venue: VenueSection,
    /// `[detector]`: rolling z-score (SPEC §2).
    #[serde(default)]
    pub detector: DetectorSection,
    /// `[windows]`: event-time windows (SPEC §3).
    #[serde(default)]
    pub windows: WindowsSection,
    /// `[fatigue]`: fatigue alerts (SPEC §4).
    #[serde(default)]
    pub fatigue: FatigueSection,
    /// `[limits]`: input limits and per-metric ranges (SPEC §1, §3).
    #[serde(default)]
    pub limits: LimitsSection,
    /// `[output]`: tables, spool and store (SPEC §5).
    pub output: OutputSection,
    /// `[metrics]`: progress rows and the Prometheus endpoint (SPEC §6).
    #[serde(default)]
    pub metrics: MetricsSection,
    /// `[pipeline]`: queue capacities between stages.
    #[serde(default)]
    pub pipeline: PipelineSection,
    /// `[sources.*]`: where events come from.
    #[serde(default)]
    pub sources: SourcesSection,
    /// `[alerts]`: real-time alert output (MQTT).
    #[serde(default)]
    pub alerts: AlertsSection,
    /// `[log]`: log format and level.
    #[serde(default)]
    pub log: LogSection,
    /// `[health]`: silent and back devices (SPEC §10).
    #[serde(default)]
    pub health: HealthSection,
    /// `[console]`: the venue console over HTTP (SPEC §10).
    #[serde(default)]
    pub console: ConsoleSection,
}

/// The keys of the whole file, section by section, as [`ConfigFile`] has them.
pub(super) const ROOT: &[Key] = &[
    req("venue", Table(venue::KEYS)),
    k("detector", Table(detector::KEYS)),
    k("windows", Table(windows::KEYS)),
    k("fatigue", Table(fatigue::KEYS)),
    k("limits", Table(limits::KEYS)),
    req("output", Table(output::KEYS)),
    k("metrics", Table(metrics::KEYS)),
    k("pipeline", Table(pipeline::KEYS)),
    k("sources", Table(sources::KEYS)),
    k("alerts", Table(alerts::KEYS)),
    k("log", Table(log::KEYS)),
    k("health", Table(health::KEYS)),
    k("console", Table(console::KEYS)),
];
