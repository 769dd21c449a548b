//! `[metrics]`: progress rows, the Prometheus endpoint and `/healthz` (SPEC §6).

use super::error::Problems;
use super::schema::keys::{k, Key, Ty};
use crate::model::Micros;
use crate::util::time::MICROS_PER_SEC;
use serde::{Deserialize, Serialize};

/// `[metrics]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsSection {
    /// Progress row and log line interval (default "10s").
    pub progress_interval: String,
    /// Prometheus endpoint address, `host:port` (default "127.0.0.1:9898"); "" turns it off.
    pub listen: String,
    /// `/healthz` fails once a source has been down, or the spool
    /// unwritable, for longer than this (default "60s").
    pub health_grace: String,
}

impl Default for MetricsSection {
    fn default() -> Self {
        MetricsSection {
            progress_interval: "10s".into(),
            listen: "127.0.0.1:9898".into(),
            health_grace: "60s".into(),
        }
    }
}

/// The keys of `[metrics]`.
pub(super) const KEYS: &[Key] = &[
    k("progress_interval", Ty::Duration),
    k("listen", Ty::Text),
    k("health_grace", Ty::Duration),
];

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
