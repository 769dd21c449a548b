//! Bad input for the device formats (SPEC §9, issue 12): whatever a device
//! sends, in json, csv, regex, logfmt or influx, decodes to events that are
//! exactly §1 events or to a reject that says why — never a panic. Events
//! written with the formats' renderers decode back to themselves. And a
//! regular expression too long or too big to compile is refused by
//! `check-config`, naming its key.

use pitchside::model::{Event, Identity, Micros, Readings, SensorKind};
use pitchside::pipeline::decode::formats::influx::{FieldValue, Point};
use pitchside::pipeline::decode::formats::{csv, influx, logfmt};
use pitchside::pipeline::decode::{Decoded, Decoder};
use pitchside::util::time::format_rfc3339;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use std::borrow::Cow;
use std::cell::OnceCell;
use std::process::Command;

/// The maps, the decoder and SPEC §1's checks, shared with the fuzz targets.
#[path = "../../fuzz/fuzz_targets/common/mod.rs"]
mod maps;

use maps::NOW;

/// A decoder for every map, as the gateway builds it (built once; each
/// clone starts without a CSV header).
fn decoder() -> Decoder {
    thread_local! {
        static DECODER: OnceCell<Decoder> = const { OnceCell::new() };
    }
    DECODER.with(|d| {
        d.get_or_init(|| {
            let sources = [
                maps::JSON,
                maps::INFLUX,
                maps::CSV,
                maps::REGEX,
                maps::LOGFMT,
                maps::GENERIC,
            ];
            maps::decoder(&sources.concat())
        })
        .clone()
    })
}

fn decode(d: &mut Decoder, source: &str, input: &str) -> Decoded<'static> {
    d.decode_mapped(source, input.as_bytes(), &maps::context())
}

/// An input decodes to §1 events, a reject with a detail, or nothing (a
/// blank line, a CSV header): the fuzz targets' check.
fn check_outcome(out: &Decoded) -> Result<(), TestCaseError> {
    match maps::outcome_problem(out) {
        Some(problem) => Err(TestCaseError::fail(problem)),
        None => Ok(()),
    }
}

const SOURCES: [&str; 8] = [
    "json",
    "csv",
    "regex",
    "logfmt",
    "generic",
    "influx",
    "influx_scaled",
    "missing",
];

// ---- near-valid inputs, from each format's grammar ----

/// Text a device might put anywhere: numbers good and bad, ids, escapes,
/// quotes, delimiters, odd Unicode.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        any::<f64>().prop_map(|x| x.to_string()),
        any::<i64>().prop_map(|x| x.to_string()),
        (NOW / 1000 - 5_000..NOW / 1000 + 5_000).prop_map(|t| t.to_string()),
        Just(format_rfc3339(NOW - 250)),
        prop::sample::select(vec![
            "NaN",
            "inf",
            "-Infinity",
            "1e999",
            "-0",
            "0x10",
            "1_000",
            "t",
            "true",
            "null",
            "151",
            "3.25",
            "vest-07",
            "north-stand",
            "a b",
            "\"",
            "\\",
            "\\\"",
            "=",
            ",",
            ";",
            "\"\"",
            "é",
            "\u{0}",
            "\u{7f}",
            "\r",
            "\n",
            "  ",
        ])
        .prop_map(str::to_string),
        "[A-Za-z0-9._:-]{1,70}",
        "[ -~]{0,12}",
        "\\PC{0,8}",
    ]
}

fn logfmt_key() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "ts", "vest", "player", "name", "hr", "acc", "dist", "temp", "bat", "seq",
        ])
        .prop_map(str::to_string),
        "[ -~]{0,6}",
    ]
}

/// logfmt pairs with random keys and values, quoted or bare, some broken.
fn logfmt_line() -> impl Strategy<Value = String> {
    let pair = (logfmt_key(), piece(), 0..4u8).prop_map(|(k, v, how)| match how {
        0 => format!("{k}={v}"),
        1 => format!("{k}=\"{}\"", v.replace('"', "\\\"")),
        2 => format!("{k}={v:?}"),
        _ => k,
    });
    prop::collection::vec(pair, 0..10).prop_map(|p| p.join(" "))
}

