//! `[[load.rules]]` on one player (SPEC §11): after each event, each rule
//! that applies to the player looks at what the event changed and says
//! whether it fires. Deterministic in event order, like the rest of load.

use super::player::{Added, Player, RuleState};
use crate::config::{LoadConfig, Watch};
use crate::model::Micros;

/// A rule that fired for a player at an event.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    /// Index in `load.rules`.
    pub rule: usize,
    /// The watched value that reached the rule's threshold.
    pub value: f64,
}

/// Evaluates every rule of `p` for player `pl` after an event at `t` that
/// did `added`; pushes what fires onto `out`.
pub(super) fn evaluate(
    p: &LoadConfig,
    pl: &mut Player,
    t: Micros,
    added: &Added,
    out: &mut Vec<Firing>,
) {
    if pl.rules.len() != p.rules.len() {
        pl.rules = vec![RuleState::default(); p.rules.len()];
    }
    let trimp = pl.match_trimp();
    let f = &pl.profile;
    for (i, rule) in p.rules.iter().enumerate() {
        if !rule.applies(f.player_id, f.position.as_deref()) {
            continue;
        }
        let st = &mut pl.rules[i];
        let value = match rule.watch {
            Watch::HrPct { pct, hold } => {
                let Some((h, prev)) = added.heart_rate else {
                    continue;
                };
                hr_pct(st, 100.0 * h / f.hr_max, pct, hold, t, prev, p.max_gap)
            }
            Watch::Sprints { count, within } if added.sprint => sprints(st, count, within, t),
            Watch::Sprints { .. } => None,
            Watch::LoadPct { pct } => f.target_trimp.filter(|t| *t > 0.0).and_then(|target| {
                let now = 100.0 * trimp / target;
                (!st.fired && now >= pct).then(|| {
                    st.fired = true;
                    now
                })
            }),
        };
        if let Some(value) = value {
            out.push(Firing { rule: i, value });
        }
    }
}

/// Heart rate at `now` % of HRmax: held at or above `pct` for `hold`, with
/// no gap over `max_gap`, fires once until it drops below again.
fn hr_pct(
    st: &mut RuleState,
    now: f64,
    pct: f64,
    hold: Micros,
    t: Micros,
    prev: Option<Micros>,
    max_gap: Micros,
) -> Option<f64> {
    if now < pct {
        st.since = None;
        st.fired = false;
        return None;
    }
    let gap = prev.is_none_or(|p| t - p > max_gap);
    if st.since.is_none() || gap {
        st.since = Some(t);
        st.fired = false;
    }
    let held = st.since.is_some_and(|s| t - s >= hold);
    (held && !st.fired).then(|| {
        st.fired = true;
        now
    })
}

/// A sprint at `t`: fires when `count` sprints fall within `within`, then
/// counts afresh.
fn sprints(st: &mut RuleState, count: u32, within: Micros, t: Micros) -> Option<f64> {
    st.sprints.push_back(t);
    while st.sprints.front().is_some_and(|&s| s <= t - within) || st.sprints.len() > count as usize
    {
        st.sprints.pop_front();
    }
    (st.sprints.len() == count as usize).then(|| {
        st.sprints.clear();
        count as f64
    })
}
