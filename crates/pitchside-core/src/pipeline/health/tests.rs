use super::*;
use proptest::prelude::*;

const S: Micros = 15_000_000;
const T0: Micros = 1_764_000_000_000_000;

fn tracker(max_devices: usize) -> DeviceHealth {
    DeviceHealth::new(HealthConfig {
        silent_after: S,
        max_devices,
    })
}

fn player(id: i64) -> Identity<'static> {
    Identity::Wearable {
        player_id: id,
        player_name: None,
    }
}

/// A wearable input from `dev` (player 7) at `at`.
fn seen(h: &mut DeviceHealth, dev: &str, at: Micros) -> Option<DeviceEventRecord> {
    h.seen(SensorKind::Wearable, dev, &player(7), at, &[(0, 150.0)])
}

fn check(h: &mut DeviceHealth, now: Micros) -> Vec<(String, DeviceEventKind)> {
    let mut out = Vec::new();
    h.check(now, &mut |e| out.push((e.device_id, e.event)));
    out
}

fn silent(dev: &str) -> Vec<(String, DeviceEventKind)> {
    vec![(dev.to_string(), DeviceEventKind::Silent)]
}

fn tracked_ids(h: &DeviceHealth) -> Vec<String> {
    let mut ids: Vec<String> = h.statuses().into_iter().map(|s| s.device_id).collect();
    ids.sort();
    ids
}

#[test]
fn a_device_is_silent_after_exactly_silent_after_and_only_once() {
    let mut h = tracker(10);
    assert_eq!(seen(&mut h, "band-1", T0), None);
    assert!(check(&mut h, T0 + S - 1).is_empty());
    let mut events = Vec::new();
    h.check(T0 + S, &mut |e| events.push(e));
    assert_eq!(
        events,
        vec![DeviceEventRecord {
            sensor: SensorKind::Wearable,
            device_id: "band-1".into(),
            player_id: Some(7),
            zone_id: None,
            event: DeviceEventKind::Silent,
            last_seen: T0,
            at: T0 + S,
        }]
    );
    assert!(check(&mut h, T0 + 10 * S).is_empty(), "silent once");
    assert_eq!(h.silent_now(), 1);
    assert_eq!(h.counters().silent, 1);
}

#[test]
fn the_next_input_of_a_silent_device_is_back_with_its_previous_last_seen() {
    let mut h = tracker(10);
    seen(&mut h, "band-1", T0);
    assert_eq!(check(&mut h, T0 + S), silent("band-1"));
    let back = seen(&mut h, "band-1", T0 + 40_000_000).expect("back");
    assert_eq!(back.event, DeviceEventKind::Back);
    assert_eq!(back.last_seen, T0);
    assert_eq!(back.at, T0 + 40_000_000);
    assert_eq!(seen(&mut h, "band-1", T0 + 41_000_000), None, "back once");
    assert_eq!(h.silent_now(), 0);
    assert_eq!(h.counters().back, 1);
    // And its silence clock runs from the new input.
    assert!(check(&mut h, T0 + 41_000_000 + S - 1).is_empty());
    assert_eq!(check(&mut h, T0 + 41_000_000 + S), silent("band-1"));
}

#[test]
fn a_device_heard_from_in_time_stays_and_stops_the_check_early() {
    let mut h = tracker(10);
    seen(&mut h, "band-1", T0);
    seen(&mut h, "band-2", T0 + 1_000_000);
    seen(&mut h, "band-1", T0 + 2_000_000);
    assert_eq!(check(&mut h, T0 + 1_000_000 + S), silent("band-2"));
    assert_eq!(check(&mut h, T0 + 2_000_000 + S), silent("band-1"));
}

#[test]
fn no_event_for_a_device_never_seen() {
    let mut h = tracker(10);
    assert!(check(&mut h, T0).is_empty());
    assert!(check(&mut h, T0 + 100 * S).is_empty());
    assert_eq!(h.tracked(), 0);
    assert!(h.statuses().is_empty());
}

#[test]
fn while_paused_nothing_goes_silent_and_on_resume_the_clock_restarts() {
    let mut h = tracker(10);
    seen(&mut h, "band-1", T0);
    seen(&mut h, "band-2", T0);
    assert_eq!(
        check(&mut h, T0 + S),
        vec![
            ("band-1".to_string(), DeviceEventKind::Silent),
            ("band-2".to_string(), DeviceEventKind::Silent),
        ]
    );
    seen(&mut h, "band-2", T0 + S + 1);
    seen(&mut h, "band-3", T0 + S + 1);
    let half_time = T0 + 2 * S;
    assert!(h.pause(half_time));
    assert!(!h.pause(half_time + 1), "already paused");
    assert_eq!(h.paused_since(), Some(half_time));
    assert!(check(&mut h, half_time + 20 * S).is_empty(), "paused");
    // Inputs still count while paused: band-1 comes back.
    let back = seen(&mut h, "band-1", half_time + 5 * S).expect("back while paused");
    assert_eq!(back.event, DeviceEventKind::Back);
    let resumed = half_time + 20 * S;
    assert_eq!(h.resume(resumed), Some(half_time));
    assert_eq!(h.resume(resumed), None, "not paused");
    assert!(check(&mut h, resumed + S - 1).is_empty(), "clock restarted");
    let mut now = check(&mut h, resumed + S);
    now.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        now,
        vec![
            ("band-1".to_string(), DeviceEventKind::Silent),
            ("band-2".to_string(), DeviceEventKind::Silent),
            ("band-3".to_string(), DeviceEventKind::Silent),
        ]
    );
}

