//! `[load]`: player load (SPEC §11): heart-rate zones, TRIMP, high-speed
//! running, sprints and accelerometer load per player, with each player's
//! own HRmax and speed bands from a roster file.
//!
//! Here: the section, its `[[load.positions]]` entries and what they
//! validate into. `roster`: the roster file (CSV), read and checked with
//! the config and again on every SIGHUP. `rules`: `[[load.rules]]`, alerts
//! on a player's load.

mod roster;
mod rules;
#[cfg(test)]
mod tests;

pub use roster::{Roster, RosterEntry, MAX_ROSTER_BYTES};
pub use rules::{Rule, RuleSection, Watch, MAX_RULE_SPRINTS};

use super::error::Problems;
use crate::model::Micros;
use std::path::PathBuf;
use std::sync::Arc;

crate::config::section! {
    /// `[load]`.
    #[serde(deny_unknown_fields)]
    pub struct LoadSection {
        /// The roster: a CSV file with a header line (player_id, name, position,
        /// hr_max, hr_rest, hsr_speed, sprint_speed, target_trimp); read again on
        /// SIGHUP. Unset: every player gets the defaults below.
        roster: Option<PathBuf> = None,
        /// HRmax (bpm) of a player the roster does not give one, 100 to 250.
        hr_max: f64 = 190.0,
        /// Resting heart rate (bpm) likewise, below hr_max (Banister's TRIMP).
        hr_rest: f64 = 60.0,
        /// Lower edges of heart-rate zones 1 to 5, in % of HRmax, increasing.
        zones: Vec<f64> [NumberList] = vec![50.0, 60.0, 70.0, 80.0, 90.0],
        /// High-speed running from this speed (m/s) up, unless the roster or the
        /// player's position says otherwise.
        hsr_speed: f64 = 5.5,
        /// Sprinting from this speed (m/s) up, likewise; at least hsr_speed.
        sprint_speed: f64 = 7.0,
        /// A sprint counts once the speed has stayed at or above sprint_speed this long.
        sprint_dwell: String [Duration] = "1s".into(),
        /// Faster than this (m/s) is a GPS glitch: the interval credits nothing (counted).
        max_speed: f64 = 12.5,
        /// Readings of one player further apart than this credit nothing between them
        /// (a strap that dropped out), at least 1ms.
        max_gap: String [Duration] = "5s".into(),
        /// Cap on players (match and player) with load state, at least 1; past it the
        /// least recently updated is forgotten (counted, logged).
        max_players: u32 = 1000,
        /// Speed bands by position, for roster players whose cells are empty.
        positions: Vec<PositionSection> = Vec::new(),
        /// Alert rules on players' load (docs/src/player-load.md#alert-rules).
        rules: Vec<RuleSection> = Vec::new(),
    }
}

crate::config::section! {
    /// `[[load.positions]]`: the speed bands of one position.
    #[serde(deny_unknown_fields)]
    pub struct PositionSection {
        /// The position as the roster's `position` column writes it.
        name: String,
        /// High-speed running threshold (m/s) of the position.
        hsr_speed: Option<f64> = None,
        /// Sprint threshold (m/s) of the position.
        sprint_speed: Option<f64> = None,
    }
}

/// One player's figures, resolved: roster cell, else the position's, else
/// the `[load]` default.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The player (0 in the defaults).
    pub player_id: i64,
    /// On the roster.
    pub on_roster: bool,
    /// The roster's name.
    pub name: Option<Arc<str>>,
    /// The roster's position.
    pub position: Option<Arc<str>>,
    /// HRmax, bpm.
    pub hr_max: f64,
    /// Resting heart rate, bpm.
    pub hr_rest: f64,
    /// High-speed running threshold, m/s.
    pub hsr_speed: f64,
    /// Sprint threshold, m/s.
    pub sprint_speed: f64,
    /// Edwards TRIMP target for a match.
    pub target_trimp: Option<f64>,
}

/// `[load]`, checked, with its roster read: what the load tracker runs with.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// The roster (empty without `load.roster`).
    pub roster: Arc<Roster>,
    /// Defaults of players off the roster and of empty cells.
    pub defaults: Profile,
    /// `(name, hsr_speed, sprint_speed)` per position.
    pub positions: Vec<(String, Option<f64>, Option<f64>)>,
    /// Lower zone edges, % of HRmax.
    pub zones: [f64; 5],
    /// Sprint dwell, µs.
    pub sprint_dwell: Micros,
    /// Glitch speed, m/s.
    pub max_speed: f64,
    /// Longest credited interval, µs.
    pub max_gap: Micros,
    /// State cap.
    pub max_players: usize,
    /// Alert rules, in the order written.
    pub rules: Vec<Rule>,
}

impl LoadConfig {
    /// The figures of `player_id`.
    pub fn profile(&self, player_id: i64) -> Profile {
        let d = &self.defaults;
        let Some(r) = self.roster.get(player_id) else {
            return Profile {
                player_id,
                ..d.clone()
            };
        };
        let pos = r
            .position
            .as_deref()
            .and_then(|p| self.positions.iter().find(|(n, ..)| n == p));
        Profile {
            player_id,
            on_roster: true,
            name: r.name.clone(),
            position: r.position.clone(),
            hr_max: r.hr_max.unwrap_or(d.hr_max),
            hr_rest: r.hr_rest.unwrap_or(d.hr_rest),
            hsr_speed: r.hsr_speed.or(pos.and_then(|p| p.1)).unwrap_or(d.hsr_speed),
            sprint_speed: r
                .sprint_speed
                .or(pos.and_then(|p| p.2))
                .unwrap_or(d.sprint_speed),
            target_trimp: r.target_trimp,
        }
    }
}

