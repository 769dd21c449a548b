use super::*;
use crate::model::SensorKind;
use crate::pipeline::console_rows::{DeviceEventKind, DeviceEventRecord};
use crate::pipeline::detect::stats::Baseline;
use crate::pipeline::fatigue::FatigueFinding;
use crate::pipeline::rows::{AlertIdentity, AlertRecord, FatigueRecord};
use proptest::prelude::*;

const SEC: Micros = 1_000_000;

fn zscore(device: &str, metric: &str) -> LiveAlert {
    LiveAlert::ZScore(AlertRecord {
        alert_id: format!("v/wearable/{device}/{metric}/1"),
        sensor: SensorKind::Wearable,
        device_id: device.into(),
        metric: metric.into(),
        value: 190.0,
        z_score: 4.1,
        baseline: Baseline {
            mean: 120.0,
            std: 4.0,
            count: 30,
        },
        match_id: 1,
        event_time: 0,
        detected_at: 0,
        identity: AlertIdentity::default(),
        clock_synchronized: Some(true),
    })
}

fn fatigue(player: i64) -> LiveAlert {
    LiveAlert::Fatigue(FatigueRecord {
        alert_id: format!("v/fatigue/1/{player}/1"),
        match_id: 1,
        player_id: player,
        player_name: None,
        window_start: 0,
        window_end: 60 * SEC,
        heart_rate_mean: 170.0,
        finding: FatigueFinding {
            baseline_mean: 150.0,
            baseline_std: 4.0,
            baseline_windows: 3,
        },
    })
}

fn device(id: &str, event: DeviceEventKind) -> LiveAlert {
    LiveAlert::Device(DeviceEventRecord {
        sensor: SensorKind::Wearable,
        device_id: id.into(),
        player_id: Some(3),
        zone_id: None,
        event,
        last_seen: 0,
        at: 0,
    })
}

fn filter(cooldown: Micros, cap: usize) -> NotifyCooldown {
    NotifyCooldown::new(cooldown, cap, Arc::new(AlertStats::default()))
}

fn suppressed(f: &NotifyCooldown) -> u64 {
    AlertStats::get(&f.stats.notify_suppressed)
}

#[test]
fn without_a_cooldown_every_alert_passes_and_nothing_is_remembered() {
    let mut f = filter(0, 10);
    let out = f.filter(vec![zscore("b", "hr"), zscore("b", "hr")], SEC);
    assert_eq!(out.len(), 2);
    assert_eq!(f.keys(), 0);
    assert_eq!(suppressed(&f), 0);
}

#[test]
fn a_repeated_key_is_held_back_until_its_cooldown_is_over() {
    let mut f = filter(10 * SEC, 10);
    assert_eq!(
        f.filter(vec![zscore("b", "hr"), zscore("b", "hr")], 0)
            .len(),
        1
    );
    assert_eq!(f.filter(vec![zscore("b", "hr")], 9 * SEC).len(), 0);
    assert_eq!(f.filter(vec![zscore("b", "hr")], 10 * SEC).len(), 1);
    assert_eq!(suppressed(&f), 2);
}

#[test]
fn keys_differ_by_device_metric_player_and_device_event() {
    let mut f = filter(10 * SEC, 100);
    let all = vec![
        zscore("b-1", "hr"),
        zscore("b-1", "speed"),
        zscore("b-2", "hr"),
        fatigue(7),
        fatigue(8),
        device("b-1", DeviceEventKind::Silent),
        device("b-1", DeviceEventKind::Back),
        device("b-2", DeviceEventKind::Silent),
    ];
    assert_eq!(f.filter(all.clone(), 0).len(), all.len());
    assert_eq!(f.filter(all, SEC).len(), 0);
}

#[test]
fn device_and_metric_names_cannot_run_into_each_other() {
    let mut f = filter(10 * SEC, 100);
    let out = f.filter(vec![zscore("ab", "c"), zscore("a", "bc")], 0);
    assert_eq!(out.len(), 2);
}

