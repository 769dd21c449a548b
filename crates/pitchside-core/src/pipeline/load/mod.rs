//! Player load (SPEC §11): per player and event-time window, seconds in
//! each heart-rate zone, TRIMP, distance, high-speed running, sprints and
//! an accelerometer load, with the match's running totals.
//!
//! Pure logic. The stage hands it the readings that went into a wearable
//! window and asks for the player's row when that window is emitted, so a
//! `load_player_1m` row goes with each `windows_wearable` row. Here: the
//! tracker, bounded by `load.max_players`. `player`: one player's state
//! and the formulas. `rules`: `[[load.rules]]` on a player, after each
//! event. `snapshot`: the checkpoint.

mod player;
mod rules;
mod snapshot;
#[cfg(test)]
mod tests;

pub use player::{Session, Sums};

use crate::config::{LoadConfig, Profile};
use crate::model::{Event, Identity, Micros};
use crate::util::slots::Slots;
use player::Player;
use rules::Firing;
use tracing::{info, warn};

/// What the tracker counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadCounters {
    /// Players forgotten at `load.max_players`.
    pub evictions: u64,
    /// Players (match and player) seen that the roster does not have: they
    /// get the defaults.
    pub unrostered: u64,
    /// Distance intervals faster than `load.max_speed`, credited nothing.
    pub speed_glitches: u64,
}

/// One emitted window of one player: what its `load_player_1m` row holds.
#[derive(Debug, Clone, Copy)]
pub struct LoadRow<'a> {
    /// The player's figures (roster, position, defaults).
    pub profile: &'a Profile,
    /// This window's sums.
    pub window: Sums,
    /// The match's totals up to and including this window.
    pub session: Session,
}

/// A `[[load.rules]]` rule that fired for a player (a `load_alerts` row).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFinding {
    /// The rule's name.
    pub rule: String,
    /// What it watches (`hr_pct`, `sprints`, `load_pct`).
    pub watch: &'static str,
    /// The rule's threshold.
    pub threshold: f64,
    /// The watched value that reached it.
    pub value: f64,
    /// The player's figures (name and position from the roster).
    pub profile: Profile,
}

/// A player's load now, for the console.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayerLoadStatus {
    /// Match.
    pub match_id: i64,
    /// Player.
    pub player_id: i64,
    /// The roster's name.
    pub name: Option<String>,
    /// The roster's position.
    pub position: Option<String>,
    /// The last heart rate in % of HRmax.
    pub hr_pct: Option<f64>,
    /// Its zone, 1 to 5 (0: below zone 1).
    pub zone: Option<u8>,
    /// The match so far (emitted and open windows).
    pub so_far: Session,
    /// The roster's Edwards TRIMP target for a match.
    pub target_trimp: Option<f64>,
    /// The last emitted window: start, sums.
    pub last_window: Option<(Micros, Sums)>,
}

/// Load state of every player, bounded by `load.max_players`.
#[derive(Debug)]
pub struct LoadTracker {
    /// `[load]`, as validated.
    p: LoadConfig,
    /// By `(match_id, player_id)`, densely (a hash map of ~500-byte states
    /// took twice the memory at `max_players`).
    players: Slots<(i64, i64), Player>,
    /// Updates so far: the order in which players were last updated.
    arrivals: u64,
    /// `(arrival, player)` of every update, oldest first: the stalest
    /// player is the first entry still its player's last update. Stale
    /// entries are dropped when it has twice as many as there are players,
    /// so an eviction costs O(1) amortised, whatever the churn.
    order: std::collections::VecDeque<(u64, (i64, i64))>,
    counters: LoadCounters,
    /// Rules fired by the last event.
    firings: Vec<Firing>,
}

impl LoadTracker {
    /// No players yet.
    pub fn new(p: LoadConfig) -> LoadTracker {
        LoadTracker {
            p,
            players: Slots::default(),
            arrivals: 0,
            order: std::collections::VecDeque::new(),
            counters: LoadCounters::default(),
            firings: Vec::new(),
        }
    }

    /// Takes a reloaded `[load]` (and roster): each player's figures are
    /// resolved again; state is kept, down to a lowered `max_players`.
    pub fn reload(&mut self, p: LoadConfig) {
        let rules_changed = self.p.rules != p.rules;
        self.p = p;
        for (&(_, player_id), pl) in self.players.iter_mut() {
            pl.profile = self.p.profile(player_id);
            if rules_changed {
                // Changed rules start from nothing (no hold under way, none fired).
                pl.rules.clear();
            }
        }
        while self.players.len() > self.p.max_players {
            self.evict_stalest();
        }
    }

    /// Counters so far.
    pub fn counters(&self) -> LoadCounters {
        self.counters
    }

    /// Players with load state.
    pub fn players(&self) -> usize {
        self.players.len()
    }