#[test]
fn a_device_silent_before_the_pause_stays_silent_after_it() {
    let mut h = tracker(10);
    seen(&mut h, "band-1", T0);
    assert_eq!(check(&mut h, T0 + S), silent("band-1"));
    h.pause(T0 + S);
    h.resume(T0 + 3 * S);
    assert!(check(&mut h, T0 + 5 * S).is_empty(), "silent once");
    assert!(h.statuses()[0].silent);
    assert!(seen(&mut h, "band-1", T0 + 5 * S).is_some(), "then back");
}

#[test]
fn past_max_devices_the_least_recently_seen_is_forgotten_and_counted() {
    let mut h = tracker(3);
    seen(&mut h, "a", T0);
    seen(&mut h, "b", T0 + 1);
    seen(&mut h, "c", T0 + 2);
    seen(&mut h, "a", T0 + 3);
    seen(&mut h, "d", T0 + 4);
    assert_eq!(tracked_ids(&h), ["a", "c", "d"]);
    seen(&mut h, "e", T0 + 5);
    assert_eq!(tracked_ids(&h), ["a", "d", "e"]);
    assert_eq!(h.counters().evictions, 2);
    // A forgotten device that sends again is new: no back.
    assert_eq!(seen(&mut h, "b", T0 + 6), None);
    assert_eq!(tracked_ids(&h), ["b", "d", "e"]);
    assert_eq!(h.counters().evictions, 3);
}

#[test]
fn a_silent_device_seen_earlier_is_forgotten_before_a_live_one() {
    let mut h = tracker(2);
    seen(&mut h, "a", T0);
    seen(&mut h, "b", T0 + S);
    assert_eq!(check(&mut h, T0 + S), silent("a"));
    seen(&mut h, "c", T0 + S + 1);
    assert_eq!(tracked_ids(&h), ["b", "c"]);
    assert_eq!(
        h.silent_now(),
        0,
        "the forgotten device no longer counts as silent"
    );
    assert!(check(&mut h, T0 + 10 * S).len() == 2);
}

#[test]
fn ten_times_max_devices_of_churn_stays_bounded() {
    let max = 100;
    let mut h = tracker(max);
    for i in 0..10 * max {
        seen(&mut h, &format!("band-{i}"), T0 + i as Micros * 1000);
        assert!(h.tracked() <= max);
    }
    assert_eq!(h.tracked(), max);
    assert_eq!(h.counters().evictions, 9 * max as u64);
    assert!(h.slots.len() <= max, "slots are reused");
    assert!(h.maps.iter().map(|m| m.len()).sum::<usize>() <= max);
    assert_eq!(check(&mut h, T0 + 100 * S).len(), max);
}

#[test]
fn the_same_id_of_two_kinds_is_two_devices() {
    let mut h = tracker(10);
    seen(&mut h, "x", T0);
    h.seen(
        SensorKind::Generic,
        "x",
        &Identity::Generic { metric: "t".into() },
        T0,
        &[(0, 1.0)],
    );
    assert_eq!(h.tracked(), 2);
}

#[test]
fn statuses_carry_identity_and_the_latest_value_of_each_metric() {
    let mut h = tracker(10);
    let named = Identity::Wearable {
        player_id: 7,
        player_name: Some("R. Sharma".into()),
    };
    h.seen(
        SensorKind::Wearable,
        "band-7",
        &named,
        T0,
        &[(0, 150.0), (2, 3.5)],
    );
    h.seen(
        SensorKind::Wearable,
        "band-7",
        &player(7),
        T0 + 1,
        &[(0, 151.0)],
    );
    let zone = Identity::Crowd {
        zone_id: "north".into(),
    };
    h.seen(SensorKind::Crowd, "crowd-1", &zone, T0 + 2, &[(0, 98.0)]);
    h.seen(
        SensorKind::Generic,
        "env-1",
        &Identity::Generic { metric: "t".into() },
        T0 + 3,
        &[(0, 1.0)],
    );
    let s = h.statuses();
    assert_eq!(s.len(), 3);
    let env = &s[0];
    assert_eq!((env.device_id.as_str(), env.latest.len()), ("env-1", 0));
    assert_eq!(s[1].zone_id.as_deref(), Some("north"));
    assert_eq!(s[1].latest, vec![("decibels", 98.0)]);
    let band = &s[2];
    assert_eq!(band.player_id, Some(7));
    assert_eq!(
        band.player_name.as_deref(),
        Some("R. Sharma"),
        "kept when a frame has none"
    );
    assert_eq!(
        band.latest,
        vec![("heart_rate", 151.0), ("running_dist", 3.5)]
    );
    assert_eq!(band.last_seen, T0 + 1);
    assert!(!band.silent);
}

