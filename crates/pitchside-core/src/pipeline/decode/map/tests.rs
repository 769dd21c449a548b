use super::Context;
use crate::config::MetricRange;
use crate::model::{Event, Identity, Readings, RejectReason, SensorKind};
use crate::pipeline::decode::{Decoded, Decoder};
use crate::util::time::parse_rfc3339;

const HEAD: &str = "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/o\"\nspool_dir = \"/tmp/s\"\n";
const ARRIVAL: i64 = 1_764_444_600_000_000;

/// A decoder for one serial source `s` with `format` and a map (TOML).
fn decoder(source: &str, ranges: Vec<MetricRange>) -> Decoder {
    let c = crate::config::parse(&format!("{HEAD}{source}"), "test")
        .unwrap()
        .validate()
        .unwrap();
    Decoder::new(4096, ranges, None).with_formats(c.inputs.formats())
}

fn serial(format: &str, extra: &str, map: &str) -> String {
    format!("[[sources.serial]]\nname = \"s\"\npath = \"/dev/x\"\nformat = \"{format}\"\n{extra}\n[sources.serial.map]\n{map}\n")
}

fn decode(d: &mut Decoder, line: &str, topic: Option<&str>) -> Decoded<'static> {
    let cx = Context {
        topic,
        received_at: ARRIVAL,
        clock: ARRIVAL,
    };
    d.decode_mapped("s", line.as_bytes(), &cx)
}

fn event(d: &mut Decoder, line: &str) -> Event<'static> {
    match decode(d, line, None) {
        Decoded::Event(e) => e,
        other => panic!("{line}: {other:?}"),
    }
}

fn reject(d: &mut Decoder, line: &str) -> (RejectReason, String) {
    match decode(d, line, None) {
        Decoded::Reject(r) => (r.reason, r.detail),
        other => panic!("{line}: {other:?}"),
    }
}

fn t(s: &str) -> i64 {
    parse_rfc3339(s).unwrap()
}

const HUB: &str = "sensor = \"wearable\"\ndevice_id = { field = \"vest\" }\nplayer_id = { field = \"player\" }\nplayer_name = { field = \"name\" }\nevent_time = { field = \"ts\" }\n[sources.serial.map.metrics]\nheart_rate = { field = \"hr\" }\nacceleration = { field = \"acc\", scale = 9.80665 }";

#[test]
fn a_logfmt_line_is_the_event_its_map_describes() {
    let mut d = decoder(&serial("logfmt", "", HUB), vec![]);
    let e = event(
        &mut d,
        r#"ts=2026-11-29T19:30:00.25Z vest=v-7 player=7 name="R. Sharma" hr=151 acc=0.5"#,
    );
    assert_eq!(
        e,
        Event {
            sensor: SensorKind::Wearable,
            device_id: "v-7".into(),
            event_time: t("2026-11-29T19:30:00.250Z"),
            match_id: 0,
            event_id: None,
            identity: Identity::Wearable {
                player_id: 7,
                player_name: Some("R. Sharma".into())
            },
            values: Readings::from_slice(&[(0, 151.0), (1, 0.5 * 9.80665)]).unwrap(),
        }
    );
}

#[test]
fn what_does_not_fit_the_map_is_unmapped_and_other_reasons_keep_their_meaning() {
    let mut d = decoder(
        &serial("logfmt", "", HUB),
        vec![MetricRange {
            sensor: SensorKind::Wearable,
            metric: "heart_rate".into(),
            min: 25.0,
            max: 250.0,
        }],
    );
    let ok = "ts=2026-11-29T19:30:00Z vest=v-7 player=7";
    assert_eq!(
        reject(&mut d, &format!("{ok} hr=abc")),
        (
            RejectReason::Unmapped,
            "heart_rate (key hr) \"abc\" is not a number".into()
        )
    );
    assert_eq!(
        reject(&mut d, &format!("{ok} hr=NaN")).0,
        RejectReason::NonFinite
    );
    for infinite in ["inf", "-Infinity"] {
        let r = reject(&mut d, &format!("{ok} hr={infinite}"));
        assert_eq!(r.0, RejectReason::NonFinite, "{infinite}");
    }
    assert_eq!(
        reject(&mut d, &format!("{ok} hr=1e999")).0,
        RejectReason::OutOfRange
    );
    assert_eq!(
        reject(&mut d, &format!("{ok} hr=300")).0,
        RejectReason::OutOfRange
    );
    assert_eq!(
        reject(&mut d, &format!("{ok} hr=")).0,
        RejectReason::NoMetrics
    );
    assert_eq!(
        reject(&mut d, "ts=2026-11-29T19:30:00Z player=7 hr=150"),
        (
            RejectReason::Unmapped,
            "device_id: key vest is missing".into()
        )
    );
    assert_eq!(
        reject(&mut d, "ts=2026-11-29T19:30:00Z vest=v/7 player=7 hr=150").0,
        RejectReason::InvalidField
    );
    assert_eq!(
        reject(&mut d, "ts=yesterday vest=v-7 player=7 hr=150").0,
        RejectReason::InvalidTime
    );
    assert_eq!(
        reject(
            &mut d,
            "ts=2026-11-29T19:30:00Z vest=v-7 player=seven hr=150"
        )
        .0,
        RejectReason::Unmapped
    );
    assert_eq!(
        reject(&mut d, "ts=2026-11-29T19:30:00Z vest=v-7 hr=150"),
        (
            RejectReason::Unmapped,
            "player_id is required for a wearable event and the input does not have it".into()
        )
    );
    assert_eq!(reject(&mut d, "a=\"open").0, RejectReason::Unmapped);
    assert_eq!(decode(&mut d, "   ", None), Decoded::Skip);
}

