//! One player's load state and the formulas of SPEC §11: what each heart
//! rate, distance and acceleration reading credits, and to which window.

use crate::config::{LoadConfig, Profile};
use crate::model::Micros;

/// Metric indexes of a wearable event (`SensorKind::Wearable.metrics()`).
pub(super) const HEART_RATE: u8 = 0;
/// Acceleration magnitude, g.
pub(super) const ACCELERATION: u8 = 1;
/// Cumulative distance, m.
pub(super) const RUNNING_DIST: u8 = 2;

/// What one window credits a player (SPEC §11 columns).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sums {
    /// Time in heart-rate zones 1 to 5, µs.
    pub zone_us: [i64; 5],
    /// Banister's TRIMP.
    pub trimp_banister: f64,
    /// Distance, m.
    pub distance: f64,
    /// Distance at or above the high-speed threshold, m.
    pub hsr_distance: f64,
    /// Time at or above the high-speed threshold, µs.
    pub hsr_us: i64,
    /// Sprints counted.
    pub sprints: i64,
    /// Sum of the changes of the acceleration magnitude, g.
    pub accel_load: f64,
}

impl Sums {
    /// Seconds in zone `k` (0-based).
    pub fn zone_s(&self, k: usize) -> f64 {
        self.zone_us[k] as f64 / 1e6
    }

    /// Edwards' TRIMP: Σ k · minutes in zone k.
    pub fn trimp_edwards(&self) -> f64 {
        (0..5)
            .map(|k| (k + 1) as f64 * (self.zone_s(k) / 60.0))
            .sum()
    }
}

/// A player's running totals over the match's emitted windows.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Session {
    /// Distance, m.
    pub distance: f64,
    /// High-speed distance, m.
    pub hsr_distance: f64,
    /// Sprints.
    pub sprints: i64,
    /// Edwards' TRIMP.
    pub trimp_edwards: f64,
    /// Accelerometer load.
    pub accel_load: f64,
}

impl Session {
    pub(super) fn add(&mut self, s: &Sums) {
        self.distance += s.distance;
        self.hsr_distance += s.hsr_distance;
        self.sprints += s.sprints;
        self.trimp_edwards += s.trimp_edwards();
        self.accel_load += s.accel_load;
    }
}

/// The previous reading of one metric: its time, device and value. The
/// device is kept as a 64-bit hash of its id (only "the same device or
/// not" is asked), so that a player's state allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Prev {
    pub t: Micros,
    pub device: u64,
    pub v: f64,
}

/// The hash a [`Prev`] keeps of a device id.
pub(super) fn device_hash(device: &str) -> u64 {
    crate::util::hash::fx_hash(device.as_bytes())
}

/// A player's open windows' sums by window start: one in place (the usual
/// case: a reading goes to the latest window), more in a list while the
/// watermark holds several open.
#[derive(Debug, Clone, Default)]
pub(super) struct Open {
    first: Option<(Micros, Sums)>,
    more: Vec<(Micros, Sums)>,
}

impl Open {
    /// The sums of the window at `start`, opened if new.
    pub fn get_or_open(&mut self, start: Micros) -> &mut Sums {
        if self.first.is_none_or(|(s, _)| s == start) {
            return &mut self.first.get_or_insert((start, Sums::default())).1;
        }
        let i = match self.more.iter().position(|(s, _)| *s == start) {
            Some(i) => i,
            None => {
                self.more.push((start, Sums::default()));
                self.more.len() - 1
            }
        };
        &mut self.more[i].1
    }

    /// Takes the window at `start` out.
    pub fn take(&mut self, start: Micros) -> Option<Sums> {
        if self.first.is_some_and(|(s, _)| s == start) {
            let taken = self.first.take().map(|(_, w)| w);
            self.first = self.more.pop();
            return taken;
        }
        let i = self.more.iter().position(|(s, _)| *s == start)?;
        Some(self.more.swap_remove(i).1)
    }

    /// Every open window.
    pub fn iter(&self) -> impl Iterator<Item = &(Micros, Sums)> {
        self.first.iter().chain(&self.more)
    }

    /// How many are open.
    pub fn len(&self) -> usize {
        self.first.is_some() as usize + self.more.len()
    }
}

/// An open run at or above the sprint speed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Run {
    pub start: Micros,
    pub counted: bool,
}

/// One player's state.
#[derive(Debug, Clone)]
pub(super) struct Player {
    pub profile: Profile,
    /// When it was last updated, in the tracker's arrival count.
    pub touched: u64,
    pub hr: Option<Micros>,
    pub dist: Option<Prev>,
    pub accel: Option<Prev>,
    pub run: Option<Run>,
    /// The open windows' sums by window start (a few: the windows not yet
    /// past the watermark).
    pub open: Open,
    pub session: Session,
    /// One state per `load.rules` entry.
    pub rules: Vec<RuleState>,
    /// For the console: the last heart rate in % of HRmax, and the last
    /// emitted window (the console keeps a few). Not in the checkpoint.
    pub hr_pct: Option<f64>,
    pub last_window: Option<(Micros, Sums)>,
}

