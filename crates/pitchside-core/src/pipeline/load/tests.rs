use super::*;
use crate::config::LoadSection;
use crate::model::{Event, Identity, Readings, SensorKind};
use std::borrow::Cow;

const S: Micros = 1_000_000;

fn config(extra: &str) -> LoadConfig {
    let s: LoadSection = toml::from_str(extra).unwrap();
    s.validate().unwrap()
}

/// A wearable event of player 7 in match 1 on `device` at `t` seconds.
fn event(device: &str, t: f64, values: &[(u8, f64)]) -> Event<'static> {
    let mut r = Readings::default();
    for &(i, x) in values {
        r.push((i, x)).unwrap();
    }
    Event {
        sensor: SensorKind::Wearable,
        device_id: Cow::Owned(device.into()),
        event_time: (t * 1e6) as Micros,
        match_id: 1,
        event_id: None,
        identity: Identity::Wearable {
            player_id: 7,
            player_name: None,
        },
        values: r,
    }
}

/// One input of a test: device, event time in seconds, readings.
type Input<'a> = (&'a str, f64, &'a [(u8, f64)]);

/// Feeds the inputs in order, all into window 0; the window's sums.
fn feed(t: &mut LoadTracker, events: &[Input]) -> Sums {
    for (d, s, v) in events {
        t.add(&event(d, *s, v), 0, v);
    }
    t.on_window(1, 7, 0).expect("player has a row").window
}

const HR: u8 = player::HEART_RATE;
const ACC: u8 = player::ACCELERATION;
const DIST: u8 = player::RUNNING_DIST;

#[test]
fn heart_rate_time_goes_to_the_zone_of_the_reading_that_ends_it() {
    // hr_max 190: 95 bpm is 50 % (zone 1), 171 is 90 % (zone 5), 90 is below zone 1.
    let mut t = LoadTracker::new(config(""));
    let s = feed(
        &mut t,
        &[
            ("w", 0.0, &[(HR, 95.0)]),
            ("w", 1.0, &[(HR, 95.0)]),
            ("w", 3.0, &[(HR, 171.0)]),
            ("w", 4.0, &[(HR, 90.0)]),
        ],
    );
    assert_eq!(s.zone_us, [S, 0, 0, 0, 2 * S]);
    // Edwards: 1 · 1/60 + 5 · 2/60.
    assert!((s.trimp_edwards() - 11.0 / 60.0).abs() < 1e-12);
    // Banister, r = (95-60)/130 for 1 s, (171-60)/130 for 2 s, 30/130 for 1 s.
    let b = |r: f64, secs: f64| secs / 60.0 * r * 0.64 * (1.92 * r).exp();
    let want = b(35.0 / 130.0, 1.0) + b(111.0 / 130.0, 2.0) + b(30.0 / 130.0, 1.0);
    assert!(
        (s.trimp_banister - want).abs() < 1e-12,
        "{} {want}",
        s.trimp_banister
    );
}

#[test]
fn a_gap_longer_than_max_gap_credits_nothing_and_out_of_order_readings_change_nothing() {
    let mut t = LoadTracker::new(config("max_gap = \"5s\""));
    let s = feed(
        &mut t,
        &[
            ("w", 0.0, &[(HR, 171.0)]),
            ("w", 10.0, &[(HR, 171.0)]), // a 10 s gap: nothing
            ("w", 8.0, &[(HR, 171.0)]),  // earlier than the previous: nothing, p stays 10
            ("w", 12.0, &[(HR, 171.0)]), // 2 s
        ],
    );
    assert_eq!(s.zone_us, [0, 0, 0, 0, 2 * S]);
}

#[test]
fn distance_speed_bands_and_a_sprint_counted_once_its_dwell_is_reached() {
    // hsr 5.5, sprint 7.0, dwell 1 s; readings every 0.5 s.
    let mut t = LoadTracker::new(config(""));
    let d = |x: f64| -> [(u8, f64); 1] { [(DIST, x)] };
    let readings = [
        (0.0, 100.0),
        (0.5, 102.0), // 4 m/s
        (1.0, 105.0), // 6 m/s: hsr
        (1.5, 109.0), // 8 m/s: run starts at 1.0
        (2.0, 113.0), // 8 m/s: 1.0 s of run at 2.0: a sprint
        (2.5, 117.0), // 8 m/s: the same sprint
        (3.0, 119.0), // 4 m/s: the run ends
        (3.5, 123.0), // 8 m/s: a new run, 0.5 s: no sprint
    ];
    let evs: Vec<_> = readings.iter().map(|&(s, x)| ("w", s, d(x))).collect();
    let refs: Vec<Input> = evs.iter().map(|(w, s, v)| (*w, *s, &v[..])).collect();
    let s = feed(&mut t, &refs);
    assert_eq!(s.distance, 23.0);
    assert_eq!(s.hsr_distance, 3.0 + 4.0 * 4.0);
    assert_eq!(s.hsr_us, 5 * S / 2);
    assert_eq!(s.sprints, 1);
}

