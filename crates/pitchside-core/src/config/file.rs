//! The TOML file as written by a person: one section struct per table, each
//! declared in its own module with its defaults, its keys and its `validate`.

use super::alerts::AlertsSection;
use super::console::ConsoleSection;
use super::detector::DetectorSection;
use super::fatigue::FatigueSection;
use super::health::HealthSection;
use super::limits::LimitsSection;
use super::load::LoadSection;
use super::log::LogSection;
use super::metrics::MetricsSection;
use super::output::OutputSection;
use super::pipeline::PipelineSection;
use super::sources::SourcesSection;
use super::venue::VenueSection;
use super::windows::WindowsSection;

crate::config::section! {
    /// The whole file.
    #[serde(deny_unknown_fields)]
    pub struct ConfigFile {
        /// Who this gateway is.
        venue: VenueSection,
        /// Rolling z-score (SPEC §2).
        detector: DetectorSection = DetectorSection::default(),
        /// Event-time windows (SPEC §3).
        windows: WindowsSection = WindowsSection::default(),
        /// Fatigue alerts (SPEC §4).
        fatigue: FatigueSection = FatigueSection::default(),
        /// Player load: zones, TRIMP, high-speed running, sprints (SPEC §11).
        load: LoadSection = LoadSection::default(),
        /// Input limits and per-metric ranges (SPEC §1, §3).
        limits: LimitsSection = LimitsSection::default(),
        /// Tables, spool and store (SPEC §5).
        output: OutputSection,
        /// Progress rows and the Prometheus endpoint (SPEC §6).
        metrics: MetricsSection = MetricsSection::default(),
        /// Queue capacities between stages.
        pipeline: PipelineSection = PipelineSection::default(),
        /// Where events come from.
        sources: SourcesSection = SourcesSection::default(),
        /// Real-time alert output (MQTT).
        alerts: AlertsSection = AlertsSection::default(),
        /// Log format and level.
        log: LogSection = LogSection::default(),
        /// Silent and back devices (SPEC §10).
        health: HealthSection = HealthSection::default(),
        /// The venue console over HTTP (SPEC §10).
        console: ConsoleSection = ConsoleSection::default(),
    }
}
