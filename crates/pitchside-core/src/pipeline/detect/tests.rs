use super::*;
use proptest::prelude::*;
use std::collections::VecDeque;

fn params(window: usize, max_keys: usize) -> DetectorConfig {
    DetectorConfig {
        window,
        threshold: 3.5,
        min_baseline: 10,
        idle_timeout: 30 * 60 * 1_000_000,
        max_keys,
    }
}

/// Two-pass reference on values shifted by the first one, sums compensated.
fn reference(window: &[f64], x: f64) -> (f64, f64, f64) {
    let k = window[0];
    let n = window.len() as f64;
    let neumaier = |it: &mut dyn Iterator<Item = f64>| {
        let (mut s, mut c) = (0.0f64, 0.0f64);
        for v in it {
            let t = s + v;
            c += if s.abs() >= v.abs() {
                (s - t) + v
            } else {
                (v - t) + s
            };
            s = t;
        }
        s + c
    };
    let mean_d = neumaier(&mut window.iter().map(|v| v - k)) / n;
    let var = neumaier(&mut window.iter().map(|v| ((v - k) - mean_d).powi(2))) / n;
    let std = var.sqrt();
    (k + mean_d, std, ((x - k) - mean_d) / std)
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
    }
}

/// Feeds values to one key and checks every alert against the reference,
/// with a low threshold so that many readings alert.
fn check_against_reference(values: &[f64], window: usize) {
    let mut p = params(window, 10);
    p.threshold = 0.5;
    p.min_baseline = 2;
    let mut d = Detector::new(p);
    let mut hist: VecDeque<f64> = VecDeque::new();
    for (i, &x) in values.iter().enumerate() {
        let t = i as i64 * 1000;
        d.advance(t);
        let obs = d.observe(SensorKind::Generic, "dev", "m", t, x);
        if hist.len() >= 2 {
            let w: Vec<f64> = hist.iter().copied().collect();
            let (mean, std, z) = reference(&w, x);
            match obs {
                Observation::Alert { z_score, baseline } => {
                    // A mean that cancels to ~0 from huge values is only
                    // defined to within the values' own rounding, so the
                    // mean is compared on the scale of max(|mean|, std).
                    let scale = mean.abs().max(std);
                    assert!(
                        (baseline.mean - mean).abs() <= 1e-7 * scale,
                        "mean {} vs {mean}",
                        baseline.mean
                    );
                    assert!(
                        rel(baseline.std, std) < 1e-7,
                        "std {} vs {std}",
                        baseline.std
                    );
                    assert!(
                        (z_score - z).abs() <= 1e-7 * z.abs().max(1.0),
                        "z {z_score} vs {z}"
                    );
                    assert_eq!(baseline.count, w.len());
                }
                Observation::Normal => {
                    assert!(
                        std == 0.0 || z.abs() <= 0.5 * (1.0 + 1e-9),
                        "missed alert z={z}"
                    );
                }
                Observation::Duplicate { .. } => panic!("no duplicates here"),
            }
        }
        hist.push_back(x);
        if hist.len() > window {
            hist.pop_front();
        }
    }
}

