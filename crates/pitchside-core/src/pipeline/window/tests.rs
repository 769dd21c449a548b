use super::*;
use crate::model::{Identity, Readings};
use proptest::prelude::*;

const MIN: Micros = 60_000_000;

fn agg() -> WindowAggregator {
    WindowAggregator::new(WindowsConfig {
        size: MIN,
        watermark_delay: 30_000_000,
        max_open_groups: 1000,
    })
}

fn wearable(t: Micros, player: i64, hr: f64) -> Event<'static> {
    Event {
        sensor: SensorKind::Wearable,
        device_id: format!("w{player}").into(),
        event_time: t,
        match_id: 1,
        event_id: None,
        identity: Identity::Wearable {
            player_id: player,
            player_name: Some(format!("P{player}").into()),
        },
        values: Readings::from_slice(&[(0, hr)]).unwrap(),
    }
}

fn push(a: &mut WindowAggregator, e: &Event, out: &mut Vec<WindowRow>) -> Placement {
    let p = a.add(e, &e.values.clone());
    a.advance(e.sensor, e.event_time, &mut |r| out.push(r.clone()));
    p
}

fn flush(a: &mut WindowAggregator, out: &mut Vec<WindowRow>) {
    a.flush_all(&mut |r| out.push(r.clone()));
}

#[test]
fn window_is_emitted_once_the_watermark_reaches_its_end() {
    let mut a = agg();
    let mut out = vec![];
    push(&mut a, &wearable(10_000_000, 7, 100.0), &mut out);
    push(&mut a, &wearable(50_000_000, 7, 110.0), &mut out);
    push(&mut a, &wearable(89_000_000, 7, 120.0), &mut out); // wm = 59s
    assert!(out.is_empty());
    push(&mut a, &wearable(90_000_000, 7, 130.0), &mut out); // wm = 60s = end
    assert_eq!(out.len(), 1);
    let r = &out[0];
    assert_eq!((r.start, r.end), (0, MIN));
    assert_eq!(r.cell.events, 2);
    assert_eq!(r.cell.aggs[0].mean(), Some(105.0));
    assert_eq!(r.cell.aggs[0].min(), Some(100.0));
    assert_eq!(r.cell.aggs[0].max(), Some(110.0));
    assert_eq!(
        r.cell.aggs[1].mean(),
        None,
        "acceleration absent gives nulls"
    );
    assert_eq!(r.cell.player_name.as_deref(), Some("P7"));
}

#[test]
fn late_reading_after_watermark_goes_to_late_table() {
    let mut a = agg();
    let mut out = vec![];
    push(&mut a, &wearable(100_000_000, 7, 100.0), &mut out); // wm = 70s
    let p = push(&mut a, &wearable(5_000_000, 8, 90.0), &mut out);
    assert_eq!(
        p,
        Placement::Late {
            watermark: 70_000_000
        }
    );
    // A late event never moves the watermark backwards.
    assert_eq!(a.watermark(SensorKind::Wearable), Some(70_000_000));
}

#[test]
fn watermarks_are_per_kind() {
    let mut a = agg();
    let mut out = vec![];
    push(&mut a, &wearable(1_000 * MIN, 7, 100.0), &mut out);
    let mut pitch = wearable(5 * MIN, 1, 140.0);
    pitch.sensor = SensorKind::Pitch;
    pitch.identity = Identity::Pitch { delivery_id: None };
    assert_eq!(push(&mut a, &pitch, &mut out), Placement::Window);
}

#[test]
fn flush_all_emits_every_open_window_in_time_order() {
    let mut a = agg();
    let mut out = vec![];
    push(&mut a, &wearable(0, 2, 1.0), &mut out);
    push(&mut a, &wearable(1, 1, 1.0), &mut out);
    push(&mut a, &wearable(MIN + 1, 1, 1.0), &mut out);
    flush(&mut a, &mut out);
    let got: Vec<_> = out.iter().map(|r| (r.start, r.key.clone())).collect();
    assert_eq!(
        got,
        vec![
            (
                0,
                GroupKey::Wearable {
                    match_id: 1,
                    player_id: 1
                }
            ),
            (
                0,
                GroupKey::Wearable {
                    match_id: 1,
                    player_id: 2
                }
            ),
            (
                MIN,
                GroupKey::Wearable {
                    match_id: 1,
                    player_id: 1
                }
            ),
        ]
    );
    assert_eq!(a.open_cells(), 0);
}

