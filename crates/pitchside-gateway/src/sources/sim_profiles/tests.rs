use super::*;
use crate::config::SimulatorSection;
use crate::model::Readings;
use proptest::prelude::*;

/// 2026-11-29T14:00:05.250Z.
const T: Micros = 1_795_960_805_250_000;

fn event(
    sensor: SensorKind,
    identity: Identity<'static>,
    values: Vec<(u8, f64)>,
) -> Event<'static> {
    Event {
        sensor,
        device_id: "dev-1".into(),
        event_time: T,
        match_id: 1,
        event_id: Some(9),
        identity,
        values: Readings::from_slice(&values).unwrap(),
    }
}

fn wearable(values: Vec<(u8, f64)>) -> Event<'static> {
    let identity = Identity::Wearable {
        player_id: 7,
        player_name: Some("R. Sharma".into()),
    };
    event(SensorKind::Wearable, identity, values)
}

fn pitch(values: Vec<(u8, f64)>) -> Event<'static> {
    event(
        SensorKind::Pitch,
        Identity::Pitch {
            delivery_id: Some(3),
        },
        values,
    )
}

fn crowd(values: Vec<(u8, f64)>) -> Event<'static> {
    let identity = Identity::Crowd {
        zone_id: "north-stand".into(),
    };
    event(SensorKind::Crowd, identity, values)
}

fn rendered(p: DeviceProfile, e: &Event) -> Option<String> {
    let mut out = String::new();
    p.render(e, &mut out).then_some(out)
}

#[test]
fn every_profile_is_found_by_its_name() {
    for p in DeviceProfile::ALL {
        assert_eq!(DeviceProfile::parse(p.name()), Some(p));
    }
    assert_eq!(DeviceProfile::parse("toaster"), None);
}

#[test]
fn the_sound_meter_prints_local_time_at_plus_0530_and_one_decimal() {
    let line = rendered(
        DeviceProfile::SoundLevelMeter,
        &crowd(vec![(0, 84.26), (1, 0.7)]),
    );
    assert_eq!(line.as_deref(), Some("2026-11-29 19:30:05 LAeq,1s=84.3 dB"));
}

#[test]
fn the_radar_gun_prints_mph() {
    let line = rendered(DeviceProfile::RadarGun, &pitch(vec![(2, 91.3 * 1.609344)]));
    assert_eq!(line.as_deref(), Some("S 91.3 MPH"));
}

