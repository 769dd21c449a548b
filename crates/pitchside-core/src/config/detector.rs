//! `[detector]`: the rolling z-score (SPEC §2).

use super::error::Problems;
use crate::model::Micros;
use crate::util::time::MICROS_PER_SEC;

crate::config::section! {
    /// `[detector]`.
    #[serde(deny_unknown_fields)]
    pub struct DetectorSection {
        /// Readings kept per key, 2 to 100000.
        window: u32 = 100,
        /// |z| above which a reading is an anomaly; a positive number.
        threshold: f64 = 3.5,
        /// Readings needed before a key can alert, 2 to `window`.
        min_baseline: u32 = 10,
        /// A key with no reading for this long (event time) is forgotten.
        idle_timeout: String [Duration] = "30m".into(),
        /// Hard cap on live keys, 1 to 10000000; the least recently appended is
        /// evicted. `max_keys × window × 16` bytes must be at most 1 GiB.
        max_keys: u32 = 10_000,
    }
}

/// `[detector]`, in the units the detector works in: what the detector
/// runs with.
#[derive(Debug, Clone, Copy)]
pub struct DetectorConfig {
    /// Readings per key.
    pub window: usize,
    /// z-score threshold.
    pub threshold: f64,
    /// Readings before alerts start.
    pub min_baseline: usize,
    /// Idle key timeout, µs.
    pub idle_timeout: Micros,
    /// Live key cap.
    pub max_keys: usize,
}

/// Ceiling of the detector's state (`max_keys × window × 16` bytes): 1 GiB,
/// which a 32-bit Raspberry Pi OS process can still map.
pub const MAX_DETECTOR_BYTES: u64 = 1 << 30;

impl DetectorSection {
    /// Checks every key, and that the detector's state fits in memory.
    pub fn validate(&self) -> Result<DetectorConfig, Vec<String>> {
        let mut p = Problems::default();
        let d = self;
        p.check((2..=100_000).contains(&d.window), || {
            format!("detector.window: {} must be between 2 and 100000", d.window)
        });
        p.check(d.threshold.is_finite() && d.threshold > 0.0, || {
            format!(
                "detector.threshold: {} must be a positive number",
                d.threshold
            )
        });
        p.check(d.min_baseline >= 2 && d.min_baseline <= d.window, || {
            format!(
                "detector.min_baseline: {} must be between 2 and detector.window ({})",
                d.min_baseline, d.window
            )
        });
        let idle_timeout = p.duration("detector.idle_timeout", &d.idle_timeout, MICROS_PER_SEC);
        p.check((1..=10_000_000).contains(&d.max_keys), || {
            format!(
                "detector.max_keys: {} must be between 1 and 10000000",
                d.max_keys
            )
        });
        let c = DetectorConfig {
            window: d.window as usize,
            threshold: d.threshold,
            min_baseline: d.min_baseline as usize,
            idle_timeout,
            max_keys: d.max_keys as usize,
        };
        // The detector's windows are allocated up front (and paged in as keys
        // appear): max_keys x window x 16 bytes must fit the machine.
        let state = c.state_bytes();
        p.check(state <= MAX_DETECTOR_BYTES, || {
            format!(
                "detector.max_keys x detector.window: {} x {} readings need {} MiB of memory; at most {} MiB is allowed (lower one of them)",
                d.max_keys,
                d.window,
                state >> 20,
                MAX_DETECTOR_BYTES >> 20
            )
        });
        p.finish(c)
    }
}

impl DetectorConfig {
    /// Bytes of the detector's state at most: `max_keys × window × 16` (a
    /// whole value and a whole time a reading, 3 bytes each in the arena and
    /// 5 on the side; 6 while they fit 3-byte codes, see
    /// `pipeline::detect::times` and `values`), which start-up checks against
    /// the machine.
    pub fn state_bytes(&self) -> u64 {
        self.max_keys as u64 * self.window as u64 * 16
    }
}