/// A name with line protocol's escapes, some of them wrong.
fn influx_name() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            "[a-z0-9_-]{1,6}",
            prop::sample::select(vec![
                "\\ ", "\\,", "\\=", "\\\\", "\\", " ", ",", "=", "\"", "#", "é", "\t",
            ])
            .prop_map(str::to_string),
        ],
        0..5,
    )
    .prop_map(|p| p.concat())
}

fn influx_value() -> impl Strategy<Value = String> {
    prop_oneof![
        piece(),
        any::<i64>().prop_map(|n| format!("{n}i")),
        any::<u64>().prop_map(|n| format!("{n}u")),
        piece().prop_map(|s| format!("\"{s}\"")),
        influx_name(),
    ]
}

/// Points with random escapes in names, tags and fields, and odd timestamps.
fn influx_line() -> impl Strategy<Value = String> {
    let key = prop_oneof![
        prop::sample::select(vec!["zone", "counter", "density", "level", "time"])
            .prop_map(str::to_string),
        influx_name(),
    ];
    let tags = prop::collection::vec((key.clone(), influx_name()), 0..4);
    let fields = prop::collection::vec((key, influx_value()), 0..4);
    let time = prop_oneof![
        Just(String::new()),
        any::<i64>().prop_map(|t| format!(" {t}")),
        (NOW - 1_000_000..NOW).prop_map(|t| format!(" {}", t * 1000)),
        piece().prop_map(|p| format!(" {p}")),
    ];
    (influx_name(), tags, fields, time, "[ ]{1,2}").prop_map(|(m, tags, fields, time, gap)| {
        let tags: String = tags.iter().map(|(k, v)| format!(",{k}={v}")).collect();
        let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{m}{tags}{gap}{}{time}", fields.join(","))
    })
}

/// CSV records with quoted cells, doubled and stray quotes, delimiters.
fn csv_line() -> impl Strategy<Value = String> {
    let cell = (piece(), 0..4u8).prop_map(|(c, how)| match how {
        0 => c,
        1 => format!("\"{}\"", c.replace('"', "\"\"")),
        2 => format!("\"{c}\""),
        _ => format!("{c}\"{c}"),
    });
    let sep = prop::sample::select(vec![";", ";", ";", ","]);
    prop::collection::vec((cell, sep), 0..10)
        .prop_map(|cells| cells.iter().map(|(c, s)| format!("{c}{s}")).collect())
}

/// Lines close to a sound-level meter's.
fn regex_line() -> impl Strategy<Value = String> {
    let num = prop_oneof!["[0-9]{1,4}", piece(), "-?[0-9]{1,400}(\\.[0-9]{1,400})?"];
    let zone = prop_oneof![Just(String::new()), piece().prop_map(|z| format!("{z} "))];
    let peak = prop_oneof![
        Just(String::new()),
        piece().prop_map(|p| format!(" LCpeak={p} dB"))
    ];
    (
        (0..10_000u32, 0..100u32, 0..100u32),
        (0..100u32, 0..100u32, 0..100u32),
        zone,
        num,
        peak,
    )
        .prop_map(|((y, mo, d), (h, mi, s), zone, db, peak)| {
            format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} {zone}LAeq,1s={db} dB{peak}")
        })
}

