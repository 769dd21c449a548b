//! The load tracker's checkpoint: every player's previous readings, open
//! run, open windows' sums, match totals and rule states (by rule name, so
//! that a rule renamed or removed across a restart starts afresh). The
//! players' figures are not saved: they are resolved from the roster the
//! gateway starts with.

use super::player::{Player, Prev, RuleState, Run, Session, Sums};
use super::LoadTracker;
use crate::util::codec::{Dec, DecodeError, Enc};

impl LoadTracker {
    /// Writes the state (checkpoints), players in key order.
    pub fn save(&self, e: &mut Enc) {
        e.u64(self.arrivals);
        e.u64(self.counters.evictions);
        e.u64(self.counters.unrostered);
        e.u64(self.counters.speed_glitches);
        let mut players: Vec<_> = self.players.iter().collect();
        players.sort_unstable_by_key(|(k, _)| **k);
        e.u64(players.len() as u64);
        for (k, pl) in players {
            e.i64(k.0);
            e.i64(k.1);
            e.u64(pl.touched);
            e.opt_i64(pl.hr);
            save_prev(e, &pl.dist);
            save_prev(e, &pl.accel);
            e.opt_i64(pl.run.map(|r| r.start));
            e.u8(pl.run.is_some_and(|r| r.counted) as u8);
            e.u64(pl.open.len() as u64);
            for (start, s) in pl.open.iter() {
                e.i64(*start);
                save_sums(e, s);
            }
            let s = &pl.session;
            for v in [s.distance, s.hsr_distance, s.trimp_edwards, s.accel_load] {
                e.f64(v);
            }
            e.i64(s.sprints);
            let states: Vec<_> = pl.rules.iter().zip(&self.p.rules).collect();
            e.u64(states.len() as u64);
            for (st, rule) in states {
                e.str(&rule.name);
                e.opt_i64(st.since);
                e.u8(st.fired as u8);
                e.u64(st.sprints.len() as u64);
                for t in &st.sprints {
                    e.i64(*t);
                }
            }
        }
    }

    /// Restores what [`LoadTracker::save`] wrote into this empty tracker
    /// (at most `max_players` players).
    pub fn load(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        self.arrivals = d.u64()?;
        self.counters.evictions = d.u64()?;
        self.counters.unrostered = d.u64()?;
        self.counters.speed_glitches = d.u64()?;
        let n = d.count(40)?;
        for _ in 0..n {
            let key = (d.i64()?, d.i64()?);
            let mut pl = Player::new(self.p.profile(key.1));
            pl.touched = d.u64()?;
            pl.hr = d.opt_i64()?;
            pl.dist = load_prev(d)?;
            pl.accel = load_prev(d)?;
            let run_start = d.opt_i64()?;
            let counted = d.u8()? != 0;
            pl.run = run_start.map(|start| Run { start, counted });
            let open = d.count(8)?;
            for _ in 0..open {
                let start = d.i64()?;
                *pl.open.get_or_open(start) = load_sums(d)?;
            }
            pl.session = Session {
                distance: d.f64()?,
                hsr_distance: d.f64()?,
                trimp_edwards: d.f64()?,
                accel_load: d.f64()?,
                sprints: d.i64()?,
            };
            self.load_rules(d, &mut pl)?;
            if self.players.len() < self.p.max_players {
                self.players.insert(key, pl);
            }
        }
        self.rebuild_order();
        Ok(())
    }
}

impl LoadTracker {
    /// A player's rule states, placed by rule name.
    fn load_rules(&self, d: &mut Dec<'_>, pl: &mut Player) -> Result<(), DecodeError> {
        let n = d.count(13)?;
        for _ in 0..n {
            let name = d.string()?;
            let mut st = RuleState {
                since: d.opt_i64()?,
                fired: d.u8()? != 0,
                ..RuleState::default()
            };
            for _ in 0..d.count(8)? {
                st.sprints.push_back(d.i64()?);
            }
            if let Some(i) = self.p.rules.iter().position(|r| r.name == name) {
                pl.rules.resize(self.p.rules.len(), RuleState::default());
                pl.rules[i] = st;
            }
        }
        Ok(())
    }
}

fn save_prev(e: &mut Enc, p: &Option<Prev>) {
    match p {
        None => e.u8(0),
        Some(p) => {
            e.u8(1);
            e.i64(p.t);
            e.u64(p.device);
            e.f64(p.v);
        }
    }
}

fn load_prev(d: &mut Dec<'_>) -> Result<Option<Prev>, DecodeError> {
    Ok(match d.u8()? {
        0 => None,
        _ => Some(Prev {
            t: d.i64()?,
            device: d.u64()?,
            v: d.f64()?,
        }),
    })
}

fn save_sums(e: &mut Enc, s: &Sums) {
    for z in s.zone_us {
        e.i64(z);
    }
    e.f64(s.trimp_banister);
    e.f64(s.distance);
    e.f64(s.hsr_distance);
    e.i64(s.hsr_us);
    e.i64(s.sprints);
    e.f64(s.accel_load);
}

fn load_sums(d: &mut Dec<'_>) -> Result<Sums, DecodeError> {
    let mut zone_us = [0; 5];
    for z in &mut zone_us {
        *z = d.i64()?;
    }
    Ok(Sums {
        zone_us,
        trimp_banister: d.f64()?,
        distance: d.f64()?,
        hsr_distance: d.f64()?,
        hsr_us: d.i64()?,
        sprints: d.i64()?,
        accel_load: d.f64()?,
    })
}