#[test]
fn a_clock_stepped_back_does_not_reopen_a_key() {
    let mut f = filter(10 * SEC, 10);
    assert_eq!(f.filter(vec![fatigue(1)], 100 * SEC).len(), 1);
    assert_eq!(f.filter(vec![fatigue(1)], 0).len(), 0);
    assert_eq!(f.filter(vec![fatigue(1)], 109 * SEC).len(), 0);
    assert_eq!(f.filter(vec![fatigue(1)], 110 * SEC).len(), 1);
}

#[test]
fn past_the_cap_the_oldest_key_is_forgotten_and_counted() {
    let mut f = filter(100 * SEC, 2);
    assert_eq!(f.filter(vec![fatigue(1), fatigue(2)], 0).len(), 2);
    assert_eq!(f.filter(vec![fatigue(3)], SEC).len(), 1);
    assert_eq!(f.keys(), 2);
    assert_eq!(AlertStats::get(&f.stats.notify_evictions), 1);
    // Player 1 was forgotten: it may notify again; player 3 may not.
    assert_eq!(f.filter(vec![fatigue(3), fatigue(1)], 2 * SEC).len(), 1);
}

/// An alert of key `k` (of a few kinds).
fn of_key(k: u16) -> LiveAlert {
    match k % 3 {
        0 => zscore(&format!("band-{k}"), "heart_rate"),
        1 => fatigue(k as i64),
        _ => device(&format!("band-{k}"), DeviceEventKind::Silent),
    }
}

proptest! {
    /// With no more keys than the cap: every alert offered is either passed
    /// or counted, and no key passes twice within the cooldown.
    #[test]
    fn each_alert_passes_or_is_counted_and_no_key_passes_twice_within_the_cooldown(
        cooldown in 1..50i64,
        batches in prop::collection::vec(
            (0..20i64, prop::collection::vec(0..30u16, 0..8)), 1..60),
    ) {
        let mut f = filter(cooldown, 30);
        let mut now = 0;
        let (mut offered, mut passed) = (0u64, 0u64);
        let mut last_pass: std::collections::HashMap<u16, Micros> = Default::default();
        for (dt, keys) in batches {
            now += dt;
            offered += keys.len() as u64;
            let out = f.filter(keys.iter().map(|k| of_key(*k)).collect(), now);
            passed += out.len() as u64;
            for a in &out {
                let k = keys.iter().copied().find(|k| &of_key(*k) == a).unwrap();
                if let Some(t) = last_pass.insert(k, now) {
                    prop_assert!(now - t >= cooldown, "key {k} passed at {t} and {now}");
                }
            }
            // Whatever was held back was held back for a key that passed within the cooldown.
            for k in &keys {
                prop_assert!(last_pass.get(k).is_some_and(|t| now - t < cooldown));
            }
        }
        prop_assert_eq!(passed + suppressed(&f), offered);
        prop_assert_eq!(AlertStats::get(&f.stats.notify_evictions), 0);
    }

    /// Ten times the cap of distinct keys: the map never grows past its cap
    /// and the count still adds up.
    #[test]
    fn the_key_map_stays_under_its_cap_under_key_churn(
        cap in 1..40usize,
        seed in any::<u64>(),
    ) {
        let mut f = filter(1_000 * SEC, cap);
        let mut rng = crate::util::rng::Rng::new(seed);
        let (mut offered, mut passed) = (0u64, 0u64);
        for step in 0..cap * 10 {
            let n = (rng.next_u64() % 4) as usize;
            let batch: Vec<LiveAlert> = (0..n)
                .map(|_| of_key((rng.next_u64() % (cap as u64 * 10)) as u16))
                .collect();
            offered += batch.len() as u64;
            passed += f.filter(batch, step as Micros).len() as u64;
            prop_assert!(f.keys() <= cap && f.order.len() == f.keys());
        }
        prop_assert_eq!(passed + suppressed(&f), offered);
    }
}