#[test]
fn the_ble_bridge_publishes_whole_bpm_on_the_players_topic() {
    let e = wearable(vec![(0, 150.6), (1, 1.2)]);
    let p = DeviceProfile::BleHeartRate;
    assert_eq!(
        rendered(p, &e).as_deref(),
        Some(r#"{"id":"C7:1A:2B:3C:00:07","hr":{"bpm":151},"rssi":-61}"#)
    );
    assert_eq!(p.topic(&e).as_deref(), Some("ble/hr/7/C7:1A:2B:3C:00:07"));
}

#[test]
fn the_ball_tracker_writes_its_header_columns_with_empty_cells_for_missing_metrics() {
    let p = DeviceProfile::BallTracker;
    assert_eq!(p.header(), Some(TRACKER_HEADER));
    let line = rendered(p, &pitch(vec![(2, 142.71), (3, 1850.4), (0, 0.123)]));
    assert_eq!(
        line.as_deref(),
        Some("1795960805250,dev-1,3,142.7,1850,0.12,")
    );
}

#[test]
fn the_crowd_counter_writes_line_protocol_in_ns_on_the_zones_topic() {
    let e = crowd(vec![(0, 80.0), (1, 3.25)]);
    let p = DeviceProfile::CrowdCounter;
    assert_eq!(
        rendered(p, &e).as_deref(),
        Some("crowd,zone=north-stand,counter=dev-1 density=3.25 1795960805250000000")
    );
    assert_eq!(p.topic(&e).as_deref(), Some("venue/crowd/north-stand"));
}

#[test]
fn the_wearable_hub_writes_logfmt_with_a_quoted_name() {
    let line = rendered(
        DeviceProfile::WearableHub,
        &wearable(vec![(0, 151.0), (2, 4.25)]),
    );
    assert_eq!(
        line.as_deref(),
        Some(
            r#"ts=2026-11-29T14:00:05.250000Z hub=wh-1 vest=dev-1 player=7 name="R. Sharma" hr=151 dist=4.25"#
        )
    );
}

#[test]
fn a_device_leaves_out_other_kinds_and_events_without_its_metric() {
    assert_eq!(
        rendered(DeviceProfile::RadarGun, &crowd(vec![(0, 80.0)])),
        None
    );
    assert_eq!(
        rendered(DeviceProfile::RadarGun, &pitch(vec![(3, 1800.0)])),
        None
    );
    assert_eq!(
        rendered(DeviceProfile::CrowdCounter, &crowd(vec![(0, 80.0)])),
        None
    );
}

#[test]
fn a_stream_starts_with_the_header_and_writes_only_its_devices_lines() {
    let sim = Simulator::new(&SimulatorSection::default(), T);
    let mut s = DeviceStream::new(sim, Some(DeviceProfile::BallTracker)).unwrap();
    assert_eq!(s.next_time(), None);
    assert_eq!(s.next_line().text, TRACKER_HEADER);
    for _ in 0..20 {
        let line = s.next_line();
        assert!(line.text.contains(",hawk-0,"), "{}", line.text);
    }
}

#[test]
fn a_stream_of_a_kind_the_simulator_does_not_make_is_refused() {
    let cfg = SimulatorSection {
        pitch_devices: 0,
        ..Default::default()
    };
    let sim = Simulator::new(&cfg, T);
    assert!(DeviceStream::new(sim, Some(DeviceProfile::RadarGun)).is_none());
}

fn any_event() -> impl Strategy<Value = Event<'static>> {
    let value = prop_oneof![
        any::<f64>().prop_filter("finite", |x| x.is_finite()),
        -1e3..1e4f64
    ];
    (
        0..3usize,
        any::<i64>(),
        proptest::collection::vec((0u8..4, value), 0..4),
        "[ -~]{0,12}",
    )
        .prop_map(|(kind, t, values, text)| {
            let (sensor, identity) = match kind {
                0 => (
                    SensorKind::Wearable,
                    Identity::Wearable {
                        player_id: t % 1000,
                        player_name: Some(text.clone().into()),
                    },
                ),
                1 => (
                    SensorKind::Pitch,
                    Identity::Pitch {
                        delivery_id: Some(t),
                    },
                ),
                _ => (
                    SensorKind::Crowd,
                    Identity::Crowd {
                        zone_id: text.clone().into(),
                    },
                ),
            };
            Event {
                sensor,
                device_id: text.into(),
                event_time: t,
                match_id: 0,
                event_id: None,
                identity,
                values: Readings::from_slice(&values).unwrap(),
            }
        })
}

proptest! {
    #[test]
    fn any_event_renders_without_panic_and_the_formats_parse_it_back(e in any_event()) {
        for p in DeviceProfile::ALL {
            let mut out = String::new();
            if !p.render(&e, &mut out) {
                prop_assert!(out.is_empty());
                continue;
            }
            let _ = p.topic(&e);
            match p {
                DeviceProfile::BallTracker => {
                    let mut cells = Vec::new();
                    prop_assert!(csv::split(&out, b',', &mut cells).is_ok(), "{}", out);
                    prop_assert_eq!(cells.len(), 7);
                    prop_assert_eq!(&cells[1], &e.device_id);
                }
                DeviceProfile::WearableHub => {
                    let mut pairs = Vec::new();
                    prop_assert!(logfmt::parse(&out, &mut pairs).is_ok(), "{}", out);
                    let vest = pairs.iter().find(|(k, _)| k == "vest").map(|(_, v)| v.to_string());
                    prop_assert_eq!(vest, Some(e.device_id.to_string()));
                }
                DeviceProfile::BleHeartRate => {
                    prop_assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok(), "{}", out);
                }
                _ => {}
            }
        }
    }
}

#[test]
fn the_sound_meter_stream_is_one_meter_printing_once_a_second() {
    let sim = Simulator::new(&SimulatorSection::default(), T);
    let mut s = DeviceStream::new(sim, Some(DeviceProfile::SoundLevelMeter)).unwrap();
    let stamps: Vec<String> = (0..30)
        .map(|_| s.next_line().text.get(..19).unwrap_or("").to_string())
        .collect();
    for pair in stamps.windows(2) {
        assert!(pair[0] < pair[1], "{pair:?}");
    }
}
