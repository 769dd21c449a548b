//! `[sources.simulator]`: the built-in event simulator.

use crate::config::error::Problems;

crate::config::section! {
    /// `[sources.simulator]`.
    #[serde(deny_unknown_fields)]
    pub struct SimulatorSection {
        /// Events per second over all devices.
        rate: f64 = 50.0,
        /// Wearable players.
        players: u32 = 22,
        /// Ball trackers.
        pitch_devices: u32 = 1,
        /// Crowd zones.
        crowd_zones: u32 = 4,
        /// Generic sensors.
        generic_devices: u32 = 2,
        /// Chance per reading of an injected 4–6σ anomaly.
        anomaly_rate: f64 = 0.002,
        /// Chance per player-minute that a fatigue episode starts.
        fatigue_rate: f64 = 0.02,
        /// Match number stamped on events.
        match_id: i64 = 1,
        /// Random seed; equal seeds give equal streams.
        seed: u64 = 42,
    }
}

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