#[test]
fn a_strap_that_drops_out_mid_sprint_ends_the_run_before_its_dwell() {
    let mut t = LoadTracker::new(config("sprint_dwell = \"2s\""));
    let s = feed(
        &mut t,
        &[
            ("w", 0.0, &[(DIST, 0.0)]),
            ("w", 1.0, &[(DIST, 8.0)]),  // 8 m/s for 1 s
            ("w", 7.0, &[(DIST, 56.0)]), // a 6 s gap: nothing, run ends
            ("w", 8.0, &[(DIST, 64.0)]), // 1 s of a new run: no sprint
        ],
    );
    assert_eq!(s.distance, 16.0);
    assert_eq!(s.sprints, 0);
}

#[test]
fn a_new_device_a_decrease_or_a_glitch_credits_nothing_and_is_not_a_sprint() {
    let mut t = LoadTracker::new(config("sprint_dwell = \"0s\""));
    let s = feed(
        &mut t,
        &[
            ("a", 0.0, &[(DIST, 1000.0), (HR, 150.0)]),
            ("a", 1.0, &[(DIST, 1003.0), (HR, 150.0)]), // 3 m
            ("b", 2.0, &[(DIST, 10.0), (HR, 150.0)]), // another vest: distance restarts, HR goes on
            ("b", 3.0, &[(DIST, 13.0), (HR, 150.0)]), // 3 m
            ("b", 4.0, &[(DIST, 5.0)]),               // a decrease (reset): nothing
            ("b", 5.0, &[(DIST, 45.0)]),              // 40 m/s: a glitch
            ("b", 6.0, &[(DIST, 47.0)]),              // 2 m
        ],
    );
    assert_eq!(s.distance, 8.0);
    assert_eq!(s.sprints, 0);
    assert_eq!(
        s.zone_us.iter().sum::<i64>(),
        3 * S,
        "heart rate ignores the device"
    );
    assert_eq!(t.counters().speed_glitches, 1);
}

#[test]
fn accelerometer_load_sums_the_changes_on_one_device() {
    let mut t = LoadTracker::new(config(""));
    let s = feed(
        &mut t,
        &[
            ("a", 0.0, &[(ACC, 1.0)]),
            ("a", 0.1, &[(ACC, 1.5)]),
            ("a", 0.2, &[(ACC, 0.75)]),
            ("b", 0.3, &[(ACC, 3.0)]), // another device: nothing
            ("b", 0.4, &[(ACC, 2.0)]),
        ],
    );
    assert_eq!(s.accel_load, 0.5 + 0.75 + 1.0);
}

#[test]
fn windows_and_session_totals_follow_emission() {
    let mut t = LoadTracker::new(config(""));
    let v = [(DIST, 0.0)];
    t.add(&event("w", 59.0, &v), 0, &v);
    let v = [(DIST, 5.0)];
    t.add(&event("w", 60.0, &v), 60 * S, &v);
    let v = [(DIST, 9.0)];
    t.add(&event("w", 61.0, &v), 60 * S, &v);
    let first = t.on_window(1, 7, 0).unwrap();
    assert_eq!((first.window.distance, first.session.distance), (0.0, 0.0));
    let second = t.on_window(1, 7, 60 * S).unwrap();
    assert_eq!(
        (second.window.distance, second.session.distance),
        (9.0, 9.0)
    );
    assert!(t.on_window(1, 7, 60 * S).is_none(), "emitted once");
}

#[test]
fn players_are_capped_and_the_stalest_is_forgotten() {
    let mut t = LoadTracker::new(config("max_players = 2"));
    for (i, player) in [1, 2, 3, 1, 4].into_iter().enumerate() {
        let mut e = event("w", i as f64, &[(HR, 150.0)]);
        e.identity = Identity::Wearable {
            player_id: player,
            player_name: None,
        };
        t.add(&e, 0, &[(HR, 150.0)]);
        assert!(t.players() <= 2);
    }
    // 3 evicted 1; 1 evicted 2; 4 evicted 3.
    assert_eq!(t.counters().evictions, 3);
    assert!(t.on_window(1, 1, 0).is_some());
    assert!(t.on_window(1, 4, 0).is_some());
    assert!(t.on_window(1, 2, 0).is_none());
}

