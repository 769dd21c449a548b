//! The bench's realistic input (`bench --mix venue`): SPEC §1 JSON as a
//! venue sends it. Wearable, pitch, crowd and generic devices (4:2:2:2),
//! each sending 1–3 metrics with an event id, a match and its identity
//! fields; half the devices write RFC 3339 times (milliseconds), half epoch
//! milliseconds. About 2 % of the lines are late (90 s behind, past the
//! watermark) and 2 % repeat a recent line (duplicates). Lines average
//! about 205 bytes. Deterministic for a seed.

use crate::util::rng::Rng;
use crate::util::time::format_rfc3339;
use std::fmt::Write as _;

const NAMES: [&str; 8] = [
    "Asha", "Bruno", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana",
];

/// Share of lines that are late, and that repeat a recent line.
const LATE: f64 = 0.02;
const DUPLICATE: f64 = 0.02;
/// How many recent lines a duplicate is drawn from.
const RECENT: usize = 64;

/// One device of the mix: its kind (by index) and how many metrics it sends.
#[derive(Debug, Clone, Copy)]
struct Device {
    n: u64,
    metrics: usize,
}

/// Generates the venue mix.
#[derive(Debug)]
pub struct VenueMix {
    rng: Rng,
    devices: Vec<Device>,
    recent: Vec<String>,
    next: u64,
    t0_ms: i64,
}

impl VenueMix {
    /// A mix over devices whose metrics add up to `keys` detector keys.
    pub fn new(keys: u64, seed: u64) -> VenueMix {
        let mut devices = Vec::new();
        let mut total = 0u64;
        let mut n = 0u64;
        let keys = keys.max(1);
        while total < keys {
            let most = match n % 10 {
                0..=5 => 3,
                6 | 7 => 2,
                _ => 1,
            };
            let metrics = (1 + (n / 10 % 3) as usize)
                .min(most)
                .min((keys - total) as usize);
            total += metrics as u64;
            devices.push(Device { n, metrics });
            n += 1;
        }
        VenueMix {
            rng: Rng::new(seed),
            devices,
            recent: Vec::with_capacity(RECENT),
            next: 0,
            t0_ms: 1_764_531_000_000,
        }
    }

    /// Detector keys the devices send (sensor, device, metric).
    pub fn keys(&self) -> u64 {
        self.devices.iter().map(|d| d.metrics as u64).sum()
    }

    /// Appends the next line (with its newline) to `out`.
    pub fn line(&mut self, out: &mut String) {
        let i = self.next;
        self.next += 1;
        if self.recent.len() == RECENT && self.rng.uniform() < DUPLICATE {
            let pick = (self.rng.next_u64() % RECENT as u64) as usize;
            out.push_str(&self.recent[pick]);
            return;
        }
        let d = self.devices[(i % self.devices.len() as u64) as usize];
        let mut ms = self.t0_ms + i as i64;
        if self.rng.uniform() < LATE {
            ms -= 90_000;
        }
        let start = out.len();
        self.event(out, d, ms, i);
        out.push('\n');
        let line = &out[start..];
        if self.recent.len() < RECENT {
            self.recent.push(line.to_string());
        } else {
            let at = (i % RECENT as u64) as usize;
            self.recent[at].clear();
            self.recent[at].push_str(line);
        }
    }

    fn value(&mut self, mean: f64, sd: f64) -> f64 {
        let mut v = mean + sd * self.rng.normal();
        if self.rng.uniform() < 0.001 {
            v += 8.0 * sd;
        }
        v
    }

    fn event(&mut self, out: &mut String, d: Device, ms: i64, i: u64) {
        let time = if d.n.is_multiple_of(2) {
            let t = format_rfc3339(ms * 1000);
            // Milliseconds, as most devices send them: "...12.345Z".
            format!("\"{}Z\"", &t[..23])
        } else {
            ms.to_string()
        };
        let head = |out: &mut String, kind: &str, prefix: &str| {
            let _ = write!(
                out,
                "{{\"sensor\":\"{kind}\",\"device_id\":\"{prefix}-{:05}-{:04x}\",\"firmware\":\"{prefix}-2.4.{}\",\"event_time\":{time},\"match_id\":1042,\"event_id\":{}",
                d.n,
                d.n.wrapping_mul(0x9E37) & 0xffff,
                d.n % 10,
                1_000_000 + i
            );
        };
        match d.n % 10 {
            0..=3 => {
                head(out, "wearable", "band");
                let name = NAMES[(d.n % NAMES.len() as u64) as usize];
                let _ = write!(out, ",\"player_id\":{},\"player_name\":\"{name}\"", d.n);
                let vals = [
                    ("heart_rate", self.value(150.0, 6.0), 2),
                    ("acceleration", self.value(1.2, 0.3), 3),
                    ("running_dist", self.value(4.0, 0.8), 2),
                ];
                self.metrics(out, &vals[..d.metrics]);
            }
            4 | 5 => {
                head(out, "pitch", "hawk");
                let _ = write!(out, ",\"delivery_id\":{}", i / 100);
                let vals = [
                    ("ball_speed", self.value(135.0, 5.0), 2),
                    ("spin_rate", self.value(2200.0, 150.0), 1),
                    ("impact_x", self.value(0.0, 0.3), 3),
                ];
                self.metrics(out, &vals[..d.metrics]);
            }
            6 | 7 => {
                head(out, "crowd", "mic");
                let _ = write!(out, ",\"zone_id\":\"stand-north-{:03}\"", d.n % 97);
                let vals = [
                    ("decibels", self.value(85.0, 3.0), 2),
                    ("density", self.value(0.7, 0.05), 3),
                ];
                self.metrics(out, &vals[..d.metrics]);
            }
            _ => {
                head(out, "generic", "env");
                let v = self.value(21.0, 0.5);
                let _ = write!(out, ",\"metric\":\"temperature_c\",\"value\":{v:.3}");
            }
        }
        out.push('}');
    }

    fn metrics(&self, out: &mut String, vals: &[(&str, f64, usize)]) {
        for (name, v, digits) in vals {
            let _ = write!(out, ",\"{name}\":{v:.digits$}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::decode::{Decoded, Decoder};

    #[test]
    fn lines_decode_average_about_205_bytes_and_mix_the_kinds() {
        let mut mix = VenueMix::new(10_000, 7);
        assert_eq!(mix.keys(), 10_000);
        let d = Decoder::new(4096, vec![], None);
        let (mut bytes, mut kinds, mut rfc3339) = (0usize, [0u32; 4], 0u32);
        let mut out = String::new();
        for _ in 0..20_000 {
            out.clear();
            mix.line(&mut out);
            bytes += out.len();
            rfc3339 += out.contains("\"event_time\":\"") as u32;
            match d.decode_bytes(out.trim_end().as_bytes(), None, 0) {
                Decoded::Event(e) => kinds[e.sensor.index()] += 1,
                other => panic!("{out}: {other:?}"),
            }
        }
        let mean = bytes as f64 / 20_000.0;
        assert!((195.0..=215.0).contains(&mean), "mean line {mean:.1} bytes");
        assert!(kinds.iter().all(|&k| k > 3_000), "{kinds:?}");
        assert!((8_000..=12_000).contains(&rfc3339), "{rfc3339}");
    }
}
