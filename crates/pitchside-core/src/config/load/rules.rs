//! `[[load.rules]]`: alerts on a player's load, in the terms the staff set
//! them ("heart rate at or above 92 % of HRmax for 60 s", "6 sprints in 10
//! minutes", "80 % of the match's target load"), for all players or some
//! positions or players.

use super::super::error::Problems;
use crate::model::Micros;

/// What a rule watches.
pub const WATCHED: [&str; 3] = ["hr_pct", "sprints", "load_pct"];

crate::config::section! {
    /// `[[load.rules]]`: one alert rule on player load.
    #[serde(deny_unknown_fields)]
    pub struct RuleSection {
        /// The rule's name, in alert ids, MQTT topics and on the console: 1-32 of [a-z0-9-].
        name: String,
        /// What is watched: hr_pct (heart rate in % of the player's HRmax), sprints
        /// (sprints counted within `within`), load_pct (the match's Edwards TRIMP in % of
        /// the roster's target_trimp).
        watch: String [Choice(&WATCHED, "hr_pct, sprints or load_pct")],
        /// Alert when the watched value is at or above this.
        at_least: f64,
        /// hr_pct: how long the heart rate must stay at or above it (event time).
        hold: String [Duration] = "0s".into(),
        /// sprints: the event time over which sprints are counted.
        within: String [Duration] = "10m".into(),
        /// Only players of these roster positions (none: every position).
        positions: Vec<String> [TextList] = Vec::new(),
        /// Only these players (none: every player).
        players: Vec<i64> [IntList] = Vec::new(),
    }
}

/// What a checked rule watches, with its threshold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Watch {
    /// Heart rate ≥ `pct` % of HRmax for `hold` µs.
    HrPct {
        /// % of HRmax.
        pct: f64,
        /// µs.
        hold: Micros,
    },
    /// At least `count` sprints within `within` µs.
    Sprints {
        /// Sprints.
        count: u32,
        /// µs.
        within: Micros,
    },
    /// The match's Edwards TRIMP ≥ `pct` % of the player's target.
    LoadPct {
        /// % of `target_trimp`.
        pct: f64,
    },
}

impl Watch {
    /// The name of what is watched (`load_alerts.watch`).
    pub fn name(&self) -> &'static str {
        match self {
            Watch::HrPct { .. } => "hr_pct",
            Watch::Sprints { .. } => "sprints",
            Watch::LoadPct { .. } => "load_pct",
        }
    }

    /// The threshold as written.
    pub fn threshold(&self) -> f64 {
        match *self {
            Watch::HrPct { pct, .. } | Watch::LoadPct { pct } => pct,
            Watch::Sprints { count, .. } => count as f64,
        }
    }
}

/// A checked rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Its name.
    pub name: String,
    /// What it watches.
    pub watch: Watch,
    /// Positions it applies to (empty: all).
    pub positions: Vec<String>,
    /// Players it applies to (empty: all).
    pub players: Vec<i64>,
}

impl Rule {
    /// Whether the rule is for this player.
    pub fn applies(&self, player_id: i64, position: Option<&str>) -> bool {
        (self.players.is_empty() || self.players.contains(&player_id))
            && (self.positions.is_empty()
                || position.is_some_and(|p| self.positions.iter().any(|q| q == p)))
    }
}

/// Most sprints a rule may count to: a player's recent sprint times are kept.
pub const MAX_RULE_SPRINTS: f64 = 100.0;

impl RuleSection {
    /// Checks the rule at `key` (`load.rules[i]`).
    pub fn validate(&self, key: &str, p: &mut Problems) -> Rule {
        let valid_name = !self.name.is_empty()
            && self.name.len() <= 32
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        p.check(valid_name, || {
            format!("{key}.name: {:?} must be 1-32 of a-z, 0-9 and -", self.name)
        });
        let hold = p.duration(&format!("{key}.hold"), &self.hold, 0);
        let within = p.duration(&format!("{key}.within"), &self.within, 1_000_000);
        let v = self.at_least;
        let watch =
            match self.watch.as_str() {
                "hr_pct" => {
                    p.check(v.is_finite() && v > 0.0 && v <= 150.0, || {
                        format!("{key}.at_least: {v} must be a % of HRmax above 0, at most 150")
                    });
                    Watch::HrPct { pct: v, hold }
                }
                "sprints" => {
                    p.check(v.fract() == 0.0 && (1.0..=MAX_RULE_SPRINTS).contains(&v), || {
                    format!("{key}.at_least: {v} must be a whole number of sprints from 1 to 100")
                });
                    Watch::Sprints {
                        count: v.clamp(1.0, MAX_RULE_SPRINTS) as u32,
                        within,
                    }
                }
                "load_pct" => {
                    p.check(v.is_finite() && v > 0.0, || {
                        format!(
                            "{key}.at_least: {v} must be a % of the player's target_trimp above 0"
                        )
                    });
                    Watch::LoadPct { pct: v }
                }
                other => {
                    p.push(format!(
                        "{key}.watch: {other:?} must be hr_pct, sprints or load_pct"
                    ));
                    Watch::LoadPct { pct: v }
                }
            };
        Rule {
            name: self.name.clone(),
            watch,
            positions: self.positions.clone(),
            players: self.players.clone(),
        }
    }
}