#[test]
fn the_checkpoint_restores_every_players_state() {
    let mut a = LoadTracker::new(config(""));
    let first = [(DIST, 0.0), (HR, 160.0), (ACC, 1.0)];
    a.add(&event("w", 0.0, &first), 0, &first);
    let mut e = crate::util::codec::Enc::default();
    a.save(&mut e);
    let mut b = LoadTracker::new(config(""));
    b.load(&mut crate::util::codec::Dec::new(&e.0)).unwrap();
    let next = [(DIST, 8.0), (HR, 160.0), (ACC, 2.0)];
    for t in [&mut a, &mut b] {
        t.add(&event("w", 1.0, &next), 0, &next);
    }
    let (ra, rb) = (a.on_window(1, 7, 0).unwrap(), b.on_window(1, 7, 0).unwrap());
    assert_eq!(ra.window, rb.window);
    assert_eq!(ra.session, rb.session);
    assert_eq!(rb.window.distance, 8.0);
}

#[test]
fn a_reload_resolves_the_figures_again_and_keeps_the_state() {
    let dir = std::env::temp_dir().join(format!("pitchside-roster-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let roster = dir.join("roster.csv");
    std::fs::write(&roster, "player_id,name,hr_max\n7,Ada,180\n").unwrap();
    let with = config(&format!("roster = {:?}", roster.display().to_string()));
    let mut t = LoadTracker::new(config(""));
    let v = [(HR, 171.0)];
    t.add(&event("w", 0.0, &v), 0, &v);
    assert_eq!(t.counters().unrostered, 1);
    t.reload(with);
    t.add(&event("w", 1.0, &v), 0, &v);
    let row = t.on_window(1, 7, 0).unwrap();
    assert!(row.profile.on_roster);
    assert_eq!(row.profile.hr_max, 180.0);
    // 171/180 = 95 %: zone 5 with the roster's HRmax (it was 90 % of 190).
    assert_eq!(row.window.zone_us, [0, 0, 0, 0, S]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Feeds one reading set at `secs` into window 0; the names of the rules fired.
fn fire(t: &mut LoadTracker, device: &str, secs: f64, v: &[(u8, f64)]) -> Vec<String> {
    t.add(&event(device, secs, v), 0, v);
    t.take_findings(1, 7).into_iter().map(|f| f.rule).collect()
}

const RED_ZONE: &str =
    "[[rules]]\nname = \"red\"\nwatch = \"hr_pct\"\nat_least = 92\nhold = \"60s\"\n";

#[test]
fn an_hr_rule_fires_once_the_rate_has_held_and_again_only_after_it_dropped() {
    // 180 bpm is 94.7 % of 190; 170 is 89.5 %.
    let mut t = LoadTracker::new(config(RED_ZONE));
    let mut fired = Vec::new();
    for (secs, hr) in [
        (0, 180),
        (5, 180),
        (55, 180),
        (60, 180),
        (65, 180),
        (70, 170),
        (75, 180),
        (130, 180),
        (135, 180),
    ] {
        // Readings 50 s apart are a gap (max_gap 5 s): the hold starts again.
        for f in fire(&mut t, "w", secs as f64, &[(HR, hr as f64)]) {
            fired.push((secs, f));
        }
    }
    // 0..5 held, 55 restarts (a 50 s gap), 115 would be its 60 s: it drops at 70,
    // starts at 75, a gap at 130 restarts: nothing fires.
    assert!(fired.is_empty(), "{fired:?}");
    let mut t = LoadTracker::new(config(RED_ZONE));
    let mut fired = Vec::new();
    for s in (0..=130).step_by(5) {
        let hr = if (70..75).contains(&s) { 170.0 } else { 180.0 };
        for f in fire(&mut t, "w", s as f64, &[(HR, hr)]) {
            fired.push((s, f));
        }
    }
    assert_eq!(
        fired,
        [(60, "red".to_string())],
        "held from 0 to 60; the drop at 70 re-arms, 75 + 60 > 130"
    );
}

#[test]
fn a_sprint_rule_fires_at_its_count_within_its_time_then_counts_afresh() {
    let rule = "sprint_dwell = \"0s\"\n[[rules]]\nname = \"rsa\"\nwatch = \"sprints\"\nat_least = 2\nwithin = \"10m\"\n";
    let mut t = LoadTracker::new(config(rule));
    let mut fired = Vec::new();
    let mut dist = 0.0;
    // One-second sprints (8 m/s) at 0, 700, 720, 730 and 740 s, walking between.
    let sprint_at = [0, 700, 720, 730, 740];
    for s in 0..=745 {
        let fast = sprint_at.iter().any(|&a| s == a + 1);
        dist += if fast { 8.0 } else { 1.0 };
        for f in fire(&mut t, "w", s as f64, &[(DIST, dist)]) {
            fired.push((s, f));
        }
    }
    // 0 and 700 are 700 s apart: more than 10 m. 700 and 720 fire; 730 starts
    // afresh and 740 fires.
    let at: Vec<i32> = fired.iter().map(|f| f.0).collect();
    assert_eq!(at, [721, 741]);
}

#[test]
fn a_load_rule_fires_once_a_match_when_the_target_is_reached_for_roster_players_it_names() {
    let dir = std::env::temp_dir().join(format!("pitchside-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let roster = dir.join("roster.csv");
    std::fs::write(
        &roster,
        "player_id,position,target_trimp\n7,mid,1\n8,keeper,1\n",
    )
    .unwrap();
    let text = format!(
        "roster = {:?}\n[[rules]]\nname = \"half-load\"\nwatch = \"load_pct\"\nat_least = 50\npositions = [\"mid\"]\n",
        roster.display().to_string()
    );
    let mut t = LoadTracker::new(config(&text));
    // 171 bpm is zone 5 (90 % of 190): 6 s of it is 0.5 Edwards TRIMP, 50 % of 1.
    let mut fired = Vec::new();
    for s in 0..=10 {
        for f in fire(&mut t, "w", s as f64, &[(HR, 171.0)]) {
            fired.push(s);
            assert_eq!(f, "half-load");
        }
    }
    assert_eq!(fired, [6]);
    // Player 8 (a keeper) is not named by the rule.
    let mut e = event("k", 0.0, &[(HR, 171.0)]);
    e.identity = Identity::Wearable {
        player_id: 8,
        player_name: None,
    };
    for s in 0..=10 {
        e.event_time = s * S;
        t.add(&e, 0, &[(HR, 171.0)]);
        assert!(!t.fired());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_hold_under_way_survives_the_checkpoint() {
    let mut a = LoadTracker::new(config(RED_ZONE));
    for s in (0..=30).step_by(5) {
        fire(&mut a, "w", s as f64, &[(HR, 180.0)]);
    }
    let mut e = crate::util::codec::Enc::default();
    a.save(&mut e);
    let mut b = LoadTracker::new(config(RED_ZONE));
    b.load(&mut crate::util::codec::Dec::new(&e.0)).unwrap();
    for s in (35..=60).step_by(5) {
        let (fa, fb) = (
            fire(&mut a, "w", s as f64, &[(HR, 180.0)]),
            fire(&mut b, "w", s as f64, &[(HR, 180.0)]),
        );
        assert_eq!(fa, fb);
        assert_eq!(fb.len(), (s == 60) as usize);
    }
}

#[test]
fn a_players_status_is_its_latest_match_with_open_windows_and_its_last_window() {
    let mut t = LoadTracker::new(config(""));
    // Match 1, then match 2 for the same player: the status is match 2's.
    let v = [(HR, 171.0), (DIST, 0.0)];
    t.add(&event("w", 0.0, &v), 0, &v);
    for w in 0..12i64 {
        let v = [(HR, 171.0), (DIST, 10.0 * (w + 1) as f64)];
        let mut e = event("w", (w + 1) as f64, &v);
        e.match_id = 2;
        t.add(&e, w * S, &v);
        if w < 11 {
            t.on_window(2, 7, w * S).unwrap();
        }
    }
    let s = t.statuses();
    assert_eq!(s.len(), 1);
    assert_eq!(
        (s[0].match_id, s[0].zone, s[0].hr_pct),
        (2, Some(5), Some(90.0))
    );
    assert_eq!(s[0].last_window.map(|w| w.0), Some(10 * S));
    // 12 readings of match 2 a second apart: 11 intervals of 10 m, the last
    // in the open window.
    assert_eq!(s[0].so_far.distance, 110.0);
}

#[test]
fn churn_past_the_cap_evicts_the_least_recently_updated_at_constant_cost() {
    // 100,000 players through a cap of 1,000, each refreshed once ten steps
    // later: each new one evicts the least recently updated, and the order
    // queue stays within a few times the cap.
    let mut t = LoadTracker::new(config("max_players = 1000"));
    let mut updates = Vec::new();
    for player in 0..100_000i64 {
        for p in [Some(player), (player >= 10).then_some(player - 10)]
            .into_iter()
            .flatten()
        {
            let mut e = event("w", player as f64, &[(HR, 150.0)]);
            e.identity = Identity::Wearable {
                player_id: p,
                player_name: None,
            };
            t.add(&e, 0, &[(HR, 150.0)]);
            updates.push(p);
        }
        assert!(t.order.len() <= 2 * 1000 + 64 + 1, "{}", t.order.len());
    }
    assert_eq!((t.players(), t.counters().evictions), (1000, 99_000));
    // The survivors: the last 1,000 distinct players of the update list.
    let mut kept = std::collections::BTreeSet::new();
    for p in updates.iter().rev() {
        if kept.len() == 1000 {
            break;
        }
        kept.insert(*p);
    }
    let (first, last) = (*kept.first().unwrap(), *kept.last().unwrap());
    assert_eq!(last, 99_999);
    for p in first - 5..=last {
        assert_eq!(
            t.on_window(1, p, 0).is_some(),
            kept.contains(&p),
            "player {p}"
        );
    }
}