#[test]
fn last_seen_never_goes_back_for_an_input_out_of_arrival_order() {
    let mut h = tracker(10);
    seen(&mut h, "band-1", T0 + 10);
    seen(&mut h, "band-1", T0);
    assert_eq!(h.statuses()[0].last_seen, T0 + 10);
}

#[test]
fn tick_checks_at_most_once_per_second_of_arrival_time() {
    let mut h = tracker(10);
    let mut n = 0;
    seen(&mut h, "band-1", T0);
    assert!(h.tick(T0 + S - 1, &mut |_| n += 1), "the first tick checks");
    assert!(!h.tick(T0 + S, &mut |_| n += 1));
    assert_eq!(n, 0, "silent by now, but within a second of the last check");
    assert!(h.tick(T0 + S - 1 + CHECK_PERIOD, &mut |_| n += 1));
    assert_eq!(n, 1);
}

/// What a property test does next.
#[derive(Debug, Clone)]
enum Op {
    Seen(u8),
    Check,
    Pause,
    Resume,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u8..24).prop_map(Op::Seen),
        3 => Just(Op::Check),
        1 => Just(Op::Pause),
        1 => Just(Op::Resume),
    ]
}

proptest! {
    #[test]
    fn size_never_exceeds_max_devices_and_silent_and_back_alternate(
        max in 1usize..12,
        ops in proptest::collection::vec((op(), 0i64..8_000_000), 1..300),
    ) {
        let mut h = tracker(max);
        let mut now = T0;
        // Per device: its last event while tracked (None: new or forgotten).
        let mut last: std::collections::HashMap<String, DeviceEventKind> = Default::default();
        for (op, step) in ops {
            now += step;
            let mut events = Vec::new();
            match op {
                Op::Seen(d) => {
                    let dev = format!("d{d}");
                    if h.find(SensorKind::Wearable, &dev).is_none() {
                        last.remove(&dev);
                    }
                    events.extend(seen(&mut h, &dev, now));
                }
                Op::Check => h.check(now, &mut |e| events.push(e)),
                Op::Pause => { h.pause(now); }
                Op::Resume => { h.resume(now); }
            }
            for e in events {
                let before = last.insert(e.device_id.clone(), e.event);
                match e.event {
                    DeviceEventKind::Silent => prop_assert_ne!(before, Some(DeviceEventKind::Silent)),
                    DeviceEventKind::Back => prop_assert_eq!(before, Some(DeviceEventKind::Silent)),
                }
            }
            prop_assert!(h.tracked() <= max);
            prop_assert!(h.slots.len() <= max);
            let statuses = h.statuses();
            prop_assert_eq!(statuses.len(), h.tracked());
            prop_assert_eq!(statuses.iter().filter(|s| s.silent).count(), h.silent_now());
        }
    }
}

#[test]
fn ids_and_names_too_long_for_the_slot_are_tracked_the_same() {
    // Ids up to 38 bytes are kept in the device's slot, longer ones on the
    // heap: both are found, named, silenced, brought back and evicted alike.
    let mut h = tracker(2);
    let (short, long) = ("s".repeat(38), "l".repeat(64));
    let name = "Ñ".repeat(64); // 64 characters, 128 bytes
    let named = Identity::Wearable {
        player_id: 9,
        player_name: Some(name.as_str().into()),
    };
    h.seen(SensorKind::Wearable, &long, &named, T0, &[]);
    seen(&mut h, &short, T0);
    seen(&mut h, &long, T0 + 1); // known: not a third device
    assert_eq!(h.tracked(), 2);
    let status = h.statuses().into_iter().find(|s| s.device_id == long);
    assert_eq!(status.and_then(|s| s.player_name), Some(name));
    assert_eq!(check(&mut h, T0 + S).len(), 1, "the short one");
    assert_eq!(
        seen(&mut h, &short, T0 + S + 1).map(|e| (e.device_id, e.event)),
        Some((short.clone(), DeviceEventKind::Back))
    );
    seen(&mut h, "third", T0 + S + 2); // evicts the least recently seen: `long`
    assert_eq!(tracked_ids(&h), vec![short, "third".to_string()]);
}

#[test]
fn after_the_clock_steps_back_a_stopped_device_is_silent_after_silent_after_of_elapsed_time() {
    let mut h = tracker(10);
    seen(&mut h, "a", T0);
    let step = -600_000_000;
    h.shift(step);
    assert!(check(&mut h, T0 + step + S - 1).is_empty());
    assert_eq!(check(&mut h, T0 + step + S), silent("a"));
}

#[test]
fn after_the_clock_steps_forward_no_device_that_keeps_sending_goes_silent() {
    let mut h = tracker(10);
    seen(&mut h, "a", T0);
    seen(&mut h, "b", T0);
    let step = 3_600_000_000;
    h.shift(step);
    assert!(check(&mut h, T0 + step + 1_000_000).is_empty());
    seen(&mut h, "a", T0 + step + 2_000_000);
    assert_eq!(check(&mut h, T0 + step + S), silent("b"));
    assert!(check(&mut h, T0 + step + S + 1_000_000).is_empty());
}
