use super::*;
use crate::pipeline::detect::stats::Baseline;
use crate::pipeline::fatigue::FatigueFinding;
use crate::pipeline::rows::{AlertIdentity, AlertRecord, FatigueRecord};

const NOW: Micros = 1_764_583_200_000_000;

fn origin() -> Origin {
    Origin {
        venue_id: "demo".into(),
        gateway_id: "gw-demo".into(),
    }
}

fn zscore(n: u32, player: Option<i64>) -> LiveAlert {
    LiveAlert::ZScore(AlertRecord {
        alert_id: format!("demo/wearable/band/heart_rate/{n}"),
        sensor: SensorKind::Wearable,
        device_id: "band".into(),
        metric: "heart_rate".into(),
        value: 190.0,
        z_score: 5.0,
        baseline: Baseline {
            mean: 150.0,
            std: 8.0,
            count: 50,
        },
        match_id: 1,
        event_time: NOW,
        detected_at: NOW,
        identity: AlertIdentity {
            player_id: player,
            player_name: player.map(|p| format!("P{p}")),
            ..AlertIdentity::default()
        },
        clock_synchronized: Some(true),
    })
}

fn fatigue(player: i64) -> LiveAlert {
    LiveAlert::Fatigue(FatigueRecord {
        alert_id: format!("demo/fatigue/1/{player}/1"),
        match_id: 1,
        player_id: player,
        player_name: None,
        window_start: NOW - 60_000_000,
        window_end: NOW,
        heart_rate_mean: 171.0,
        finding: FatigueFinding {
            baseline_mean: 150.0,
            baseline_std: 4.0,
            baseline_windows: 3,
        },
    })
}

fn device(sensor: SensorKind, id: &str, silent: bool) -> DeviceStatus {
    DeviceStatus {
        sensor,
        device_id: id.into(),
        player_id: (sensor == SensorKind::Wearable).then_some(7),
        player_name: (sensor == SensorKind::Wearable).then(|| "R. Sharma".into()),
        zone_id: (sensor == SensorKind::Crowd).then(|| "north".into()),
        last_seen: NOW - 1_500_000,
        silent,
        latest: match sensor {
            SensorKind::Wearable => vec![("heart_rate", 151.2)],
            SensorKind::Crowd => vec![("decibels", 98.2)],
            _ => vec![],
        },
    }
}

fn feed(doc: &mut Doc, a: &LiveAlert) {
    let (_, json) = alert_event(doc.origin(), a);
    doc.alert(a, &json);
}

#[test]
fn the_state_doc_has_every_part_of_the_design() {
    let mut doc = Doc::new(origin(), 15_000_000);
    doc.devices(
        vec![
            device(SensorKind::Crowd, "crowd-1", false),
            device(SensorKind::Wearable, "band-07", false),
            device(SensorKind::Wearable, "band-03", true),
        ],
        false,
    );
    let v = doc.render(NOW, &MetricsSnapshot::default());
    for k in [
        "venue_id",
        "gateway_id",
        "now",
        "players",
        "pitch",
        "crowd",
        "alerts",
        "devices",
        "health",
        "gateway",
    ] {
        assert!(v.get(k).is_some(), "{k} missing: {v}");
    }
    assert_eq!(v["devices"][0]["device_id"], "band-03", "silent first");
    assert_eq!(v["devices"][1]["device_id"], "band-07");
    assert_eq!(v["devices"][2]["device_id"], "crowd-1");
    assert_eq!(v["crowd"][0]["zone_id"], "north");
    assert_eq!(v["crowd"][0]["decibels"], 98.2);
    assert!(v["crowd"][0]["density"].is_null());
    assert_eq!(v["players"][0]["heart_rate"], 151.2);
    assert_eq!(v["players"][0]["seconds_since"], 1.5);
    assert_eq!(v["health"]["silent"], 1);
    assert_eq!(v["health"]["silent_after_s"], 15.0);
    assert!(v["gateway"]["watermark_lag_s"]["pitch"].is_null());
    assert_eq!(v["gateway"]["clock_synchronized"], true);
    let mut m = MetricsSnapshot::default();
    m.counters.clock_unsynchronized = true;
    m.counters.clock_unvouched_events = 3;
    let v = doc.render(NOW, &m);
    assert_eq!(v["gateway"]["clock_synchronized"], false);
    assert_eq!(v["gateway"]["clock_unvouched_events"], 3);
}

#[test]
fn open_alerts_and_fatigue_count_only_unacked_alerts_of_the_player() {
    let mut doc = Doc::new(origin(), 15_000_000);
    feed(&mut doc, &zscore(1, Some(7)));
    feed(&mut doc, &zscore(2, Some(7)));
    feed(&mut doc, &zscore(3, Some(9)));
    feed(&mut doc, &fatigue(7));
    doc.ack(&AckRecord {
        alert_id: "demo/wearable/band/heart_rate/1".into(),
        by: "Dr Khan".into(),
        note: Some("seen".into()),
        acked_at: NOW,
    });
    let v = doc.render(NOW, &MetricsSnapshot::default());
    let players = v["players"].as_array().unwrap();
    assert_eq!(players.len(), 2);
    assert_eq!(players[0]["player_id"], 7, "sorted by player_id");
    assert_eq!(players[0]["open_alerts"], 2);
    assert_eq!(players[0]["fatigue"], true);
    assert_eq!(players[1]["open_alerts"], 1);
    assert_eq!(players[1]["fatigue"], false);
    let alerts = v["alerts"].as_array().unwrap();
    assert_eq!(alerts[0]["kind"], "fatigue", "newest first");
    assert_eq!(alerts[3]["kind"], "anomaly");
    assert_eq!(alerts[3]["acks"][0]["by"], "Dr Khan");
    assert_eq!(alerts[2]["acks"].as_array().unwrap().len(), 0);
}

