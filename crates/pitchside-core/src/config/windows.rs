//! `[windows]`: event-time windows (SPEC §3).

use super::error::Problems;
use crate::model::Micros;
use crate::util::time::MICROS_PER_SEC;

crate::config::section! {
    /// `[windows]`.
    #[serde(deny_unknown_fields)]
    pub struct WindowsSection {
        /// Tumbling window size, at least 1s.
        size: String [Duration] = "1m".into(),
        /// Watermark = max event time of the kind minus this.
        watermark_delay: String [Duration] = "30s".into(),
        /// Cap on open (window, group) cells over all kinds, at least 1; past it
        /// new groups are dropped and counted.
        max_open_groups: u32 = 100_000,
    }
}

/// `[windows]`, in µs: what the window aggregator runs with.
#[derive(Debug, Clone, Copy)]
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