    /// Credits the non-duplicate readings `values` of wearable event `e`,
    /// which went into the window starting at `start`.
    pub fn add(&mut self, e: &Event, start: Micros, values: &[(u8, f64)]) {
        let Identity::Wearable { player_id, .. } = e.identity else {
            return;
        };
        let key = (e.match_id, player_id);
        let slot = match self.players.find(&key) {
            Some(slot) => slot,
            None => self.admit(key),
        };
        self.arrivals += 1;
        let pl = self.players.at_mut(slot);
        pl.touched = self.arrivals;
        self.order.push_back((self.arrivals, key));
        let added = pl.add(&self.p, &e.device_id, e.event_time, start, values);
        self.counters.speed_glitches += added.glitches;
        if !self.p.rules.is_empty() {
            rules::evaluate(&self.p, pl, e.event_time, &added, &mut self.firings);
        }
        if self.order.len() > 2 * self.players.len() + 64 {
            self.compact_order();
        }
    }

    /// Drops the entries of `order` that are not their player's last update.
    fn compact_order(&mut self) {
        let players = &self.players;
        self.order
            .retain(|(at, key)| players.get(key).is_some_and(|pl| pl.touched == *at));
    }

    /// `order` made again from the players (after a restore).
    fn rebuild_order(&mut self) {
        let mut order: Vec<_> = self
            .players
            .iter()
            .map(|(k, pl)| (pl.touched, *k))
            .collect();
        order.sort_unstable();
        self.order = order.into();
    }

    /// Each player's load now, one per `player_id` (its latest match), by
    /// `player_id`.
    pub fn statuses(&self) -> Vec<PlayerLoadStatus> {
        let mut latest: std::collections::BTreeMap<i64, (&(i64, i64), &Player)> =
            Default::default();
        for (k, pl) in self.players.iter() {
            let e = latest.entry(k.1).or_insert((k, pl));
            if pl.touched > e.1.touched {
                *e = (k, pl);
            }
        }
        latest
            .into_values()
            .map(|(&(match_id, player_id), pl)| {
                let mut so_far = pl.session;
                for (_, s) in pl.open.iter() {
                    so_far.add(s);
                }
                let f = &pl.profile;
                PlayerLoadStatus {
                    match_id,
                    player_id,
                    name: f.name.as_deref().map(str::to_string),
                    position: f.position.as_deref().map(str::to_string),
                    hr_pct: pl.hr_pct,
                    zone: pl
                        .hr_pct
                        .map(|pct| self.p.zones.iter().take_while(|&&e| pct >= e).count() as u8),
                    so_far,
                    target_trimp: f.target_trimp,
                    last_window: pl.last_window,
                }
            })
            .collect()
    }

    /// Whether the last [`LoadTracker::add`] fired a rule.
    pub fn fired(&self) -> bool {
        !self.firings.is_empty()
    }

    /// The rules the last [`LoadTracker::add`] fired for the player
    /// `(match_id, player_id)`, its event's.
    pub fn take_findings(&mut self, match_id: i64, player_id: i64) -> Vec<LoadFinding> {
        let Some(pl) = self.players.get(&(match_id, player_id)) else {
            self.firings.clear();
            return Vec::new();
        };
        let p = &self.p;
        self.firings
            .drain(..)
            .map(|f| {
                let rule = &p.rules[f.rule];
                LoadFinding {
                    rule: rule.name.clone(),
                    watch: rule.watch.name(),
                    threshold: rule.watch.threshold(),
                    value: f.value,
                    profile: pl.profile.clone(),
                }
            })
            .collect()
    }

    /// A new player: room made at the cap, its figures resolved; returns
    /// its slot.
    fn admit(&mut self, key: (i64, i64)) -> u32 {
        if self.players.len() >= self.p.max_players {
            self.evict_stalest();
        }
        let profile = self.p.profile(key.1);
        if !profile.on_roster {
            self.counters.unrostered += 1;
            if self.counters.unrostered.is_power_of_two() {
                info!(
                    match_id = key.0,
                    player_id = key.1,
                    players = self.counters.unrostered,
                    "Player not on the load.roster: load uses the [load] defaults (hr_max, speeds). \
                     Counted in pitchside_load_unrostered_players_total; logged at powers of two."
                );
            }
        }
        self.players.insert(key, Player::new(profile))
    }

    /// Forgets the player updated longest ago.
    fn evict_stalest(&mut self) {
        let stalest = loop {
            let Some((at, key)) = self.order.pop_front() else {
                return;
            };
            if self.players.get(&key).is_some_and(|pl| pl.touched == at) {
                break key;
            }
        };
        self.players.remove(&stalest);
        self.counters.evictions += 1;
        if self.counters.evictions.is_power_of_two() {
            warn!(
                match_id = stalest.0,
                player_id = stalest.1,
                evictions = self.counters.evictions,
                max_players = self.p.max_players,
                "load.max_players reached: the player updated longest ago is forgotten (its open \
                 windows write no load_player_1m row; its match totals start again). Counted in \
                 pitchside_load_evictions_total; logged at powers of two."
            );
        }
    }

    /// The row of the player's window starting at `start`, now emitted;
    /// adds it to the match totals. `None` when the player was forgotten.
    pub fn on_window(
        &mut self,
        match_id: i64,
        player_id: i64,
        start: Micros,
    ) -> Option<LoadRow<'_>> {
        let pl = self.players.get_mut(&(match_id, player_id))?;
        let window = pl.open.take(start)?;
        pl.session.add(&window);
        pl.last_window = Some((start, window));
        Some(LoadRow {
            profile: &pl.profile,
            window,
            session: pl.session,
        })
    }
}