impl LoadConfig {
    /// Each roster player's figures with the defaults they fall back on:
    /// resting below HRmax, the speed bands in order under `max_speed`.
    fn check_players(&self, p: &mut Problems) {
        for e in self.roster.entries() {
            let f = self.profile(e.player_id);
            let id = e.player_id;
            p.check(f.hr_rest < f.hr_max, || {
                format!(
                    "load.roster: player {id}: hr_rest {} must be below hr_max {}",
                    f.hr_rest, f.hr_max
                )
            });
            p.check(
                f.hsr_speed <= f.sprint_speed && f.sprint_speed < self.max_speed,
                || {
                    format!(
                        "load.roster: player {id}: hsr_speed {} ≤ sprint_speed {} < load.max_speed {} does not hold",
                        f.hsr_speed, f.sprint_speed, self.max_speed
                    )
                },
            );
        }
    }
}

impl Default for LoadConfig {
    fn default() -> Self {
        // The declared defaults validate (tested), without a roster to read.
        LoadSection::default()
            .validate()
            .unwrap_or_else(|p| panic!("[load] defaults: {p:?}"))
    }
}

impl LoadSection {
    /// Checks every key and reads the roster.
    pub fn validate(&self) -> Result<LoadConfig, Vec<String>> {
        let mut p = Problems::default();
        let sprint_dwell = p.duration("load.sprint_dwell", &self.sprint_dwell, 0);
        let max_gap = p.duration("load.max_gap", &self.max_gap, 1000);
        p.check((100.0..=250.0).contains(&self.hr_max), || {
            format!("load.hr_max: {} must be from 100 to 250 (bpm)", self.hr_max)
        });
        p.check(self.hr_rest >= 20.0 && self.hr_rest < self.hr_max, || {
            format!(
                "load.hr_rest: {} must be at least 20 and below load.hr_max ({})",
                self.hr_rest, self.hr_max
            )
        });
        let zones = zones(&self.zones, &mut p);
        speeds("load", self.hsr_speed, self.sprint_speed, &mut p);
        p.check(self.max_speed > self.sprint_speed, || {
            format!(
                "load.max_speed: {} must be above load.sprint_speed ({})",
                self.max_speed, self.sprint_speed
            )
        });
        p.check(self.max_players >= 1, || {
            "load.max_players: must be at least 1".to_string()
        });
        let positions = self.positions(&mut p);
        let rules = self.rules(&mut p);
        let roster = match &self.roster {
            None => Roster::default(),
            Some(path) => Roster::read(path).unwrap_or_else(|problems| {
                problems.into_iter().for_each(|x| p.push(x));
                Roster::default()
            }),
        };
        let config = LoadConfig {
            roster: Arc::new(roster),
            defaults: Profile {
                player_id: 0,
                on_roster: false,
                name: None,
                position: None,
                hr_max: self.hr_max,
                hr_rest: self.hr_rest,
                hsr_speed: self.hsr_speed,
                sprint_speed: self.sprint_speed,
                target_trimp: None,
            },
            positions,
            zones,
            sprint_dwell,
            max_speed: self.max_speed,
            max_gap,
            max_players: self.max_players as usize,
            rules,
        };
        config.check_players(&mut p);
        p.finish(config)
    }

    fn rules(&self, p: &mut Problems) -> Vec<Rule> {
        let mut out: Vec<Rule> = Vec::new();
        for (i, r) in self.rules.iter().enumerate() {
            let key = format!("load.rules[{i}]");
            let rule = r.validate(&key, p);
            p.check(out.iter().all(|o| o.name != rule.name), || {
                format!("{key}.name: {:?} is named twice", rule.name)
            });
            out.push(rule);
        }
        out
    }

    fn positions(&self, p: &mut Problems) -> Vec<(String, Option<f64>, Option<f64>)> {
        let mut out: Vec<(String, Option<f64>, Option<f64>)> = Vec::new();
        for (i, pos) in self.positions.iter().enumerate() {
            let key = format!("load.positions[{i}]");
            p.check(!pos.name.trim().is_empty(), || {
                format!("{key}.name: must not be empty")
            });
            p.check(out.iter().all(|(n, ..)| *n != pos.name), || {
                format!("{key}.name: {:?} is named twice", pos.name)
            });
            let hsr = pos.hsr_speed.unwrap_or(self.hsr_speed);
            let sprint = pos.sprint_speed.unwrap_or(self.sprint_speed);
            speeds(&key, hsr, sprint, p);
            out.push((pos.name.clone(), pos.hsr_speed, pos.sprint_speed));
        }
        out
    }
}

/// Five increasing zone edges above 0 and at most 150 % of HRmax.
fn zones(z: &[f64], p: &mut Problems) -> [f64; 5] {
    let ok = z.len() == 5
        && z.iter().all(|e| e.is_finite() && *e > 0.0 && *e <= 150.0)
        && z.windows(2).all(|w| w[0] < w[1]);
    p.check(ok, || {
        format!(
            "load.zones: {z:?} must be five increasing % of HRmax above 0, such as [50, 60, 70, 80, 90]"
        )
    });
    if ok {
        [z[0], z[1], z[2], z[3], z[4]]
    } else {
        [50.0, 60.0, 70.0, 80.0, 90.0]
    }
}

/// A high-speed threshold above 0 and a sprint threshold at least as high.
fn speeds(key: &str, hsr: f64, sprint: f64, p: &mut Problems) {
    p.check(hsr.is_finite() && hsr > 0.0, || {
        format!("{key}.hsr_speed: {hsr} must be a speed above 0 (m/s)")
    });
    p.check(sprint.is_finite() && sprint >= hsr, || {
        format!("{key}.sprint_speed: {sprint} must be at least hsr_speed ({hsr}) (m/s)")
    });
}
