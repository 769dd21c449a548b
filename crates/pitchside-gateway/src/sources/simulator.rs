//! The sensor simulator: wearable, pitch, crowd and generic sensors with
//! injected 4–6σ anomalies and fatigue episodes (heart rate climbing for a
//! few minutes). Players move as players do (walking, jogging, high-speed
//! running, sprints: a cumulative `running_dist`), and their heart rate
//! follows their effort, so player load (SPEC §11) has zones, high-speed
//! running and sprints to show. Deterministic for a seed and start time, so
//! a simulated stream can be replayed and compared.

use crate::config::SimulatorSection;
use crate::model::{Micros, SensorKind};
use crate::util::rng::Rng;
use crate::util::time::format_rfc3339;
use std::fmt::Write;

const NAMES: [&str; 22] = [
    "Asha", "Bruno", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jaya", "Kofi",
    "Lena", "Mateo", "Nia", "Omar", "Priya", "Quinn", "Rafa", "Sade", "Tomas", "Uma", "Viktor",
];

#[derive(Debug, Clone)]
enum Device {
    Player {
        id: i64,
        base_hr: f64,
        episode: Option<(Micros, Micros)>,
        motion: Motion,
    },
    Pitch {
        n: u32,
        delivery: i64,
    },
    Crowd {
        n: u32,
    },
    Generic {
        n: u32,
    },
}

/// Ground truth about one generated event, for tests and rehearsals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Truth {
    /// An anomaly was injected into one of its metrics.
    pub anomaly: bool,
    /// Its player is in a fatigue episode.
    pub fatigued: bool,
}

/// Generates events round-robin over the configured devices.
#[derive(Debug, Clone)]
pub struct Simulator {
    cfg: SimulatorSection,
    rng: Rng,
    devices: Vec<Device>,
    next_device: usize,
    t: f64,
    step_us: f64,
    event_id: i64,
}

/// Length of a fatigue episode: the heart rate climbs for 4 minutes, holds 2.
const EPISODE_US: Micros = 6 * 60_000_000;

/// What a player does next: its chance, speed range (m/s) and duration
/// range (s).
struct Activity {
    chance: f64,
    speed: (f64, f64),
    secs: (f64, f64),
}

/// Walking, jogging, high-speed running, sprinting: about 160 m a minute
/// (a tenth of it at high speed) and a sprint every two or three minutes.
const ACTIVITIES: [Activity; 4] = [
    Activity {
        chance: 0.48,
        speed: (0.8, 2.0),
        secs: (5.0, 20.0),
    },
    Activity {
        chance: 0.37,
        speed: (2.5, 4.0),
        secs: (5.0, 15.0),
    },
    Activity {
        chance: 0.10,
        speed: (5.6, 6.8),
        secs: (3.0, 8.0),
    },
    Activity {
        chance: 0.05,
        speed: (7.3, 9.0),
        secs: (2.0, 5.0),
    },
];
/// Heart rate a player's effort adds, bpm per m/s of speed.
const HR_PER_SPEED: f64 = 6.0;
/// Time constant (s) with which heart rate follows effort.
const HR_LAG_S: f64 = 15.0;

/// How a player moves: the current activity's speed until its end, the
/// distance run so far and the heart rate effort has brought.
#[derive(Debug, Clone)]
struct Motion {
    speed: f64,
    until: Micros,
    dist: f64,
    hr: f64,
}

impl Motion {
    /// Moves on by `dt_s` seconds to time `t`, starting a new activity when
    /// the current one is over.
    fn step(&mut self, rng: &mut Rng, base_hr: f64, t: Micros, dt_s: f64) {
        if t >= self.until {
            let mut pick = rng.uniform();
            let a = ACTIVITIES
                .iter()
                .find(|a| {
                    pick -= a.chance;
                    pick < 0.0
                })
                .unwrap_or(&ACTIVITIES[0]);
            let ((v0, v1), (d0, d1)) = (a.speed, a.secs);
            self.speed = v0 + (v1 - v0) * rng.uniform();
            self.until = t + ((d0 + (d1 - d0) * rng.uniform()) * 1e6) as Micros;
        }
        self.dist += self.speed * dt_s;
        let target = base_hr + HR_PER_SPEED * self.speed;
        self.hr += (target - self.hr) * (1.0 - (-dt_s / HR_LAG_S).exp());
    }
}

