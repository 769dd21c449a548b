//! `[metrics]`: progress rows, the Prometheus endpoint and `/healthz` (SPEC §6).

use super::error::Problems;
use crate::model::Micros;
use crate::util::time::MICROS_PER_SEC;

crate::config::section! {
    /// `[metrics]`.
    #[serde(deny_unknown_fields)]
    pub struct MetricsSection {
        /// Progress row and log line interval.
        progress_interval: String [Duration] = "10s".into(),
        /// Prometheus endpoint address, `host:port`; "" turns it off.
        listen: String = "127.0.0.1:9898".into(),
        /// `/healthz` fails once a source has been down, the spool unwritable
        /// or the journal off for longer than this.
        health_grace: String [Duration] = "60s".into(),
    }
}

/// `[metrics]`, checked.
#[derive(Debug, Clone)]
pub struct MetricsConfig {
    /// Progress interval, µs.
    pub progress_interval: Micros,
    /// Prometheus listen address, if any.
    pub listen: Option<String>,
    /// `/healthz` grace, µs.
    pub health_grace: Micros,
}

impl MetricsSection {
    /// Checks every key.
    pub fn validate(&self) -> Result<MetricsConfig, Vec<String>> {
        let mut p = Problems::default();
        let progress_interval = p.duration(
            "metrics.progress_interval",
            &self.progress_interval,
            MICROS_PER_SEC / 10,
        );
        let health_grace = p.duration("metrics.health_grace", &self.health_grace, 0);
        let host_port = self
            .listen
            .rsplit_once(':')
            .is_some_and(|(h, port)| !h.is_empty() && port.parse::<u16>().is_ok());
        p.check(self.listen.is_empty() || host_port, || {
            format!(
                "metrics.listen: {:?} must be host:port, e.g. 127.0.0.1:9898 or localhost:9898, or \"\"",
                self.listen
            )
        });
        p.finish(MetricsConfig {
            progress_interval,
            listen: (!self.listen.is_empty()).then(|| self.listen.clone()),
            health_grace,
        })
    }
}