/// One rule's state for one player.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct RuleState {
    /// hr_pct: since when the heart rate has been at or above the rule's.
    pub since: Option<Micros>,
    /// Fired, not re-armed yet.
    pub fired: bool,
    /// sprints: the times of the sprints counted since it last fired, at
    /// most the rule's count.
    pub sprints: std::collections::VecDeque<Micros>,
}

/// What one event did that rules watch.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Added {
    /// Distance intervals faster than `max_speed`.
    pub glitches: u64,
    /// The heart rate, when the event had one that was not out of order,
    /// and the time of the previous heart rate then.
    pub heart_rate: Option<(f64, Option<Micros>)>,
    /// A sprint was counted.
    pub sprint: bool,
}

impl Player {
    pub fn new(profile: Profile) -> Player {
        Player {
            profile,
            touched: 0,
            hr: None,
            dist: None,
            accel: None,
            run: None,
            open: Open::default(),
            session: Session::default(),
            rules: Vec::new(),
            hr_pct: None,
            last_window: None,
        }
    }

    /// Credits an event's readings (`(metric index, value)`) from `device` at
    /// `t` to the window at `start`; says what the rules watch.
    pub fn add(
        &mut self,
        p: &LoadConfig,
        device: &str,
        t: Micros,
        start: Micros,
        values: &[(u8, f64)],
    ) -> Added {
        let mut added = Added::default();
        let device = device_hash(device);
        let mut sums = *self.open.get_or_open(start);
        let sprints = sums.sprints;
        for &(i, x) in values {
            match i {
                HEART_RATE => {
                    let prev = self.hr;
                    if prev.is_none_or(|p| t > p) {
                        added.heart_rate = Some((x, prev));
                        self.hr_pct = Some(100.0 * x / self.profile.hr_max);
                    }
                    self.heart_rate(p, t, x, &mut sums);
                }
                ACCELERATION => self.acceleration(p, device, t, x, &mut sums),
                RUNNING_DIST => added.glitches += self.distance(p, device, t, x, &mut sums) as u64,
                _ => {}
            }
        }
        added.sprint = sums.sprints > sprints;
        *self.open.get_or_open(start) = sums;
        added
    }

    /// The match's Edwards TRIMP so far: emitted windows and open ones.
    pub fn match_trimp(&self) -> f64 {
        self.session.trimp_edwards
            + self
                .open
                .iter()
                .map(|(_, s)| s.trimp_edwards())
                .sum::<f64>()
    }

    fn heart_rate(&mut self, p: &LoadConfig, t: Micros, h: f64, s: &mut Sums) {
        match self.hr {
            Some(prev) if t <= prev => return,
            Some(prev) if t - prev <= p.max_gap => {
                let dt = t - prev;
                let f = &self.profile;
                let pct = 100.0 * h / f.hr_max;
                let zone = p.zones.iter().take_while(|&&edge| pct >= edge).count();
                if zone > 0 {
                    s.zone_us[zone - 1] += dt;
                }
                let r = ((h - f.hr_rest) / (f.hr_max - f.hr_rest)).clamp(0.0, 1.0);
                s.trimp_banister += (dt as f64 / 60e6) * r * 0.64 * (1.92 * r).exp();
            }
            _ => {}
        }
        self.hr = Some(t);
    }

    fn acceleration(&mut self, p: &LoadConfig, device: u64, t: Micros, a: f64, s: &mut Sums) {
        if let Some(prev) = &self.accel {
            if t <= prev.t {
                return;
            }
            if prev.device == device && t - prev.t <= p.max_gap {
                s.accel_load += (a - prev.v).abs();
            }
        }
        self.accel = Some(Prev { t, device, v: a });
    }

    /// `true` when the interval was faster than `max_speed`.
    fn distance(&mut self, p: &LoadConfig, device: u64, t: Micros, d: f64, s: &mut Sums) -> bool {
        let interval = match &self.dist {
            Some(prev) if t <= prev.t => return false,
            Some(prev) if prev.device == device && t - prev.t <= p.max_gap && d >= prev.v => {
                let dt = t - prev.t;
                Some((d - prev.v, dt, (d - prev.v) / (dt as f64 / 1e6), prev.t))
            }
            _ => None,
        };
        let glitch = interval.is_some_and(|(_, _, v, _)| v > p.max_speed);
        match interval.filter(|_| !glitch) {
            Some((dd, dt, v, from)) => {
                s.distance += dd;
                let f = &self.profile;
                if v >= f.hsr_speed {
                    s.hsr_distance += dd;
                    s.hsr_us += dt;
                }
                if v >= f.sprint_speed {
                    let run = self.run.get_or_insert(Run {
                        start: from,
                        counted: false,
                    });
                    if !run.counted && t - run.start >= p.sprint_dwell {
                        s.sprints += 1;
                        run.counted = true;
                    }
                } else {
                    self.run = None;
                }
            }
            None => self.run = None,
        }
        self.dist = Some(Prev { t, device, v: d });
        glitch
    }
}