#[test]
fn new_groups_past_the_cap_are_dropped_and_counted() {
    let mut a = WindowAggregator::new(WindowsConfig {
        size: MIN,
        watermark_delay: 0,
        max_open_groups: 2,
    });
    let mut out = vec![];
    assert_eq!(
        push(&mut a, &wearable(0, 1, 1.0), &mut out),
        Placement::Window
    );
    assert_eq!(
        push(&mut a, &wearable(0, 2, 1.0), &mut out),
        Placement::Window
    );
    assert_eq!(
        push(&mut a, &wearable(0, 3, 1.0), &mut out),
        Placement::Dropped
    );
    assert_eq!(
        push(&mut a, &wearable(0, 1, 2.0), &mut out),
        Placement::Window,
        "existing group still counts"
    );
    assert_eq!(a.dropped(), 1);
}

/// The cap's other side: a healthy stream whose windows close in time
/// passes 20 times `max_open_groups` groups through it without a drop.
#[test]
fn groups_of_closed_windows_free_the_cap_for_twenty_times_its_traffic() {
    let cap = 6;
    let mut a = WindowAggregator::new(WindowsConfig {
        size: MIN,
        watermark_delay: 30_000_000,
        max_open_groups: cap,
    });
    let mut out = vec![];
    // Three new players a minute, 20 s apart: the window before closes at
    // the third (40 s past the minute, past the 30 s delay), so at most two
    // windows, six cells, are open at once.
    let windows = 40;
    for w in 0..windows {
        for g in 0..3 {
            let player = w * 3 + g;
            let t = w * MIN + g * 20_000_000;
            assert_eq!(
                push(&mut a, &wearable(t, player, 100.0 + g as f64), &mut out),
                Placement::Window,
                "player {player} at {t}"
            );
            assert!(a.open_cells() <= cap);
        }
    }
    flush(&mut a, &mut out);
    assert_eq!(a.dropped(), 0);
    assert_eq!(a.open_cells(), 0);
    let rows = rows(&out);
    let total = windows as usize * 3;
    assert!(total >= 20 * cap);
    assert_eq!(rows.len(), total, "one row per group and window");
    for (i, (kind, start, key, events, counts)) in rows.iter().enumerate() {
        assert_eq!(*kind, SensorKind::Wearable);
        assert_eq!(*start, (i / 3) as Micros * MIN);
        assert_eq!(
            *key,
            GroupKey::Wearable {
                match_id: 1,
                player_id: i as i64
            }
        );
        assert_eq!((*events, counts[0]), (1, 1));
    }
}

#[test]
fn negative_times_align_to_epoch_multiples() {
    let a = agg();
    assert_eq!(a.window_start(-1), -MIN);
}

proptest! {
    #[test]
    fn each_accepted_reading_lands_in_exactly_one_window_or_in_late(
        times in prop::collection::vec(0i64..20 * MIN, 1..300),
    ) {
        let mut a = agg();
        let mut out = vec![];
        let mut late = 0u64;
        for (i, &t) in times.iter().enumerate() {
            match push(&mut a, &wearable(t, (i % 3) as i64, 1.0), &mut out) {
                Placement::Late { .. } => late += 1,
                Placement::Window => {}
                Placement::Dropped => prop_assert!(false, "cap not reached"),
            }
        }
        flush(&mut a, &mut out);
        let in_windows: u64 = out.iter().map(|r| r.cell.aggs[0].count as u64).sum();
        prop_assert_eq!(in_windows + late, times.len() as u64);
        // Windows are emitted once: no (start, group) twice.
        let mut keys: Vec<_> = out.iter().map(|r| (r.start, r.key.clone())).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        prop_assert_eq!(keys.len(), n);
    }
}

fn pitch(t: Micros, match_id: i64, speed: f64) -> Event<'static> {
    let mut e = wearable(t, 0, 0.0);
    e.sensor = SensorKind::Pitch;
    e.match_id = match_id;
    e.identity = Identity::Pitch { delivery_id: None };
    e.values = Readings::from_slice(&[(2, speed)]).unwrap();
    e
}

/// (kind, start, group, events, first aggregate's count) of each row.
fn rows(out: &[WindowRow]) -> Vec<(SensorKind, Micros, GroupKey, u64, Vec<u32>)> {
    out.iter()
        .map(|r| {
            let counts = r.cell.aggs.iter().map(|a| a.count).collect();
            (r.kind, r.start, r.key.clone(), r.cell.events, counts)
        })
        .collect()
}