/// JSON values near the bridge's shape: the mapped keys at random depths.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        (NOW / 1000 - 5_000..NOW / 1000 + 5_000).prop_map(Value::from),
        prop::sample::select(vec!["wearable", "pitch", "crowd", "generic", "Crowd"])
            .prop_map(Value::from),
        piece().prop_map(Value::from),
    ];
    let key = prop_oneof![
        prop::sample::select(vec![
            "kind", "dev", "id", "t", "hr", "bpm", "imu", "acc", "gps", "d/m", "who", "names",
            "zone", "ball", "n",
        ])
        .prop_map(str::to_string),
        piece(),
    ];
    leaf.prop_recursive(4, 40, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// JSON text near the bridge's, sometimes cut short or with junk after it.
fn json_line() -> impl Strategy<Value = String> {
    (json_value(), any::<prop::sample::Index>(), 0..4u8).prop_map(|(v, at, how)| {
        let text = v.to_string();
        match how {
            0 => {
                let cut = at.index(text.len() + 1);
                let cut = (0..=cut)
                    .rev()
                    .find(|i| text.is_char_boundary(*i))
                    .unwrap_or(0);
                text[..cut].to_string()
            }
            1 => format!("{text} x"),
            _ => text,
        }
    })
}

// ---- inputs that are right in most places and wrong in a few ----

/// `valid` mostly, sometimes any piece of text.
fn mostly(valid: impl Strategy<Value = String> + 'static) -> BoxedStrategy<String> {
    prop_oneof![8 => valid, 1 => piece()].boxed()
}

fn number_text() -> BoxedStrategy<String> {
    prop_oneof![
        (-1000.0..1000.0f64).prop_map(|x| x.to_string()),
        finite().prop_map(|x| x.to_string()),
        (0..400i64).prop_map(|x| x.to_string()),
    ]
    .boxed()
}

fn ms_text() -> impl Strategy<Value = String> {
    (NOW / 1000 - 86_400_000..NOW / 1000 + 600_000).prop_map(|t| t.to_string())
}

/// A hub's line: the mapped keys with mostly good values, shuffled, plus noise.
fn logfmt_near() -> impl Strategy<Value = String> {
    let pairs = (
        mostly(time().prop_map(format_rfc3339)),
        mostly(id()),
        mostly(any::<i32>().prop_map(|n| n.to_string())),
        mostly("[A-Za-z .]{1,20}"),
        (
            mostly(number_text()),
            mostly(number_text()),
            mostly(number_text()),
        ),
        (
            mostly(number_text()),
            mostly(number_text()),
            mostly(any::<i64>().prop_map(|n| n.to_string())),
        ),
        prop::collection::vec((logfmt_key(), piece()), 0..3),
    )
        .prop_map(
            |(ts, vest, player, name, (hr, acc, dist), (temp, bat, seq), extra)| {
                let mut v: Vec<(String, String)> = [
                    ("ts", ts),
                    ("vest", vest),
                    ("player", player),
                    ("name", name),
                    ("hr", hr),
                    ("acc", acc),
                    ("dist", dist),
                    ("temp", temp),
                    ("bat", bat),
                    ("seq", seq),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
                v.extend(extra);
                v
            },
        )
        .prop_shuffle();
    (pairs, 0..3u8).prop_map(|(pairs, how)| {
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut line = String::new();
        logfmt::render(&pairs, &mut line);
        match how {
            0 => line.replacen('=', " ", 1),
            _ => line,
        }
    })
}

/// A counter's point: good names and numbers mostly, random escapes.
fn influx_near() -> impl Strategy<Value = String> {
    (
        mostly(influx_name()),
        mostly(id()),
        mostly(id()),
        prop::collection::vec((influx_name(), influx_name()), 0..2),
        mostly(number_text()),
        mostly(prop_oneof![number_text(), any::<i64>().prop_map(|n| format!("{n}i"))]),
        prop::collection::vec((influx_name(), influx_value()), 0..2),
        mostly((NOW - 86_400_000_000..NOW + 600_000_000).prop_map(|t| (t * 1000).to_string())),
    )
        .prop_map(|(m, zone, counter, tags, density, level, fields, time)| {
            let tags: String = tags.iter().map(|(k, v)| format!(",{k}={v}")).collect();
            let fields: String = fields.iter().map(|(k, v)| format!(",{k}={v}")).collect();
            format!("{m},zone={zone},counter={counter}{tags} density={density},level={level}{fields} {time}")
        })
}

/// A tracker's record in the header's order, cells quoted at random.
fn csv_near() -> impl Strategy<Value = String> {
    let cells = (
        mostly(ms_text()),
        mostly(id()),
        mostly(any::<i32>().prop_map(|n| n.to_string())),
        mostly((0..100i64).prop_map(|n| n.to_string())),
        prop::collection::vec(mostly(number_text()), 4),
    );
    (cells, prop::collection::vec(any::<bool>(), 8)).prop_map(
        |((ts, tracker, delivery, m, nums), quote)| {
            let cells: Vec<String> = [ts, tracker, delivery, m].into_iter().chain(nums).collect();
            let cells: Vec<String> = cells
                .into_iter()
                .zip(quote)
                .map(|(c, q)| {
                    if q {
                        format!("\"{}\"", c.replace('"', "\"\""))
                    } else {
                        c
                    }
                })
                .collect();
            cells.join(";")
        },
    )
}

/// A meter's line with a local time, an optional zone and peak.
fn regex_near() -> impl Strategy<Value = String> {
    let local = time().prop_map(|t| format_rfc3339(t + 19_800_000_000)[..19].replacen('T', " ", 1));
    (
        mostly(local),
        prop::option::of(mostly(id())),
        mostly(number_text()),
        prop::option::of(mostly(number_text())),
    )
        .prop_map(|(ts, zone, db, peak)| {
            let zone = zone.map(|z| format!("{z} ")).unwrap_or_default();
            let peak = peak.map(|p| format!(" LCpeak={p} dB")).unwrap_or_default();
            format!("{ts} {zone}LAeq,1s={db} dB{peak}")
        })
}

/// A bridge's message: the mapped pointers mostly there and mostly right.
fn json_near() -> impl Strategy<Value = String> {
    use serde_json::{json, Value};
    let num = || prop_oneof![8 => (-1000.0..1000.0f64).prop_map(Value::from), 1 => json_value()];
    let text =
        |s: BoxedStrategy<String>| prop_oneof![8 => s.prop_map(Value::from), 1 => json_value()];
    let kind = prop::sample::select(vec!["wearable", "pitch", "crowd", "generic"])
        .prop_map(str::to_string);
    (
        text(kind.boxed()),
        text(id().boxed()),
        prop_oneof![8 => (NOW / 1000 - 86_400_000..NOW / 1000).prop_map(Value::from), 1 => json_value()],
        (num(), num(), num(), num()),
        text("[A-Za-z .]{1,20}".boxed()),
        text(id().boxed()),
        prop_oneof![8 => any::<i32>().prop_map(Value::from), 1 => json_value()],
        prop::collection::vec(any::<bool>(), 9),
    )
        .prop_map(|(kind, id, t, (bpm, acc, dist, acc0), name, zone, n, keep)| {
            let all = [
                ("kind", kind), ("dev", json!({ "id": id })), ("t", t), ("hr", json!({ "bpm": bpm })),
                ("imu", json!({ "acc": [acc0, acc] })), ("gps", json!({ "d/m": dist })),
                ("who", json!({ "names": [name] })), ("zone", zone), ("ball", json!({ "n": n })),
            ];
            let o: serde_json::Map<String, Value> = all
                .into_iter()
                .zip(keep)
                .filter(|(_, k)| *k)
                .map(|((k, v), _)| (k.to_string(), v))
                .collect();
            Value::Object(o).to_string()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_bytes_in_any_format_are_events_or_rejects(
        source in prop::sample::select(SOURCES.to_vec()),
        lines in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..4),
    ) {
        let mut d = decoder();
        for line in &lines {
            check_outcome(&d.decode_mapped(source, line, &maps::context()))?;
        }
    }

    #[test]
    fn arbitrary_text_in_any_format_is_events_or_rejects(
        source in prop::sample::select(SOURCES.to_vec()),
        lines in prop::collection::vec("\\PC{0,200}|[ -~]{0,200}", 1..4),
    ) {
        let mut d = decoder();
        for line in &lines {
            check_outcome(&decode(&mut d, source, line))?;
        }
    }

    #[test]
    fn near_valid_json_is_events_or_rejects(line in prop_oneof![json_line(), json_near()]) {
        check_outcome(&decode(&mut decoder(), "json", &line))?;
    }

    #[test]
    fn near_valid_csv_is_events_or_rejects(header in csv_line(), lines in prop::collection::vec(prop_oneof![csv_line(), csv_near()], 1..4)) {
        let mut d = decoder();
        let real = "timestamp_ms;tracker;delivery;match;speed_kmh;spin_rpm;impact_x;impact_y";
        for line in [real, header.as_str()].into_iter().chain(lines.iter().map(String::as_str)) {
            check_outcome(&decode(&mut d, "csv", line))?;
        }
    }

    #[test]
    fn near_valid_regex_lines_are_events_or_rejects(line in prop_oneof![regex_line(), regex_near()]) {
        check_outcome(&decode(&mut decoder(), "regex", &line))?;
    }

    #[test]
    fn near_valid_logfmt_is_events_or_rejects(line in prop_oneof![logfmt_line(), logfmt_near()]) {
        let mut d = decoder();
        check_outcome(&decode(&mut d, "logfmt", &line))?;
        check_outcome(&decode(&mut d, "generic", &line))?;
    }

    #[test]
    fn near_valid_influx_is_events_or_rejects(line in prop_oneof![influx_line(), influx_near()]) {
        let mut d = decoder();
        check_outcome(&decode(&mut d, "influx", &line))?;
        check_outcome(&decode(&mut d, "influx_scaled", &line))?;
    }
}

// ---- round trips: an event written in a format decodes to itself ----

fn id() -> impl Strategy<Value = String> {
    "[A-Za-z0-9._:-]{1,64}"
}

/// A finite value, of any size.
fn finite() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("finite", |x| x.is_finite())
}

/// A plausible event time: from 2020 to now.
fn time() -> impl Strategy<Value = Micros> {
    1_577_836_800_000_000..=NOW
}

fn one_event(out: Decoded) -> Result<Event, TestCaseError> {
    match out {
        Decoded::Event(e) => Ok(e),
        other => Err(TestCaseError::fail(format!("not one event: {other:?}"))),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_wearable_event_written_as_logfmt_reads_back(
        device_id in id(),
        event_time in time(),
        player_id in any::<i64>(),
        name in prop::option::of("\\PC{1,64}".prop_filter("not blank", |n| !n.trim().is_empty())),
        hr in finite(), acc in prop::option::of(finite()), dist in finite(),
        noise in "\\PC{0,20}",
    ) {
        let mut values = vec![(0u8, hr)];
        values.extend(acc.map(|a| (1u8, a)));
        values.push((2, dist));
        let event = Event {
            sensor: SensorKind::Wearable,
            device_id: device_id.into(),
            event_time,
            match_id: 0,
            event_id: None,
            identity: Identity::Wearable { player_id, player_name: name.map(Into::into) },
            values: Readings::from_slice(&values).unwrap(),
        };
        let text: Vec<(String, String)> = vec![
            ("ts".into(), format_rfc3339(event.event_time)),
            ("hub".into(), "wh-1".into()),
            ("vest".into(), event.device_id.to_string()),
            ("player".into(), player_id.to_string()),
            ("note".into(), noise),
        ]
        .into_iter()
        .chain(event.player_name().map(|n| ("name".to_string(), n.to_string())))
        .chain(event.values.iter().map(|&(i, x)| (event.metric_name(i).to_string(), x.to_string())))
        .map(|(k, v)| (k.replace("heart_rate", "hr").replace("acceleration", "acc").replace("running_dist", "dist"), v))
        .collect();
        let pairs: Vec<(&str, &str)> = text.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut line = String::new();
        logfmt::render(&pairs, &mut line);
        prop_assert_eq!(one_event(decode(&mut decoder(), "logfmt", &line))?, event, "{}", line);
    }

    #[test]
    fn a_generic_logfmt_line_with_two_metrics_reads_back_as_two_events(
        device_id in id(), event_time in time(), seq in any::<i64>(),
        temp in finite(), bat in finite(),
    ) {
        let mut line = String::new();
        let (t, s, x, y) = (format_rfc3339(event_time), seq.to_string(), temp.to_string(), bat.to_string());
        logfmt::render(&[("ts", &t), ("vest", &device_id), ("seq", &s), ("temp", &x), ("bat", &y)], &mut line);
        let Decoded::Events(events) = decode(&mut decoder(), "generic", &line) else {
            return Err(TestCaseError::fail(format!("not two events: {line}")));
        };
        let mut got: Vec<(&str, f64)> = events.iter().map(|e| (e.metric_name(0), e.values[0].1)).collect();
        got.sort_by(|a, b| a.0.cmp(b.0));
        prop_assert_eq!(got, vec![("battery_pct", bat), ("hub.temp_c", temp)]);
        for e in &events {
            prop_assert_eq!((e.device_id.as_ref(), e.event_time, e.event_id), (device_id.as_str(), event_time, Some(seq)));
        }
    }

    #[test]
    fn a_pitch_event_written_as_csv_reads_back(
        device_id in id(),
        event_ms in 1_577_836_800_000i64..=NOW / 1000,
        delivery_id in prop::option::of(any::<i64>()),
        match_id in 0..=i64::MAX,
        values in prop::collection::vec(prop::option::of(finite()), 4),
        note in "\\PC{0,20}",
    ) {
        prop_assume!(values.iter().any(Option::is_some));
        let event = Event {
            sensor: SensorKind::Pitch,
            device_id: device_id.into(),
            event_time: event_ms * 1000,
            match_id,
            event_id: None,
            identity: Identity::Pitch { delivery_id },
            values: values.iter().enumerate().filter_map(|(i, x)| x.map(|x| (i as u8, x))).collect(),
        };
        // The columns in another order than the map's, a note with quotes
        // and delimiters among them.
        let header = ["note", "impact_y", "tracker", "speed_kmh", "timestamp_ms", "spin_rpm", "delivery", "impact_x", "match"];
        // values[i] is the kind's metric i: impact_x, impact_y, ball_speed, spin_rate.
        let cell = |i: usize| values[i].map(|x| x.to_string()).unwrap_or_default();
        let row = [
            note,
            cell(1),
            event.device_id.to_string(),
            cell(2),
            event_ms.to_string(),
            cell(3),
            delivery_id.map(|d| d.to_string()).unwrap_or_default(),
            cell(0),
            match_id.to_string(),
        ];
        let (mut head, mut line) = (String::new(), String::new());
        csv::render(&header, b';', &mut head);
        csv::render(&row.iter().map(String::as_str).collect::<Vec<_>>(), b';', &mut line);
        let mut d = decoder();
        prop_assert_eq!(decode(&mut d, "csv", &head), Decoded::Skip);
        prop_assert_eq!(one_event(decode(&mut d, "csv", &line))?, event, "{}", line);
    }

    #[test]
    fn a_crowd_event_written_as_line_protocol_reads_back(
        device_id in id(), zone in id(), event_time in time(),
        measurement in "\\PC{1,12}".prop_filter("a measurement", |m| !m.starts_with('#') && !m.ends_with('\\')),
        density in prop::option::of(finite()), level in prop::option::of(finite()),
        note_key in "[a-z ,=\\\\]{1,8}".prop_filter("a key", |k| !k.trim_end_matches('\\').is_empty() && !["density", "level"].contains(&k.as_str())),
        note in "\\PC{0,20}",
    ) {
        prop_assume!(density.is_some() || level.is_some());
        let event = Event {
            sensor: SensorKind::Crowd,
            device_id: device_id.into(),
            event_time,
            match_id: 0,
            event_id: None,
            identity: Identity::Crowd { zone_id: zone.clone().into() },
            values: [(1u8, density), (0u8, level)].into_iter().filter_map(|(i, x)| x.map(|x| (i, x))).rev().collect(),
        };
        let mut fields = vec![(Cow::Owned(note_key), FieldValue::Str(Cow::Owned(note)))];
        fields.extend(density.map(|x| (Cow::Borrowed("density"), FieldValue::Float(x))));
        fields.extend(level.map(|x| (Cow::Borrowed("level"), FieldValue::Float(x))));
        let point = Point {
            measurement: Cow::Owned(measurement),
            tags: vec![(Cow::Borrowed("zone"), Cow::Borrowed(zone.as_str())), (Cow::Borrowed("counter"), Cow::Borrowed(event.device_id.as_ref()))],
            fields,
            timestamp: Some(event_time * 1000),
        };
        let mut line = String::new();
        influx::render(&point, &mut line);
        prop_assert_eq!(one_event(decode(&mut decoder(), "influx", &line))?, event, "{}", line);
    }
}

#[test]
fn influx_scale_and_offset_apply_to_each_field() {
    let line = "north-stand,counter=cc-12 density=30,level=60i 1764444600000000000";
    let e = one_event(decode(&mut decoder(), "influx_scaled", line)).unwrap();
    assert_eq!(
        e.identity,
        Identity::Crowd {
            zone_id: "north-stand".into()
        }
    );
    assert_eq!(e.values[..], [(0, 60.0 * 1.5 - 3.0), (1, 30.0 * 0.1 + 0.5)]);
}

#[test]
fn the_meter_line_reads_with_and_without_its_optional_capture() {
    let mut d = decoder();
    let e = one_event(decode(
        &mut d,
        "regex",
        "2025-11-30 01:00:00 z1 LAeq,1s=84.3 dB",
    ))
    .unwrap();
    assert_eq!((e.event_time, e.values.to_vec()), (NOW, vec![(0, 84.3)]));
    let line = "2025-11-30 01:00:01 z1 LAeq,1s=84.3 dB LCpeak=112 dB";
    let e = one_event(decode(&mut d, "regex", line)).unwrap();
    assert_eq!(
        (e.event_time, e.values.to_vec()),
        (NOW + 1_000_000, vec![(0, 84.3), (1, 112.0 * 0.01)])
    );
}

// ---- bounds on patterns ----

/// `pitchside check-config` on a venue with one regex serial source.
fn check_config_with_pattern(pattern: &str) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    let text = format!(
        "[venue]\nid = \"props\"\ngateway_id = \"gw-1\"\n\
         [output]\nstore = \"file://{d}/store\"\nspool_dir = \"{d}/spool\"\n\
         [metrics]\nlisten = \"\"\n\
         [[sources.serial]]\nname = \"meter\"\npath = \"{d}/tty\"\nformat = \"regex\"\npattern = '{pattern}'\n\
         [sources.serial.map]\nsensor = \"crowd\"\ndevice_id = {{ value = \"m1\" }}\nzone_id = {{ value = \"z1\" }}\nevent_time = \"arrival\"\n\
         [sources.serial.map.metrics]\ndecibels = {{ field = \"db\" }}\n"
    );
    let cfg = dir.path().join("venue.toml");
    std::fs::write(&cfg, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pitchside"))
        .args(["check-config", "--config"])
        .arg(&cfg)
        .env("HOME", dir.path())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_pattern_longer_than_1024_bytes_is_refused_by_check_config_naming_its_key() {
    let (ok, err) = check_config_with_pattern(&format!("(?P<db>[0-9.]+){}", "x?".repeat(510)));
    assert!(!ok, "accepted a pattern of 1035 bytes:\n{err}");
    assert!(
        err.contains("sources.serial[0].pattern") && err.contains("at most 1024"),
        "{err}"
    );
}

#[test]
fn a_pattern_too_big_to_compile_is_refused_by_check_config_naming_its_key() {
    let (ok, err) = check_config_with_pattern(r"(?P<db>\w{1000}{1000})");
    assert!(
        !ok,
        "accepted a pattern whose compiled size is beyond the limit:\n{err}"
    );
    assert!(
        err.contains("sources.serial[0].pattern") && err.contains("size limit"),
        "{err}"
    );
}

#[test]
fn a_pattern_of_1024_bytes_that_compiles_is_accepted() {
    let pattern = format!("(?P<db>[0-9.]+){}", "x?".repeat(504));
    let pattern = format!("{pattern}{}", "y".repeat(1024 - pattern.len()));
    assert_eq!(pattern.len(), 1024);
    let (ok, err) = check_config_with_pattern(&pattern);
    assert!(ok, "{err}");
}

/// How many of `n` inputs from `lines` decode to events in `source`: the
/// near-valid inputs must reach the map, not only the parsers' errors.
fn events_among<S: Strategy<Value = String>>(lines: S, source: &str, n: usize) -> usize {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut d = decoder();
    let head = "timestamp_ms;tracker;delivery;match;speed_kmh;spin_rpm;impact_x;impact_y";
    decode(&mut d, "csv", head);
    (0..n)
        .filter(|_| {
            let line = lines.new_tree(&mut runner).unwrap().current();
            matches!(
                decode(&mut d, source, &line),
                Decoded::Event(_) | Decoded::Events(_)
            )
        })
        .count()
}

#[test]
fn the_near_valid_inputs_decode_to_events_often_enough_to_test_the_maps() {
    let counts = [
        ("json", events_among(json_near(), "json", 2000)),
        ("csv", events_among(csv_near(), "csv", 2000)),
        ("regex", events_among(regex_near(), "regex", 2000)),
        ("logfmt", events_among(logfmt_near(), "logfmt", 2000)),
        ("generic", events_among(logfmt_near(), "generic", 2000)),
        ("influx", events_among(influx_near(), "influx", 2000)),
    ];
    eprintln!("events among 2000 near-valid inputs: {counts:?}");
    assert!(counts.iter().all(|(_, n)| *n > 0), "{counts:?}");
}