proptest! {
    #[test]
    fn statistics_equal_a_two_pass_computation(
        values in prop::collection::vec(-1e6f64..1e6, 2..400),
        window in 2usize..50,
    ) {
        check_against_reference(&values, window);
    }

    /// Readings as sensors send them, short decimals: stored as 3-byte
    /// digits (`values`), recoded as the decimals change, and exact.
    #[test]
    fn statistics_of_sensor_decimals_equal_a_two_pass_computation(
        digits in prop::collection::vec((-3_000_000i64..3_000_000, 0u32..4), 2..400),
        window in 2usize..50,
    ) {
        let values: Vec<f64> = digits
            .iter()
            .map(|&(m, e)| format!("{m}e-{e}").parse().unwrap_or(0.0))
            .collect();
        check_against_reference(&values, window);
    }

    #[test]
    fn statistics_hold_at_large_offsets_with_tiny_noise(
        noise in prop::collection::vec(-1e-3f64..1e-3, 2..400),
        offset in prop::sample::select(vec![1e9, -1e9, 3.7e12, 1e15]),
        window in 2usize..120,
    ) {
        let values: Vec<f64> = noise.iter().map(|n| offset + n).collect();
        check_against_reference(&values, window);
    }

    #[test]
    fn statistics_survive_level_shifts(
        segs in prop::collection::vec((prop::sample::select(vec![0.0, 1e9, -5e8, 1e12, 1.0]), 1usize..60), 1..8),
        window in 2usize..40,
    ) {
        let mut values = Vec::new();
        let mut s = 1u64;
        for (level, len) in segs {
            for _ in 0..len {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                values.push(level + ((s >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 1e-3);
            }
        }
        check_against_reference(&values, window);
    }

    #[test]
    fn key_count_never_exceeds_max_keys(
        keys in prop::collection::vec(0u32..200, 1..2000),
        max_keys in 1usize..50,
    ) {
        let mut d = Detector::new(params(5, max_keys));
        for (i, k) in keys.iter().enumerate() {
            let t = i as i64;
            d.advance(t);
            // Ids from 2 to 200 bytes: keys inside their slot and on the heap.
            let dev = format!("d{k}{}", "x".repeat(*k as usize % 200));
            d.observe(SensorKind::Pitch, &dev, "ball_speed", t, 1.0);
            prop_assert!(d.keys() <= max_keys);
            let key = KeyRef {
                sensor: SensorKind::Pitch as u8,
                device: dev.as_bytes(),
                metric: b"ball_speed",
            };
            let found = d.find_key(key, key.hash());
            prop_assert_eq!(found, Some(d.lru_head), "the key just seen is live");
            // A slot's key bytes give back the parts, and so the hash, it was found by.
            let stored = d.slots[d.lru_head as usize].key.as_slice();
            prop_assert_eq!(KeyRef::of(stored).map(|k| k.hash()), Some(key.hash()));
        }
    }
}

fn feed(d: &mut Detector, dev: &str, t: i64, x: f64) -> Observation {
    d.advance(t);
    d.observe(SensorKind::Wearable, dev, "heart_rate", t, x)
}

#[test]
fn spike_after_a_stable_baseline_alerts_with_its_statistics() {
    let mut d = Detector::new(params(100, 10));
    for i in 0..20 {
        assert_eq!(
            feed(&mut d, "w", i, 100.0 + (i % 2) as f64),
            Observation::Normal
        );
    }
    match feed(&mut d, "w", 20, 110.0) {
        Observation::Alert { z_score, baseline } => {
            assert_eq!(baseline.count, 20);
            assert!((baseline.mean - 100.5).abs() < 1e-12);
            assert!((baseline.std - 0.5).abs() < 1e-12);
            assert!((z_score - 19.0).abs() < 1e-9);
        }
        o => panic!("expected an alert, got {o:?}"),
    }
}

#[test]
fn no_alert_before_min_baseline_readings() {
    let mut d = Detector::new(params(100, 10));
    for i in 0..9 {
        feed(&mut d, "w", i, 100.0 + i as f64 % 2.0);
    }
    assert_eq!(
        feed(&mut d, "w", 9, 1e6),
        Observation::Normal,
        "9 readings are not a baseline"
    );
}

#[test]
fn same_event_time_twice_is_a_duplicate_and_changes_nothing() {
    let mut d = Detector::new(params(100, 10));
    for i in 0..20 {
        feed(&mut d, "w", i * 10, 100.0 + (i % 2) as f64);
    }
    assert_eq!(
        feed(&mut d, "w", 50, 1e9),
        Observation::Duplicate { stored: 101.0 },
        "the value already held comes back, to tell a resend from a conflict"
    );
    assert_eq!(d.counters().duplicates, 1);
    // The duplicate was not appended: a normal value is still normal.
    assert_eq!(feed(&mut d, "w", 1000, 100.0), Observation::Normal);
}

#[test]
fn window_keeps_only_the_last_readings() {
    let mut d = Detector::new(params(10, 10));
    for i in 0..10 {
        feed(&mut d, "w", i, 1000.0 + i as f64);
    }
    for i in 10..20 {
        feed(&mut d, "w", i, (i % 2) as f64);
    }
    // The 1000s have left the window: the baseline is 0/1 alternating.
    match feed(&mut d, "w", 20, 5.0) {
        Observation::Alert { baseline, .. } => assert!((baseline.mean - 0.5).abs() < 1e-12),
        o => panic!("expected alert, got {o:?}"),
    }
    // An old event time that left the window is no longer a duplicate.
    assert!(!matches!(
        feed(&mut d, "w", 3, 0.0),
        Observation::Duplicate { .. }
    ));
}

#[test]
fn a_duplicate_in_the_wrapped_part_of_the_ring_returns_its_own_value() {
    let mut d = Detector::new(params(10, 10));
    for i in 0..25 {
        feed(&mut d, "w", i, i as f64 * 2.0);
    }
    // The window holds times 15..25; the ring has wrapped past its end.
    for t in 15..25 {
        assert_eq!(
            feed(&mut d, "w", t, -1.0),
            Observation::Duplicate {
                stored: t as f64 * 2.0
            }
        );
    }
}

#[test]
fn full_detector_evicts_the_least_recently_appended_key() {
    let mut d = Detector::new(params(10, 2));
    feed(&mut d, "a", 1, 1.0);
    feed(&mut d, "b", 2, 1.0);
    feed(&mut d, "a", 3, 1.0);
    feed(&mut d, "c", 4, 1.0); // evicts b
    assert_eq!(d.counters().evictions, 1);
    assert_eq!(d.keys(), 2);
    feed(&mut d, "b", 5, 1.0); // b is new again; evicts a (last append t=3)
    assert_eq!(d.counters().evictions, 2);
}

#[test]
fn idle_keys_are_forgotten_and_not_counted_as_evictions() {
    let mut d = Detector::new(params(100, 2));
    for i in 0..20 {
        feed(&mut d, "a", i, 100.0 + (i % 2) as f64);
    }
    feed(&mut d, "b", 20, 1.0);
    let later = 20 + 31 * 60 * 1_000_000;
    feed(&mut d, "c", later, 1.0); // a and b are idle: no eviction
    assert_eq!(d.counters().evictions, 0);
    assert!(d.counters().expired >= 1);
    // a starts again from an empty window: a spike is no alert yet.
    assert_eq!(feed(&mut d, "a", later + 1, 1e6), Observation::Normal);
}

#[test]
fn idle_key_in_the_middle_of_the_lru_is_found_before_evicting() {
    let mut d = Detector::new(params(10, 3));
    let hour = 3_600_000_000;
    feed(&mut d, "a", hour, 1.0);
    feed(&mut d, "old", 0, 1.0); // arrives late: idle-prone, but most recent in arrival
    feed(&mut d, "b", hour, 1.0);
    feed(&mut d, "c", hour + 1, 1.0); // full: "old" is idle (last append 1h before now)
    assert_eq!(d.counters().evictions, 0);
    assert_eq!(d.keys(), 3);
}

#[test]
fn churn_through_a_million_keys_keeps_state_flat() {
    let mut d = Detector::new(params(10, 1000));
    let mut peak = 0;
    for i in 0..200_000i64 {
        feed(&mut d, &format!("dev-{i}"), i, 1.0);
        peak = peak.max(d.keys());
    }
    assert_eq!(peak, 1000);
    assert_eq!(d.counters().evictions, 199_000);
    assert_eq!(d.slots.len(), 1000, "slots are reused, not grown");
}

#[test]
fn a_key_with_a_wrong_clock_keeps_exact_times_through_a_checkpoint() {
    use crate::util::codec::{Dec, Enc};
    // A device whose clock jumps by years between readings, and one with
    // microsecond times 2 hours apart: neither fits a 3-byte offset, so their
    // times are kept whole; duplicates are still found exactly.
    let mut p = params(8, 4);
    p.idle_timeout = Micros::MAX; // keys far apart in time stay live
    let mut d = Detector::new(p);
    let year = 365 * 86_400_000_000i64;
    let wild = [0, 50 * year, -3 * year, 50 * year + 1, 7];
    for (i, &t) in wild.iter().enumerate() {
        assert_eq!(feed(&mut d, "wild", t, i as f64), Observation::Normal);
    }
    let fine: Vec<i64> = (0..6)
        .map(|k| 1_764_583_200_000_001 + k * 7_200_000_001)
        .collect();
    for (i, &t) in fine.iter().enumerate() {
        assert_eq!(feed(&mut d, "fine", t, i as f64), Observation::Normal);
    }
    assert_eq!(d.times.whole_keys(), 2);
    let mut e = Enc::default();
    d.save(&mut e);
    let mut back = Detector::new(p);
    let mut dec = Dec::new(&e.0);
    back.load(&mut dec).unwrap();
    assert!(dec.finished());
    for det in [&mut d, &mut back] {
        for (i, &t) in wild.iter().enumerate() {
            assert_eq!(
                feed(det, "wild", t, -1.0),
                Observation::Duplicate { stored: i as f64 }
            );
        }
        assert!(!matches!(
            feed(det, "wild", 50 * year + 2, -1.0),
            Observation::Duplicate { .. }
        ));
        for (i, &t) in fine.iter().enumerate() {
            assert_eq!(
                feed(det, "fine", t, -1.0),
                Observation::Duplicate { stored: i as f64 }
            );
        }
    }
}

#[test]
fn keys_too_long_for_their_slot_behave_as_the_others() {
    use crate::util::codec::{Dec, Enc};
    // A key is the sensor byte, the id, a 0 and the metric: an id of 50
    // bytes with "heart_rate" is the longest kept inside the slot (62).
    let inside = "i".repeat(50);
    let heap = "h".repeat(51);
    let mut d = Detector::new(params(10, 2));
    for t in 0..12 {
        feed(&mut d, &inside, t, t as f64);
        feed(&mut d, &heap, t, t as f64);
    }
    assert_eq!(d.keys(), 2);
    let mut short = Detector::new(params(10, 2));
    feed(&mut short, "a", 0, 0.0);
    feed(&mut short, "b", 0, 0.0);
    assert_eq!(
        d.state_bytes(),
        short.state_bytes() + 63,
        "the heap key's bytes"
    );
    let mut e = Enc::default();
    d.save(&mut e);
    let mut back = Detector::new(params(10, 2));
    back.load(&mut Dec::new(&e.0)).unwrap();
    for det in [&mut d, &mut back] {
        for dev in [&inside, &heap] {
            assert_eq!(
                feed(det, dev, 11, -1.0),
                Observation::Duplicate { stored: 11.0 }
            );
            assert_eq!(
                feed(det, dev, 2, -1.0),
                Observation::Duplicate { stored: 2.0 }
            );
        }
        // A third key evicts the least recently appended one (`inside`).
        feed(det, "third", 20, 1.0);
        assert_eq!(det.counters().evictions, 1);
        assert_eq!(
            feed(det, &heap, 11, -1.0),
            Observation::Duplicate { stored: 11.0 }
        );
        assert_eq!(
            feed(det, &inside, 11, 5.0),
            Observation::Normal,
            "forgotten"
        );
    }
}