impl Simulator {
    /// A simulator whose first event is at `start`.
    pub fn new(cfg: &SimulatorSection, start: Micros) -> Simulator {
        let mut rng = Rng::new(cfg.seed);
        let mut devices = Vec::new();
        for i in 0..cfg.players {
            let base_hr = 120.0 + rng.uniform() * 30.0;
            devices.push(Device::Player {
                id: i as i64 + 1,
                base_hr,
                episode: None,
                motion: Motion {
                    speed: 0.0,
                    until: start,
                    dist: 1000.0 * rng.uniform(),
                    hr: base_hr,
                },
            });
        }
        for n in 0..cfg.pitch_devices {
            devices.push(Device::Pitch { n, delivery: 0 });
        }
        for n in 0..cfg.crowd_zones {
            devices.push(Device::Crowd { n });
        }
        for n in 0..cfg.generic_devices {
            devices.push(Device::Generic { n });
        }
        Simulator {
            cfg: cfg.clone(),
            rng,
            devices,
            next_device: 0,
            t: start as f64,
            step_us: 1e6 / cfg.rate,
            event_id: 0,
        }
    }

    /// Event time of the next event.
    pub fn next_time(&self) -> Micros {
        self.t as Micros
    }

    fn value(&mut self, mean: f64, sd: f64, truth: &mut Truth) -> f64 {
        if self.rng.uniform() < self.cfg.anomaly_rate {
            truth.anomaly = true;
            let sign = if self.rng.uniform() < 0.5 { -1.0 } else { 1.0 };
            mean + sign * (4.0 + 2.0 * self.rng.uniform()) * sd
        } else {
            mean + sd * self.rng.normal()
        }
    }

    /// The next event as one JSON line (no newline) and its ground truth.
    pub fn next_line(&mut self) -> (String, Truth) {
        let t = self.t as Micros;
        self.t += self.step_us;
        self.event_id += 1;
        let idx = self.next_device;
        self.next_device = (self.next_device + 1) % self.devices.len();
        let mut truth = Truth::default();
        let mut line = String::with_capacity(200);
        let time = format_rfc3339(t);
        let (match_id, eid) = (self.cfg.match_id, self.event_id);
        let per_device_step = self.step_us * self.devices.len() as f64;
        let mut device = self.devices[idx].clone();
        match &mut device {
            Device::Player {
                id,
                base_hr,
                episode,
                motion,
            } => {
                motion.step(&mut self.rng, *base_hr, t, per_device_step / 1e6);
                // Chance per reading so that fatigue_rate is per player-minute.
                let p_start = self.cfg.fatigue_rate * per_device_step / 60e6;
                if episode.is_none() && self.rng.uniform() < p_start {
                    *episode = Some((t, t + EPISODE_US));
                }
                let mut hr_mean = motion.hr;
                if let Some((s, e)) = *episode {
                    if t >= e {
                        *episode = None;
                    } else {
                        truth.fatigued = true;
                        let climb = ((t - s) as f64 / (4.0 * 60e6)).min(1.0);
                        hr_mean += 35.0 * climb;
                    }
                }
                let hr = self.value(hr_mean, 3.0, &mut truth);
                let acc = self.value(1.0 + 0.1 * motion.speed, 0.25, &mut truth);
                let dist = motion.dist;
                let name = NAMES[(*id as usize - 1) % NAMES.len()];
                let _ = write!(
                    line,
                    r#"{{"sensor":"wearable","device_id":"band-{id:02}","event_time":"{time}","match_id":{match_id},"event_id":{eid},"player_id":{id},"player_name":"{name}","heart_rate":{hr:.2},"acceleration":{acc:.3},"running_dist":{dist:.2}}}"#
                );
            }
            Device::Pitch { n, delivery } => {
                *delivery += 1;
                let speed = self.value(135.0, 5.0, &mut truth);
                let spin = self.value(2200.0, 150.0, &mut truth);
                let x = self.value(0.0, 0.3, &mut truth);
                let y = self.value(10.0, 2.0, &mut truth);
                let _ = write!(
                    line,
                    r#"{{"sensor":"pitch","device_id":"hawk-{n}","event_time":"{time}","match_id":{match_id},"event_id":{eid},"delivery_id":{delivery},"ball_speed":{speed:.2},"spin_rate":{spin:.1},"impact_x":{x:.3},"impact_y":{y:.3}}}"#
                );
            }
            Device::Crowd { n } => {
                let db = self.value(85.0, 3.0, &mut truth);
                let density = self.value(0.7, 0.05, &mut truth).clamp(0.0, 1.0);
                let _ = write!(
                    line,
                    r#"{{"sensor":"crowd","device_id":"mic-{n}","event_time":"{time}","match_id":{match_id},"event_id":{eid},"zone_id":"stand-{n}","decibels":{db:.2},"density":{density:.3}}}"#
                );
            }
            Device::Generic { n } => {
                let v = self.value(21.0, 0.5, &mut truth);
                let _ = write!(
                    line,
                    r#"{{"sensor":"generic","device_id":"env-{n}","event_time":"{time}","match_id":{match_id},"event_id":{eid},"metric":"temperature_c","value":{v:.3}}}"#
                );
            }
        }
        self.devices[idx] = device;
        (line, truth)
    }

