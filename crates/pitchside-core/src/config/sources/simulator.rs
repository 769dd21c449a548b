//! `[sources.simulator]`: the built-in event simulator.

use crate::config::error::Problems;
use crate::config::schema::keys::{k, Key, Ty, U32, U64};
use serde::{Deserialize, Serialize};

/// `[sources.simulator]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimulatorSection {
    /// Events per second over all devices (default 50).
    pub rate: f64,
    /// Wearable players (default 22).
    pub players: u32,
    /// Ball trackers (default 1).
    pub pitch_devices: u32,
    /// Crowd zones (default 4).
    pub crowd_zones: u32,
    /// Generic sensors (default 2).
    pub generic_devices: u32,
    /// Chance per reading of an injected 4–6σ anomaly (default 0.002).
    pub anomaly_rate: f64,
    /// Chance per player-minute that a fatigue episode starts (default 0.02).
    pub fatigue_rate: f64,
    /// Match number stamped on events (default 1).
    pub match_id: i64,
    /// Random seed; equal seeds give equal streams (default 42).
    pub seed: u64,
}

impl Default for SimulatorSection {
    fn default() -> Self {
        SimulatorSection {
            rate: 50.0,
            players: 22,
            pitch_devices: 1,
            crowd_zones: 4,
            generic_devices: 2,
            anomaly_rate: 0.002,
            fatigue_rate: 0.02,
            match_id: 1,
            seed: 42,
        }
    }
}

/// The keys of `[sources.simulator]`.
pub(super) const KEYS: &[Key] = &[
    k("rate", Ty::Number),
    k("players", U32),
    k("pitch_devices", U32),
    k("crowd_zones", U32),
    k("generic_devices", U32),
    k("anomaly_rate", Ty::Number),
    k("fatigue_rate", Ty::Number),
    k("match_id", Ty::Int),
    k("seed", U64),
];

impl SimulatorSection {
    /// Checks the rates and that there is at least one device.
    pub(super) fn check(&self, p: &mut Problems) {
        let s = self;
        p.check(s.rate.is_finite() && s.rate > 0.0, || {
            format!(
                "sources.simulator.rate: {} must be a positive number of events per second",
                s.rate
            )
        });
        p.check(
            s.players + s.pitch_devices + s.crowd_zones + s.generic_devices > 0,
            || "sources.simulator: at least one of players, pitch_devices, crowd_zones, generic_devices must be > 0".to_string(),
        );
        for (key, rate) in [
            ("sources.simulator.anomaly_rate", s.anomaly_rate),
            ("sources.simulator.fatigue_rate", s.fatigue_rate),
        ] {
            p.check((0.0..=1.0).contains(&rate), || {
                format!("{key}: {rate} must be between 0 and 1")
            });
        }
    }
}
