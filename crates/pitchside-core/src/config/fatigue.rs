//! `[fatigue]`: fatigue alerts (SPEC §4).

use super::error::Problems;

crate::config::section! {
    /// `[fatigue]`.
    #[serde(deny_unknown_fields)]
    pub struct FatigueSection {
        /// Previous windows forming the baseline, at least 2.
        baseline_windows: u32 = 3,
        /// Alert when the mean exceeds baseline mean + k·σ; at least 0.
        k: f64 = 1.5,
        /// Cap on players with fatigue history; the stalest is forgotten.
        max_players: u32 = 10_000,
    }
}

/// `[fatigue]`, checked: what the fatigue tracker runs with.
#[derive(Debug, Clone, Copy)]
pub struct FatigueConfig {
    /// Baseline windows.
    pub baseline_windows: usize,
    /// Alert above baseline mean + k·σ.
    pub k: f64,
    /// History cap.
    pub max_players: usize,
}

impl FatigueSection {
    /// Checks every key.
    pub fn validate(&self) -> Result<FatigueConfig, Vec<String>> {
        let mut p = Problems::default();
        p.check(self.baseline_windows >= 2, || {
            format!(
                "fatigue.baseline_windows: {} must be at least 2 (a standard deviation needs two windows)",
                self.baseline_windows
            )
        });
        p.check(self.k.is_finite() && self.k >= 0.0, || {
            format!("fatigue.k: {} must be a non-negative number", self.k)
        });
        p.check(self.max_players >= 1, || {
            "fatigue.max_players: must be at least 1".to_string()
        });
        p.finish(FatigueConfig {
            baseline_windows: self.baseline_windows as usize,
            k: self.k,
            max_players: self.max_players as usize,
        })
    }
}
