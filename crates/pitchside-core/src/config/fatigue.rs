//! `[fatigue]`: fatigue alerts (SPEC §4).

use super::error::Problems;
use super::schema::keys::{k, Key, Ty::Number, U32};
use serde::{Deserialize, Serialize};

/// `[fatigue]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FatigueSection {
    /// Previous windows forming the baseline (default 3).
    pub baseline_windows: u32,
    /// Alert when the mean exceeds baseline mean + k·σ (default 1.5).
    pub k: f64,
    /// Cap on players with fatigue history; the stalest is forgotten (default 10000).
    pub max_players: u32,
}

impl Default for FatigueSection {
    fn default() -> Self {
        FatigueSection {
            baseline_windows: 3,
            k: 1.5,
            max_players: 10_000,
        }
    }
}

/// The keys of `[fatigue]`.
pub(super) const KEYS: &[Key] = &[
    k("baseline_windows", U32),
    k("k", Number),
    k("max_players", U32),
];

/// `[fatigue]`, checked.
#[derive(Debug, Clone)]
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