#[test]
fn a_regex_reads_local_time_and_says_when_it_does_not_match() {
    let src = serial(
        "regex",
        r#"pattern = '^(?P<ts>\S+ \S+) LAeq,1s=(?P<db>[0-9.]+) dB(?: LCpeak=(?P<pk>[0-9.]+))?$'"#,
        "sensor = \"crowd\"\ndevice_id = { value = \"slm-1\" }\nzone_id = { value = \"north\" }\nevent_time = { field = \"ts\", format = \"%Y-%m-%d %H:%M:%S\", utc_offset = \"+05:30\" }\n[sources.serial.map.metrics]\ndecibels = { field = \"db\" }\ndensity = { field = \"pk\" }",
    );
    let mut d = decoder(&src, vec![]);
    let e = event(&mut d, "2026-11-29 19:30:05 LAeq,1s=84.3 dB");
    assert_eq!(
        (e.event_time, &e.values[..]),
        (t("2026-11-29T14:00:05Z"), &[(0, 84.3)][..])
    );
    assert_eq!(
        e.identity,
        Identity::Crowd {
            zone_id: "north".into()
        }
    );
    let (reason, detail) = reject(&mut d, "LAeq,1s=84.3 dB");
    assert_eq!(reason, RejectReason::Unmapped);
    assert!(
        detail.starts_with("the pattern did not match (^(?P<ts>"),
        "{detail}"
    );
    assert_eq!(
        reject(&mut d, "2026-11-31 19:30:05 LAeq,1s=84.3 dB").0,
        RejectReason::InvalidTime
    );
}

#[test]
fn json_pointers_topic_levels_and_arrival_time() {
    let src = "[[sources.mqtt]]\nbroker = { host = \"h\" }\n[[sources.mqtt.subscriptions]]\nname = \"s\"\ntopic = \"ble/hr/+/+\"\nformat = \"json\"\n[sources.mqtt.subscriptions.map]\nsensor = \"wearable\"\ndevice_id = { topic_level = 3 }\nplayer_id = { topic_level = 2 }\nevent_time = \"arrival\"\n[sources.mqtt.subscriptions.map.metrics]\nheart_rate = { field = \"/hr/bpm\" }\nrunning_dist = { field = \"/readings/1/v\" }\n";
    let mut d = decoder(src, vec![]);
    let topic = Some("ble/hr/7/C7:1A:2B");
    let Decoded::Event(e) = decode(
        &mut d,
        r#"{"id":"x","hr":{"bpm":151},"readings":[{"v":1},{"v":"2.5"}]}"#,
        topic,
    ) else {
        panic!()
    };
    assert_eq!(e.device_id, "C7:1A:2B");
    assert_eq!(e.event_time, ARRIVAL);
    assert_eq!(
        e.identity,
        Identity::Wearable {
            player_id: 7,
            player_name: None
        }
    );
    assert_eq!(e.values[..], [(0, 151.0), (2, 2.5)]);
    let Decoded::Reject(r) = decode(&mut d, r#"{"hr":{"bpm":{"v":1}}}"#, topic) else {
        panic!()
    };
    assert_eq!(
        (r.reason, r.detail.as_str()),
        (
            RejectReason::Unmapped,
            "heart_rate (field /hr/bpm) is an object, not a number"
        )
    );
    let Decoded::Reject(r) = decode(&mut d, r#"{"hr":{}}"#, topic) else {
        panic!()
    };
    assert_eq!(r.reason, RejectReason::NoMetrics);
    assert!(
        r.detail.contains("heart_rate (field /hr/bpm)"),
        "{}",
        r.detail
    );
    let Decoded::Reject(r) = decode(&mut d, r#"{"hr":{"bpm":NaN}}"#, topic) else {
        panic!()
    };
    assert_eq!(r.reason, RejectReason::NonFinite);
    let Decoded::Reject(r) = decode(&mut d, r#"{"hr":"#, topic) else {
        panic!()
    };
    assert_eq!(r.reason, RejectReason::InvalidJson);
    let Decoded::Reject(r) = decode(&mut d, r#"{"hr":{"bpm":1}}"#, Some("ble/hr/7")) else {
        panic!()
    };
    assert_eq!(
        (r.reason, r.detail.as_str()),
        (
            RejectReason::Unmapped,
            "topic \"ble/hr/7\" has no level 3 (levels count from 0)"
        )
    );
}

