use super::*;
use crate::model::{RejectReason, SensorKind};
use crate::pipeline::rows::AlertRecord;
use crate::tables::RowGroupLimit;

fn config() -> Config {
    crate::config::parse(
        "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/pitchside-unit-store\"\nspool_dir = \"/tmp/pitchside-unit-spool\"\n",
        "test",
    )
    .unwrap()
    .validate()
    .unwrap()
}

const NOW: Micros = 1_795_980_600_000_000; // 2026-11-29T19:30:00Z
const HOUR: Micros = 3_600_000_000;

fn pitch(t: Micros) -> Vec<u8> {
    format!(
        r#"{{"sensor":"pitch","device_id":"p","event_time":{},"ball_speed":140}}"#,
        t / 1000
    )
    .into_bytes()
}

/// A live pipeline told that its clock is (not) synchronised.
fn live_with_clock(synced: bool) -> Pipeline {
    let mut p = Pipeline::new(&config(), true);
    p.set_clock_synchronized(synced, NOW);
    p
}

fn pitch_of(dev: &str, t: Micros) -> Vec<u8> {
    format!(
        r#"{{"sensor":"pitch","device_id":"{dev}","event_time":{},"ball_speed":140}}"#,
        t / 1000
    )
    .into_bytes()
}

#[test]
fn unsynchronised_a_future_time_two_devices_agree_on_is_accepted_and_counted() {
    let mut p = live_with_clock(false);
    // A stale gateway clock: the devices are an hour ahead. The first
    // reading of each of the first two has no second device to vouch for it.
    for dev in ["a", "b", "c", "a"] {
        p.process_bytes("test", None, &pitch_of(dev, NOW + HOUR), NOW, NOW);
    }
    let c = p.counters();
    assert_eq!((c.accepted, c.clock_unsynced_events), (2, 2));
    assert_eq!(c.clock_unvouched_events, 2);
    assert_eq!(c.rejected[RejectReason::ImplausibleTime as usize], 2);
    assert!(c.clock_unsynchronized);
    assert_eq!(p.trusted_time(NOW), NOW + HOUR);
    // One device a century ahead is refused and moves nothing.
    p.process_bytes(
        "test",
        None,
        &pitch_of("x", 4_102_444_800_000_000),
        NOW,
        NOW,
    );
    assert_eq!(p.counters().clock_unvouched_events, 3);
    assert_eq!(p.trusted_time(NOW), NOW + HOUR);
    // The 2020-01-01 floor still holds (the decoder's).
    p.process_bytes("test", None, &pitch(1_000_000), NOW, NOW);
    let c = p.counters();
    assert_eq!(c.rejected[RejectReason::ImplausibleTime as usize], 4);
    let tables = p.take_tables(RowGroupLimit::ANY);
    let rejects = tables.iter().find(|t| t.table == TableId::Rejects).unwrap();
    assert_eq!(rejects.rows, 4);

    // Synchronised: judged against the clock.
    p.set_clock_synchronized(true, NOW + 1);
    p.process_bytes(
        "test",
        None,
        &pitch_of("a", NOW + HOUR + 2),
        NOW + 1,
        NOW + 1,
    );
    let c = p.counters();
    assert_eq!(c.rejected[RejectReason::ImplausibleTime as usize], 5);
    assert_eq!((c.accepted, c.clock_unsynced_events), (2, 2));
    assert!(!c.clock_unsynchronized);
    assert_eq!(p.trusted_time(NOW + 1), NOW + 1);
}

#[test]
fn a_synchronised_clock_rejects_a_future_event_as_the_spec_says() {
    let mut p = live_with_clock(true);
    p.process_bytes("test", None, &pitch(NOW + HOUR), NOW, NOW);
    let c = p.counters();
    assert_eq!(c.rejected[RejectReason::ImplausibleTime as usize], 1);
    assert_eq!(c.clock_unsynced_events, 0);
}

#[test]
fn the_clock_state_and_trusted_time_survive_a_checkpoint() {
    let mut p = live_with_clock(false);
    for dev in ["a", "b", "c"] {
        p.process_bytes("test", None, &pitch_of(dev, NOW + HOUR), NOW, NOW);
    }
    let body = p.snapshot(7);
    let mut q = Pipeline::new(&config(), true);
    assert_eq!(q.restore(&body), Ok(7));
    assert!(!q.clock_synchronized() && q.counters().clock_unsynchronized);
    assert_eq!(q.trusted_time(NOW), NOW + HOUR);
    // The same decisions after the restore: d is vouched for, z is not.
    q.process_bytes("test", None, &pitch_of("d", NOW + HOUR), NOW, NOW);
    q.process_bytes("test", None, &pitch_of("z", NOW + 9 * HOUR), NOW, NOW);
    assert_eq!(
        (q.counters().accepted, q.counters().clock_unvouched_events),
        (1, 1)
    );
}

