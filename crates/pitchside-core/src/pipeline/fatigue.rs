//! Fatigue alerts (SPEC §4): a player's window heart-rate mean far above the
//! mean of their previous windows in the same match.
//!
//! Pure logic, fed with emitted `windows_wearable` rows in window order.

use crate::config::FatigueConfig;
use crate::model::Micros;
use crate::util::hash::FxHashMap;
use std::collections::VecDeque;

/// A fatigue finding for one window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FatigueFinding {
    /// Mean of the previous windows' heart-rate means.
    pub baseline_mean: f64,
    /// Their sample standard deviation.
    pub baseline_std: f64,
    /// How many windows formed the baseline.
    pub baseline_windows: usize,
}

#[derive(Debug)]
struct History {
    means: VecDeque<f64>,
    last_start: Micros,
}

/// Per-player history of window heart-rate means, bounded by `max_players`.
#[derive(Debug)]
pub struct FatigueTracker {
    /// `[fatigue]`, as validated.
    p: FatigueConfig,
    players: FxHashMap<(i64, i64), History>,
    evictions: u64,
}

impl FatigueTracker {
    /// An empty tracker.
    pub fn new(p: FatigueConfig) -> FatigueTracker {
        FatigueTracker {
            p,
            players: FxHashMap::default(),
            evictions: 0,
        }
    }

    /// Players forgotten to stay within `max_players`.
    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Players with history.
    pub fn players(&self) -> usize {
        self.players.len()
    }

    /// Records an emitted wearable window; returns a finding if it is a
    /// fatigue alert. Windows without a heart-rate mean are skipped.
    pub fn on_window(
        &mut self,
        match_id: i64,
        player_id: i64,
        window_start: Micros,
        heart_rate_mean: Option<f64>,
    ) -> Option<FatigueFinding> {
        let hr = heart_rate_mean?;
        let key = (match_id, player_id);
        if !self.players.contains_key(&key) && self.players.len() >= self.p.max_players {
            // Forget the player whose last window is oldest. O(players), and
            // only when a new player arrives at the cap.
            if let Some(oldest) = self
                .players
                .iter()
                .min_by_key(|(k, h)| (h.last_start, **k))
                .map(|(k, _)| *k)
            {
                self.players.remove(&oldest);
                self.evictions += 1;
            }
        }
        let n = self.p.baseline_windows;
        let h = self.players.entry(key).or_insert_with(|| History {
            means: VecDeque::with_capacity(n + 1),
            last_start: window_start,
        });
        h.last_start = window_start;
        let finding = (h.means.len() == n).then(|| {
            let mean = h.means.iter().sum::<f64>() / n as f64;
            let var = h.means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            FatigueFinding {
                baseline_mean: mean,
                baseline_std: var.sqrt(),
                baseline_windows: n,
            }
        });
        h.means.push_back(hr);
        if h.means.len() > n {
            h.means.pop_front();
        }
        finding.filter(|f| hr > f.baseline_mean + self.p.k * f.baseline_std && hr > f.baseline_mean)
    }
}

impl FatigueTracker {
    /// Writes every player's history (checkpoints).
    pub fn save(&self, e: &mut crate::util::codec::Enc) {
        e.u64(self.evictions);
        e.u64(self.players.len() as u64);
        let mut keys: Vec<_> = self.players.keys().copied().collect();
        keys.sort_unstable();
        for k in keys {
            let h = &self.players[&k];
            e.i64(k.0);
            e.i64(k.1);
            e.i64(h.last_start);
            e.u64(h.means.len() as u64);
            for m in &h.means {
                e.f64(*m);
            }
        }
    }

    /// Restores what [`FatigueTracker::save`] wrote (keeping at most
    /// `baseline_windows` means per player and `max_players` players).
    pub fn load(
        &mut self,
        d: &mut crate::util::codec::Dec<'_>,
    ) -> Result<(), crate::util::codec::DecodeError> {
        self.evictions = d.u64()?;
        let n = d.count(32)?;
        for _ in 0..n {
            let key = (d.i64()?, d.i64()?);
            let last_start = d.i64()?;
            let m = d.count(8)?;
            let mut means = VecDeque::with_capacity(self.p.baseline_windows + 1);
            for _ in 0..m {
                means.push_back(d.f64()?);
                if means.len() > self.p.baseline_windows {
                    means.pop_front();
                }
            }
            if self.players.len() < self.p.max_players {
                self.players.insert(key, History { means, last_start });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(max_players: usize) -> FatigueConfig {
        FatigueConfig {
            baseline_windows: 3,
            k: 1.5,
            max_players,
        }
    }

    #[test]
    fn rising_heart_rate_after_three_windows_raises_fatigue() {
        let mut f = FatigueTracker::new(config(100));
        assert_eq!(f.on_window(1, 7, 0, Some(140.0)), None);
        assert_eq!(f.on_window(1, 7, 1, Some(142.0)), None);
        assert_eq!(f.on_window(1, 7, 2, Some(144.0)), None);
        let got = f.on_window(1, 7, 3, Some(160.0)).expect("fatigue");
        assert_eq!(got.baseline_mean, 142.0);
        assert_eq!(got.baseline_std, 2.0, "sample std of 140, 142, 144");
        assert_eq!(got.baseline_windows, 3);
    }

    #[test]
    fn value_within_k_sigma_is_no_alert_and_baseline_excludes_current() {
        let mut f = FatigueTracker::new(config(100));
        for (i, hr) in [140.0, 142.0, 144.0].into_iter().enumerate() {
            f.on_window(1, 7, i as i64, Some(hr));
        }
        // 142 + 1.5*2 = 145: 145 is not above it.
        assert_eq!(f.on_window(1, 7, 3, Some(145.0)), None);
    }

    #[test]
    fn windows_without_heart_rate_neither_alert_nor_count() {
        let mut f = FatigueTracker::new(config(100));
        f.on_window(1, 7, 0, Some(140.0));
        f.on_window(1, 7, 1, None);
        f.on_window(1, 7, 2, Some(140.0));
        assert_eq!(
            f.on_window(1, 7, 3, Some(200.0)),
            None,
            "only two baseline windows so far"
        );
    }

    #[test]
    fn flat_baseline_alerts_on_any_rise() {
        let mut f = FatigueTracker::new(config(100));
        for i in 0..3 {
            f.on_window(1, 7, i, Some(150.0));
        }
        assert!(f.on_window(1, 7, 3, Some(150.5)).is_some());
        let mut g = FatigueTracker::new(config(100));
        for i in 0..3 {
            g.on_window(1, 7, i, Some(150.0));
        }
        assert!(
            g.on_window(1, 7, 3, Some(150.0)).is_none(),
            "equal is not above"
        );
    }

    #[test]
    fn matches_and_players_are_separate_and_capped() {
        let mut f = FatigueTracker::new(config(2));
        f.on_window(1, 7, 0, Some(1.0));
        f.on_window(2, 7, 0, Some(1.0));
        f.on_window(1, 8, 1, Some(1.0));
        assert_eq!(f.players(), 2);
        assert_eq!(f.evictions(), 1);
    }
}