#[test]
fn the_feed_keeps_the_newest_alerts_only_and_device_events_stay_out() {
    let mut doc = Doc::new(origin(), 15_000_000);
    for n in 0..(ALERTS_KEPT as u32 + 5) {
        feed(&mut doc, &zscore(n, None));
    }
    feed(
        &mut doc,
        &LiveAlert::Device(crate::pipeline::console_rows::DeviceEventRecord {
            sensor: SensorKind::Pitch,
            device_id: "radar-1".into(),
            player_id: None,
            zone_id: None,
            event: crate::pipeline::console_rows::DeviceEventKind::Silent,
            last_seen: NOW - 20_000_000,
            at: NOW,
        }),
    );
    let v = doc.render(NOW, &MetricsSnapshot::default());
    let alerts = v["alerts"].as_array().unwrap();
    assert_eq!(alerts.len(), ALERTS_KEPT);
    assert_eq!(
        alerts[0]["alert_id"],
        format!("demo/wearable/band/heart_rate/{}", ALERTS_KEPT + 4)
    );
}

#[test]
fn acks_are_bounded_per_alert_and_in_number_of_alerts() {
    let mut doc = Doc::new(origin(), 15_000_000);
    let ack = |id: String| AckRecord {
        alert_id: id,
        by: "a".into(),
        note: None,
        acked_at: NOW,
    };
    for i in 0..ACKS_PER_ALERT as i64 + 3 {
        let a = AckRecord {
            acked_at: NOW + i,
            ..ack("x".into())
        };
        assert!(doc.ack(&a));
        if i < ACKS_PER_ALERT as i64 {
            assert!(!doc.ack(&a), "the very same ack is known");
        }
    }
    assert_eq!(doc.acks["x"].len(), ACKS_PER_ALERT);
    for n in 0..ACKED_KEPT + 1 {
        doc.ack(&ack(n.to_string()));
    }
    assert_eq!(doc.acks.len(), ACKED_KEPT);
    assert!(!doc.acks.contains_key("x"), "the oldest is forgotten first");
}

#[test]
fn a_players_load_joins_its_card_with_the_zone_in_words_and_load_against_target() {
    use crate::pipeline::load::{PlayerLoadStatus, Session, Sums};
    let mut doc = Doc::new(origin(), 15_000_000);
    doc.devices(vec![device(SensorKind::Wearable, "band-07", false)], false);
    let window = Sums {
        zone_us: [0, 0, 0, 30_000_000, 30_000_000],
        sprints: 1,
        ..Sums::default()
    };
    doc.load(vec![
        PlayerLoadStatus {
            match_id: 1,
            player_id: 7,
            name: None,
            position: Some("mid".into()),
            hr_pct: Some(91.0),
            zone: Some(5),
            so_far: Session {
                trimp_edwards: 150.0,
                sprints: 4,
                ..Session::default()
            },
            target_trimp: Some(300.0),
            last_window: Some((NOW - 60_000_000, window)),
        },
        // A player whose strap the health tracker does not know (yet).
        PlayerLoadStatus {
            match_id: 1,
            player_id: 9,
            name: Some("Osei".into()),
            position: None,
            hr_pct: None,
            zone: None,
            so_far: Session::default(),
            target_trimp: None,
            last_window: None,
        },
    ]);
    let v = doc.render(NOW, &MetricsSnapshot::default());
    let players = v["players"].as_array().unwrap();
    let p7 = &players[0]["load"];
    assert_eq!(
        (p7["zone"].as_u64(), p7["zone_name"].as_str()),
        (Some(5), Some("Maximum"))
    );
    assert_eq!(p7["target_pct"].as_f64(), Some(50.0));
    assert_eq!(p7["sprints"], 4);
    assert!(
        p7.get("recent").is_none(),
        "the last windows are the detail's, not every card's"
    );
    assert!(doc.player(8).is_none());
    let detail = doc.player(7).unwrap();
    assert_eq!(detail["load"]["zone_name"], "Maximum");
    let recent = detail["recent"].as_array().unwrap();
    assert_eq!(
        recent[0]["zone_s"],
        serde_json::json!([0.0, 0.0, 0.0, 30.0, 30.0])
    );
    assert_eq!(
        recent[0]["trimp"].as_f64(),
        Some(4.5),
        "Edwards: 4 · 0.5 + 5 · 0.5"
    );
    assert_eq!(players[1]["player_name"], "Osei");
    assert!(players[1]["load"]["zone"].is_null() && players[1]["load"]["target_pct"].is_null());
}
