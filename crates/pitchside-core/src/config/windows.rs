//! `[windows]`: event-time windows (SPEC §3).

use super::error::Problems;
use super::schema::keys::{k, Key, Ty::Duration, U32};
use crate::model::Micros;
use crate::util::time::MICROS_PER_SEC;
use serde::{Deserialize, Serialize};

/// `[windows]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WindowsSection {
    /// Tumbling window size (default "1m").
    pub size: String,
    /// Watermark = max event time of the kind minus this (default "30s").
    pub watermark_delay: String,
    /// Cap on open (window, group) cells over all kinds; past it new groups are
    /// dropped and counted (default 100000).
    pub max_open_groups: u32,
}

impl Default for WindowsSection {
    fn default() -> Self {
        WindowsSection {
            size: "1m".into(),
            watermark_delay: "30s".into(),
            max_open_groups: 100_000,
        }
    }
}

/// The keys of `[windows]`.
pub(super) const KEYS: &[Key] = &[
    k("size", Duration),
    k("watermark_delay", Duration),
    k("max_open_groups", U32),
];

/// `[windows]`, in µs.
#[derive(Debug, Clone)]
pub struct WindowsConfig {
    /// Window size, µs.
    pub size: Micros,
    /// Watermark delay, µs.
    pub watermark_delay: Micros,
    /// Open group cap.
    pub max_open_groups: usize,
}

impl WindowsSection {
    /// Checks every key.
    pub fn validate(&self) -> Result<WindowsConfig, Vec<String>> {
        let mut p = Problems::default();
        let size = p.duration("windows.size", &self.size, MICROS_PER_SEC);
        let watermark_delay = p.duration("windows.watermark_delay", &self.watermark_delay, 0);
        p.check(self.max_open_groups >= 1, || {
            "windows.max_open_groups: must be at least 1".to_string()
        });
        p.finish(WindowsConfig {
            size,
            watermark_delay,
            max_open_groups: self.max_open_groups as usize,
        })
    }
}