#[test]
fn a_csv_header_teaches_the_columns_and_lines_before_it_are_unmapped() {
    let src = serial("csv", "header = true", "sensor = \"pitch\"\ndevice_id = { field = \"tracker\" }\nevent_time = { field = \"ms\", format = \"epoch_ms\" }\ndelivery_id = { field = \"n\" }\n[sources.serial.map.metrics]\nball_speed = { field = \"kmh\" }");
    let mut d = decoder(&src, vec![]);
    assert_eq!(
        reject(&mut d, "1764444600250,bt,1,142.7").0,
        RejectReason::Unmapped
    );
    assert_eq!(decode(&mut d, "ms,tracker,n,kmh", None), Decoded::Skip);
    let e = event(&mut d, "1764444600250,bt,1,142.7");
    assert_eq!(
        (e.event_time, e.identity, e.values.to_vec()),
        (
            1_764_444_600_250_000,
            Identity::Pitch {
                delivery_id: Some(1)
            },
            vec![(2, 142.7)]
        )
    );
    // A new header in another order is learned too.
    assert_eq!(decode(&mut d, "kmh,n,tracker,ms", None), Decoded::Skip);
    assert_eq!(
        event(&mut d, "99.5,2,bt,1764444600250").values[..],
        [(2, 99.5)]
    );
    assert_eq!(
        reject(&mut d, "\"unclosed,bt,1,1").0,
        RejectReason::Unmapped
    );
}

#[test]
fn influx_points_with_nanoseconds_and_a_generic_map_gives_one_event_per_metric() {
    let src = "[[sources.mqtt]]\nbroker = { host = \"h\" }\n[[sources.mqtt.subscriptions]]\nname = \"s\"\ntopic = \"venue/#\"\nformat = \"influx\"\n[sources.mqtt.subscriptions.map]\nsensor = \"generic\"\ndevice_id = { field = \"counter\" }\nevent_time = { field = \"time\", format = \"epoch_ns\" }\n[sources.mqtt.subscriptions.map.metrics]\n\"gate.count\" = { field = \"count\" }\ntemp_f = { field = \"temp\", scale = 1.8, offset = 32 }\n";
    let mut d = decoder(src, vec![]);
    let Decoded::Events(es) = decode(
        &mut d,
        "crowd,zone=n,counter=cc-12 count=812i,temp=20 1764444600123456789",
        None,
    ) else {
        panic!()
    };
    assert_eq!(es.len(), 2);
    assert_eq!(
        es[0].identity,
        Identity::Generic {
            metric: "gate.count".into()
        }
    );
    assert_eq!(
        (&es[0].values[..], es[0].event_time),
        (&[(0, 812.0)][..], 1_764_444_600_123_456)
    );
    assert_eq!(
        es[1].identity,
        Identity::Generic {
            metric: "temp_f".into()
        }
    );
    assert_eq!(es[1].values[..], [(0, 20.0 * 1.8 + 32.0)]);
    let Decoded::Event(e) = decode(
        &mut d,
        "crowd,counter=cc-12 count=1i 1764444600123456789",
        None,
    ) else {
        panic!()
    };
    assert_eq!(e.values[..], [(0, 1.0)]);
    let Decoded::Reject(r) = decode(&mut d, "crowd,counter=cc-12 count=1i", None) else {
        panic!()
    };
    assert_eq!(
        (r.reason, r.detail.as_str()),
        (RejectReason::Unmapped, "event_time: field time is missing")
    );
}

#[test]
fn a_sensor_kind_from_the_input_is_checked_against_the_sources() {
    let src = "[[sources.serial]]\nname = \"s\"\npath = \"/dev/x\"\nsensor = \"crowd\"\nformat = \"logfmt\"\n[sources.serial.map]\nsensor = { field = \"kind\" }\ndevice_id = { field = \"d\" }\nzone_id = { field = \"z\" }\nevent_time = { field = \"t\", format = \"epoch_s\" }\n[sources.serial.map.metrics]\ndecibels = { field = \"db\" }\n";
    let mut d = decoder(src, vec![]);
    let e = event(&mut d, "kind=crowd d=m1 z=north t=1764444600.5 db=80");
    assert_eq!(e.event_time, 1_764_444_600_500_000);
    assert_eq!(
        reject(&mut d, "kind=pitch d=m1 z=north t=1764444600 db=80").0,
        RejectReason::SensorMismatch
    );
    assert_eq!(
        reject(&mut d, "kind=stadium d=m1 z=north t=1764444600 db=80").0,
        RejectReason::UnknownSensor
    );
}

#[test]
fn an_input_for_a_source_no_longer_configured_is_unmapped_not_lost() {
    let mut d = Decoder::new(4096, vec![], None);
    let cx = Context {
        topic: None,
        received_at: ARRIVAL,
        clock: ARRIVAL,
    };
    let Decoded::Reject(r) = d.decode_mapped("gone", b"x=1", &cx) else {
        panic!()
    };
    assert_eq!(r.reason, RejectReason::Unmapped);
    assert!(
        r.detail.contains("\"gone\" is not in the config"),
        "{}",
        r.detail
    );
}