    /// The kinds this simulator produces.
    pub fn kinds(&self) -> Vec<SensorKind> {
        let c = &self.cfg;
        [
            (c.players, SensorKind::Wearable),
            (c.pitch_devices, SensorKind::Pitch),
            (c.crowd_zones, SensorKind::Crowd),
            (c.generic_devices, SensorKind::Generic),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(_, k)| k)
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::decode::{Decoded, Decoder};

    #[test]
    fn every_generated_line_decodes() {
        let cfg = SimulatorSection {
            anomaly_rate: 0.05,
            fatigue_rate: 0.5,
            ..Default::default()
        };
        let mut sim = Simulator::new(&cfg, 1_764_444_600_000_000);
        let d = Decoder::new(4096, vec![], None);
        for _ in 0..2000 {
            let (line, _) = sim.next_line();
            assert!(
                matches!(d.decode_bytes(line.as_bytes(), None, 0), Decoded::Event(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn players_run_sprint_and_work_in_several_heart_rate_zones() {
        use crate::config::LoadConfig;
        use crate::pipeline::load::LoadTracker;
        let cfg = SimulatorSection {
            players: 4,
            pitch_devices: 0,
            crowd_zones: 0,
            generic_devices: 0,
            rate: 8.0,
            anomaly_rate: 0.0,
            fatigue_rate: 0.0,
            ..Default::default()
        };
        let mut sim = Simulator::new(&cfg, 0);
        let d = Decoder::new(4096, vec![], None);
        let mut load = LoadTracker::new(LoadConfig::default());
        // 20 minutes, every reading into one window.
        for _ in 0..(8 * 60 * 20) {
            let (line, _) = sim.next_line();
            let Decoded::Event(e) = d.decode_bytes(line.as_bytes(), None, 0) else {
                panic!("{line}");
            };
            load.add(&e, 0, &e.values);
        }
        for player in 1..=4 {
            let s = load.on_window(1, player, 0).unwrap().window;
            let per_minute = s.distance / 20.0;
            assert!(
                (100.0..220.0).contains(&per_minute),
                "player {player}: {per_minute} m/min"
            );
            assert!(s.hsr_distance > 100.0, "player {player}: {s:?}");
            assert!((2..=30).contains(&s.sprints), "player {player}: {s:?}");
            let zones = s.zone_us.iter().filter(|&&us| us > 30_000_000).count();
            assert!(zones >= 2, "player {player}: {s:?}");
        }
    }

    #[test]
    fn same_seed_gives_the_same_stream() {
        let cfg = SimulatorSection::default();
        let mut a = Simulator::new(&cfg, 0);
        let mut b = Simulator::new(&cfg, 0);
        for _ in 0..100 {
            assert_eq!(a.next_line(), b.next_line());
        }
    }

    #[test]
    fn anomalies_and_fatigue_are_injected_at_the_configured_rates() {
        let cfg = SimulatorSection {
            anomaly_rate: 0.01,
            fatigue_rate: 0.2,
            players: 10,
            ..Default::default()
        };
        let mut sim = Simulator::new(&cfg, 0);
        let (mut anomalies, mut fatigued) = (0, 0);
        for _ in 0..20_000 {
            let (_, t) = sim.next_line();
            anomalies += t.anomaly as u32;
            fatigued += t.fatigued as u32;
        }
        assert!(anomalies > 200 && anomalies < 1200, "{anomalies}");
        assert!(fatigued > 0);
    }
}