#[test]
fn a_window_on_the_emptied_cells_of_the_last_holds_only_its_own_groups() {
    let mut a = agg();
    let mut out = vec![];
    for (w, players) in [(0, vec![1, 2, 3]), (1, vec![4]), (2, vec![2, 5])] {
        for p in players {
            push(
                &mut a,
                &wearable(w * MIN + p, p, 100.0 + p as f64),
                &mut out,
            );
            push(&mut a, &pitch(w * MIN + p, w, 140.0), &mut out);
        }
    }
    flush(&mut a, &mut out);
    let player = |p| GroupKey::Wearable {
        match_id: 1,
        player_id: p,
    };
    let mut got: Vec<_> = rows(&out)
        .into_iter()
        .map(|(k, start, key, events, _)| (k, start / MIN, key, events))
        .collect();
    got.sort_by(|a, b| (a.0 as u8, a.1, &a.2).cmp(&(b.0 as u8, b.1, &b.2)));
    let wearables = [(0, 1), (0, 2), (0, 3), (1, 4), (2, 2), (2, 5)]
        .map(|(w, p)| (SensorKind::Wearable, w, player(p), 1));
    let pitches = [(0, 3), (1, 1), (2, 2)]
        .map(|(w, n)| (SensorKind::Pitch, w, GroupKey::Pitch { match_id: w }, n));
    let want: Vec<_> = wearables.into_iter().chain(pitches).collect();
    assert_eq!(got, want);
    assert!(out
        .iter()
        .all(|r| r.cell.aggs.len() == r.kind.metrics().len()));
}

#[test]
fn a_checkpoint_brings_back_the_same_windows() {
    let mut a = agg();
    let mut out = vec![];
    for k in 0..40 {
        push(
            &mut a,
            &wearable(k * 2_000_000, k % 7, 90.0 + k as f64),
            &mut out,
        );
        push(&mut a, &pitch(k * 2_000_000, 1, 130.0 + k as f64), &mut out);
    }
    let mut e = crate::util::codec::Enc(Vec::new());
    a.save(&mut e);
    let mut b = agg();
    b.load(&mut crate::util::codec::Dec::new(&e.0)).unwrap();
    assert_eq!(b.open_cells(), a.open_cells());
    let (mut from_a, mut from_b) = (vec![], vec![]);
    flush(&mut a, &mut from_a);
    flush(&mut b, &mut from_b);
    assert!(!from_a.is_empty());
    assert_eq!(from_a, from_b);
}

/// A checkpoint of one wearable window at 0 whose cells are `groups`
/// (kind tag, player id, events).
fn checkpoint(groups: &[(u8, i64, u64)]) -> Vec<u8> {
    let mut e = crate::util::codec::Enc(Vec::new());
    e.i64(MIN);
    e.u64(0);
    for k in SensorKind::ALL {
        e.opt_i64(Some(10_000_000));
        let mine = k == SensorKind::Wearable;
        e.u64(mine as u64);
        if mine {
            e.i64(0);
            e.u64(groups.len() as u64);
            for &(tag, player, events) in groups {
                e.u8(tag);
                e.i64(1);
                if tag == 0 {
                    e.i64(player);
                }
                e.u64(events);
                e.opt_str(None);
                e.u32(3);
                for _ in 0..3 {
                    e.u32(0);
                    for x in [0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY] {
                        e.f64(x);
                    }
                }
            }
        }
    }
    e.0
}

#[test]
fn a_group_written_twice_in_a_checkpoint_is_one_cell() {
    let mut a = agg();
    let bytes = checkpoint(&[(0, 7, 2), (0, 7, 5)]);
    a.load(&mut crate::util::codec::Dec::new(&bytes)).unwrap();
    assert_eq!(a.open_cells(), 1);
    let mut out = vec![];
    flush(&mut a, &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].cell.events, 5, "the last one wins");
    assert_eq!(a.open_cells(), 0);
}

#[test]
fn a_group_of_another_kind_in_a_checkpoint_is_refused() {
    let mut a = agg();
    let bytes = checkpoint(&[(0, 7, 2), (1, 0, 1)]);
    assert!(a.load(&mut crate::util::codec::Dec::new(&bytes)).is_err());
}
