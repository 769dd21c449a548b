//! `alerts.notify_cooldown`: at most one notification per key per cooldown
//! on the outputs people read (the log line, MQTT, the console). The tables
//! keep every alert; an alert held back here is never sent later.
//!
//! Keys: a z-score alert's (sensor, device, metric); a fatigue alert's
//! player; a device event's (sensor, device, event). Pure: the clock is an
//! argument. Bounded by `detector.max_keys` keys: past it the key that
//! passed longest ago is forgotten early (counted, logged at a limited
//! rate), which can only let one more notification through, never hold
//! one back.

use super::AlertStats;
use crate::model::Micros;
use crate::pipeline::LiveAlert;
use crate::util::hash::FxHashMap;
use crate::util::log_limit::LogLimiter;
use std::collections::VecDeque;
use std::sync::Arc;
use tracing::warn;

/// The cooldown filter between the pipeline and the notification outputs.
#[derive(Debug)]
pub struct NotifyCooldown {
    /// µs; 0 lets everything through.
    cooldown: Micros,
    /// Keys remembered at most.
    cap: usize,
    /// Key bytes → when that key last passed.
    passed: FxHashMap<Box<[u8]>, Micros>,
    /// The same keys in the order they passed, oldest first. With the
    /// clock never going back (see `latest`) this is also time order, so
    /// expired keys leave from the front.
    order: VecDeque<(Micros, Box<[u8]>)>,
    /// The latest clock seen: a wall clock stepped back does not reopen keys.
    latest: Micros,
    /// Key bytes of the alert being looked at (reused: no allocation for
    /// an alert held back).
    scratch: Vec<u8>,
    stats: Arc<AlertStats>,
    evict_log: LogLimiter,
}

impl NotifyCooldown {
    /// A filter letting one notification per key per `cooldown` µs through
    /// (0: all of them), remembering at most `cap` keys; counts go to `stats`.
    pub fn new(cooldown: Micros, cap: usize, stats: Arc<AlertStats>) -> NotifyCooldown {
        NotifyCooldown {
            cooldown: cooldown.max(0),
            cap: cap.max(1),
            passed: FxHashMap::default(),
            order: VecDeque::new(),
            latest: Micros::MIN,
            scratch: Vec::new(),
            stats,
            evict_log: LogLimiter::new(60_000_000),
        }
    }

    /// The alerts of `alerts` to notify at `now` (µs, wall clock), in their
    /// order; the others are counted in `notify_suppressed`.
    pub fn filter(&mut self, mut alerts: Vec<LiveAlert>, now: Micros) -> Vec<LiveAlert> {
        if self.cooldown == 0 || alerts.is_empty() {
            return alerts;
        }
        self.latest = self.latest.max(now);
        let now = self.latest;
        self.expire(now);
        let offered = alerts.len();
        alerts.retain(|a| self.admit(a, now));
        AlertStats::add(
            &self.stats.notify_suppressed,
            (offered - alerts.len()) as u64,
        );
        alerts
    }

    /// Keys remembered now.
    pub fn keys(&self) -> usize {
        self.passed.len()
    }

    /// Forgets keys whose cooldown is over at `now`.
    fn expire(&mut self, now: Micros) {
        while let Some((t, _)) = self.order.front() {
            if now.saturating_sub(*t) < self.cooldown {
                break;
            }
            if let Some((_, key)) = self.order.pop_front() {
                self.passed.remove(&key);
            }
        }
    }

    /// Whether `a` passes at `now`; a passing alert's key is remembered.
    fn admit(&mut self, a: &LiveAlert, now: Micros) -> bool {
        key_bytes(a, &mut self.scratch);
        if self.passed.contains_key(self.scratch.as_slice()) {
            return false;
        }
        if self.passed.len() >= self.cap {
            self.evict_oldest(now);
        }
        let key: Box<[u8]> = self.scratch.as_slice().into();
        self.passed.insert(key.clone(), now);
        self.order.push_back((now, key));
        true
    }

    /// Full: forgets the key that passed longest ago.
    fn evict_oldest(&mut self, now: Micros) {
        if let Some((_, key)) = self.order.pop_front() {
            self.passed.remove(&key);
            AlertStats::add(&self.stats.notify_evictions, 1);
            if let Some(held_back) = self.evict_log.allow(now) {
                warn!(
                    keys = self.cap,
                    not_logged = held_back,
                    "alerts.notify_cooldown: more alerting keys than detector.max_keys; \
                     the oldest is forgotten early and may notify again before its cooldown \
                     (counted in pitchside_notify_evictions_total)."
                );
            }
        }
    }
}

/// Writes the cooldown key of `a` into `out`: a tag byte, then the parts,
/// each string length-prefixed (so no two keys share bytes).
fn key_bytes(a: &LiveAlert, out: &mut Vec<u8>) {
    out.clear();
    match a {
        LiveAlert::ZScore(z) => {
            out.extend_from_slice(&[0, z.sensor as u8]);
            text(out, &z.device_id);
            text(out, &z.metric);
        }
        LiveAlert::Fatigue(f) => {
            out.push(1);
            out.extend_from_slice(&f.player_id.to_le_bytes());
        }
        LiveAlert::Load(l) => {
            out.push(3);
            out.extend_from_slice(&l.player_id.to_le_bytes());
            text(out, &l.rule);
        }
        LiveAlert::Device(d) => {
            out.extend_from_slice(&[2, d.sensor as u8]);
            text(out, d.event.as_str());
            text(out, &d.device_id);
        }
    }
}

/// Appends `s`, length first.
fn text(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

#[cfg(test)]
mod tests;