#[test]
fn replay_is_never_judged_against_the_clock() {
    let mut p = Pipeline::new(&config(), false);
    p.set_clock_synchronized(false, NOW);
    assert!(p.clock_synchronized());
    p.process_bytes("test", None, &pitch(NOW + 100 * HOUR), NOW, NOW);
    assert_eq!(p.counters().accepted, 1);
    assert_eq!(p.counters().clock_unsynced_events, 0);
}

#[test]
fn a_clock_record_round_trips_and_other_records_are_not_one() {
    for change in [
        ClockChange::Synchronized(false),
        ClockChange::Synchronized(true),
        ClockChange::Stepped(-600_000_000),
        ClockChange::Stepped(HOUR),
    ] {
        assert_eq!(clock_record(&clock_input(change, NOW)), Some(change));
    }
    let mut other = clock_input(ClockChange::Stepped(1), NOW);
    other.source = std::sync::Arc::from("serial:/dev/ttyUSB0");
    assert_eq!(clock_record(&other), None);
}

#[test]
fn conflicting_duplicates_are_counted_apart_from_resends() {
    let mut p = Pipeline::new(&config(), false);
    let line = |v: f64| {
        format!(r#"{{"sensor":"pitch","device_id":"p","event_time":1000,"ball_speed":{v}}}"#)
    };
    for v in [140.0, 140.0, -0.0, 141.5, 140.0] {
        p.process_bytes("test", None, line(v).as_bytes(), NOW, NOW);
    }
    let c = p.counters();
    assert_eq!(c.readings, 1);
    assert_eq!(c.duplicate_rows, 4);
    assert_eq!(c.duplicate_conflicts, 2, "-0.0 and 141.5 differ from 140");
}

#[test]
fn unknown_numeric_fields_are_counted_per_name_in_the_counters() {
    let mut p = Pipeline::new(&config(), false);
    for t in 0..3 {
        let line = format!(
            r#"{{"sensor":"crowd","device_id":"m","zone_id":"z","event_time":{t},"decibels":80,"decibel":81,"note":"x"}}"#
        );
        p.process_bytes("test", None, line.as_bytes(), NOW, NOW);
    }
    let all: Vec<_> = p.counters().unknown_fields.iter().collect();
    assert_eq!(all, [(SensorKind::Crowd, "decibel", 3)]);
}

#[test]
fn rejects_from_a_file_line_carry_the_line_number() {
    let mut p = Pipeline::new(&config(), false);
    p.process_line("replay:x", None, b"{oops", 42, NOW, NOW);
    let t = p.take_tables(RowGroupLimit::ANY);
    let rejects = t.iter().find(|b| b.table == TableId::Rejects).unwrap();
    assert_eq!(rejects.rows, 1);
    let col = TableId::Rejects
        .columns()
        .iter()
        .position(|c| c.name == "detail")
        .unwrap();
    let crate::tables::ColumnBuf::Bytes { data, offsets } = &rejects.columns[col] else {
        panic!("detail is a string column");
    };
    let detail = std::str::from_utf8(&data[offsets[0]..offsets[1]]).unwrap();
    assert!(detail.starts_with("line 42: at byte 1"), "{detail}");
}

/// Twelve calm readings of `metric` then a spike, as lines of `head` (the
/// event's sensor, device and identity fields); the alerts they raised.
fn spike(head: &str, metric: &str) -> (Pipeline, Vec<AlertRecord>) {
    let mut p = Pipeline::new(&config(), false);
    for n in 0..13 {
        let x = if n == 12 {
            500.0
        } else {
            100.0 + (n % 2) as f64
        };
        let line = format!(r#"{{{head},"event_time":{},"{metric}":{x}}}"#, 1000 + n);
        p.process_bytes("test", None, line.as_bytes(), NOW, NOW);
    }
    assert_eq!(p.counters().accepted, 13, "every line is an event");
    let alerts = p
        .drain_alerts()
        .into_iter()
        .filter_map(|a| match a {
            LiveAlert::ZScore(a) => Some(a),
            LiveAlert::Fatigue(_) | LiveAlert::Load(_) | LiveAlert::Device(_) => None,
        })
        .collect();
    (p, alerts)
}

/// The identity of the one alert `head` raised.
fn identity_of(head: &str, metric: &str) -> crate::pipeline::rows::AlertIdentity {
    let (_, alerts) = spike(head, metric);
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    alerts[0].identity.clone()
}

#[test]
fn an_alert_from_a_wearable_names_its_player() {
    let who = identity_of(
        r#""sensor":"wearable","device_id":"band-07","player_id":7,"player_name":"R. Sharma""#,
        "heart_rate",
    );
    assert_eq!(who.player_id, Some(7));
    assert_eq!(who.player_name.as_deref(), Some("R. Sharma"));
    assert_eq!((who.zone_id, who.delivery_id), (None, None));
}

#[test]
fn an_alert_from_a_wearable_without_a_name_has_its_player_id_only() {
    let who = identity_of(
        r#""sensor":"wearable","device_id":"band-09","player_id":9"#,
        "heart_rate",
    );
    assert_eq!((who.player_id, who.player_name), (Some(9), None));
}

#[test]
fn an_alert_from_a_crowd_sensor_names_its_zone() {
    let who = identity_of(
        r#""sensor":"crowd","device_id":"slm-1","zone_id":"north-stand""#,
        "decibels",
    );
    assert_eq!(who.zone_id.as_deref(), Some("north-stand"));
    assert_eq!(
        (who.player_id, who.player_name, who.delivery_id),
        (None, None, None)
    );
}

#[test]
fn an_alert_from_a_pitch_event_carries_its_delivery_when_it_has_one() {
    let who = identity_of(
        r#""sensor":"pitch","device_id":"radar","delivery_id":42"#,
        "ball_speed",
    );
    assert_eq!(who.delivery_id, Some(42));
    assert_eq!((who.player_id, who.zone_id), (None, None));
    let who = identity_of(r#""sensor":"pitch","device_id":"radar""#, "ball_speed");
    assert_eq!(who, Default::default(), "no delivery_id in the event");
}

#[test]
fn an_alert_from_a_generic_sensor_has_no_identity() {
    let who = identity_of(
        r#""sensor":"generic","device_id":"env-1","metric":"temp""#,
        "value",
    );
    assert_eq!(who, Default::default());
}

#[test]
fn the_alerts_row_holds_the_identity_in_its_last_four_columns() {
    let (mut p, _) = spike(
        r#""sensor":"crowd","device_id":"slm-1","zone_id":"north-stand""#,
        "decibels",
    );
    let t = p.take_tables(RowGroupLimit::ANY);
    let alerts = t.iter().find(|b| b.table == TableId::Alerts).unwrap();
    assert_eq!(alerts.rows, 1);
    let cols = TableId::Alerts.columns();
    let at = |name: &str| cols.iter().position(|c| c.name == name).unwrap();
    // One row: definition level 1 = a value, 0 = null.
    for (name, def) in [
        ("player_id", 0),
        ("player_name", 0),
        ("zone_id", 1),
        ("delivery_id", 0),
    ] {
        assert_eq!(alerts.defs[at(name)], [def], "{name}");
    }
    let crate::tables::ColumnBuf::Bytes { data, .. } = &alerts.columns[at("zone_id")] else {
        panic!("zone_id is a string column");
    };
    assert_eq!(data, b"north-stand");
}

/// `write_tables` hands over the tables that hold a full row group and
/// empties them; the others keep their rows for a later row group. An error
/// from the writer comes back to the caller.
#[test]
fn write_tables_hands_over_and_empties_only_the_full_tables() {
    let mut with_raw = config();
    with_raw.output.raw = true;
    let mut p = Pipeline::new(&with_raw, false);
    for k in 0..3 {
        p.process_bytes("test", None, &pitch(NOW + k * 1_000_000), NOW, NOW);
    }
    p.process_bytes("test", None, b"{not json", NOW, NOW);
    let rows = |p: &Pipeline, t: TableId| p.out.tables[t.index()].rows;
    assert_eq!((rows(&p, TableId::Raw), rows(&p, TableId::Rejects)), (3, 1));
    let three = RowGroupLimit {
        rows: 3,
        bytes: usize::MAX,
        raw_rows: 3,
        raw_bytes: usize::MAX,
    };
    assert!(p.tables_due(three));
    let mut handed = Vec::new();
    let r: Result<(), &str> = p.write_tables(three, |full| {
        handed.extend(full.iter().map(|t| (t.table, t.rows)));
        Err("disk full")
    });
    assert_eq!(r, Err("disk full"));
    assert_eq!(handed, [(TableId::Raw, 3)]);
    assert_eq!((rows(&p, TableId::Raw), rows(&p, TableId::Rejects)), (0, 1));
    assert!(!p.tables_due(three));
    let mut all = Vec::new();
    p.write_tables(RowGroupLimit::ANY, |full| {
        all.extend(full.iter().map(|t| t.table));
        Ok::<(), ()>(())
    })
    .unwrap();
    assert_eq!(all, [TableId::Rejects]);
    assert!(!p.tables_due(RowGroupLimit::ANY));
}
