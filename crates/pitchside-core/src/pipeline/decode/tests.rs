use super::*;

fn dec() -> Decoder {
    Decoder::new(
        4096,
        vec![MetricRange {
            sensor: SensorKind::Wearable,
            metric: "heart_rate".into(),
            min: 20.0,
            max: 250.0,
        }],
        None,
    )
}

fn reason(line: &str) -> RejectReason {
    reason_with(line, None)
}

fn reason_with(line: &str, hint: Option<SensorKind>) -> RejectReason {
    match dec().decode_bytes(line.as_bytes(), hint, 0) {
        Decoded::Reject(r) => r.reason,
        other => panic!("{line} was not rejected: {other:?}"),
    }
}

fn event(line: &str) -> Event<'static> {
    match dec().decode_bytes(line.as_bytes(), None, 0) {
        Decoded::Event(e) => e.into_owned(),
        other => panic!("{line} was not accepted: {other:?}"),
    }
}

const W: &str =
    r#""sensor":"wearable","device_id":"w-1","event_time":"2026-11-29T19:30:00Z","player_id":7"#;

#[test]
fn wearable_event_decodes_with_all_fields() {
    let e = event(&format!(
        r#"{{{W},"match_id":3,"event_id":99,"player_name":"Ana","heart_rate":141.5,"acceleration":null,"extra":[1,{{"x":2}}]}}"#
    ));
    assert_eq!(e.sensor, SensorKind::Wearable);
    assert_eq!(e.device_id, "w-1");
    assert_eq!(e.match_id, 3);
    assert_eq!(e.event_id, Some(99));
    assert_eq!(e.player_name(), Some("Ana"));
    assert_eq!(e.values[..], [(0, 141.5)]);
    assert_eq!(
        e.event_time,
        crate::util::time::parse_rfc3339("2026-11-29T19:30:00Z").unwrap()
    );
}

#[test]
fn epoch_millis_and_event_ts_alias_are_accepted() {
    let a =
        event(r#"{"sensor":"pitch","device_id":"p","event_ts":1764444600250,"ball_speed":140}"#);
    assert_eq!(a.event_time, 1_764_444_600_250_000);
    let b =
        event(r#"{"sensor":"pitch","device_id":"p","event_time":1000,"event_ts":5,"spin_rate":1}"#);
    assert_eq!(b.event_time, 1_000_000, "event_time wins over event_ts");
}

#[test]
fn generic_event_names_its_metric() {
    let e = event(
        r#"{"sensor":"generic","device_id":"g","event_time":0,"metric":"temp.c","value":21}"#,
    );
    assert_eq!(e.metric_name(0), "temp.c");
}

#[test]
fn source_kind_fills_a_missing_sensor() {
    let d = dec();
    let line = br#"{"device_id":"c","event_time":0,"zone_id":"z1","decibels":90}"#;
    assert!(matches!(
        d.decode_bytes(line, Some(SensorKind::Crowd), 0),
        Decoded::Event(_)
    ));
}

#[test]
fn empty_and_whitespace_lines_are_skipped_not_rejected() {
    assert_eq!(dec().decode_bytes(b"", None, 0), Decoded::Skip);
    assert_eq!(dec().decode_bytes(b" \t \r", None, 0), Decoded::Skip);
    // Unicode white space (no-break and ideographic spaces) as `str::trim` sees it.
    assert_eq!(
        dec().decode_bytes("\u{a0}\u{3000} ".as_bytes(), None, 0),
        Decoded::Skip
    );
    assert_eq!(reason(" x"), RejectReason::InvalidJson);
    assert_eq!(reason("\u{a0}{}"), RejectReason::InvalidJson);
}

#[test]
fn too_large_line_is_rejected() {
    let long = format!(r#"{{{W},"heart_rate":1,"pad":"{}"}}"#, "x".repeat(5000));
    assert_eq!(reason(&long), RejectReason::TooLarge);
}

#[test]
fn invalid_utf8_is_rejected() {
    let d = dec();
    let r = d.decode_bytes(b"{\"device_id\":\"\xff\"}", None, 0);
    assert!(matches!(
        r,
        Decoded::Reject(Reject {
            reason: RejectReason::InvalidUtf8,
            ..
        })
    ));
}

/// The SIMD check (lines of 64 bytes and more) and std's agree on whether a
/// line is UTF-8 and where it stops being so, for bad bytes at every
/// position of a long line: a stray continuation byte, a cut sequence, an
/// overlong form, a surrogate, and valid multi-byte text around them.
#[test]
fn utf8_check_agrees_with_std_on_long_lines() {
    let d = dec();
    let base = format!(
        r#"{{{W},"heart_rate":1,"player_name":"Zoë Ødegård 球员 🏃","pad":"{}"}}"#,
        "x".repeat(100)
    );
    for bad in [
        &b"\x80"[..],
        b"\xc3",
        b"\xe2\x82",
        b"\xc0\xaf",
        b"\xed\xa0\x80",
        b"\xff",
    ] {
        for at in 0..base.len() {
            let mut line = base.as_bytes().to_vec();
            line.splice(at..at, bad.iter().copied());
            let want = std::str::from_utf8(&line)
                .err()
                .map(|e| format!("invalid UTF-8 at byte {}", e.valid_up_to()));
            let got = match d.decode_bytes(&line, None, 0) {
                Decoded::Reject(r) if r.reason == RejectReason::InvalidUtf8 => Some(r.detail),
                _ => None,
            };
            assert_eq!(got, want, "{bad:?} at {at}");
        }
    }
}

#[test]
fn invalid_json_is_rejected() {
    assert_eq!(reason("{\"sensor\":"), RejectReason::InvalidJson);
    assert_eq!(reason("hello"), RejectReason::InvalidJson);
}

#[test]
fn non_object_is_rejected() {
    assert_eq!(reason("[1,2]"), RejectReason::NotAnObject);
    assert_eq!(reason("\"x\""), RejectReason::NotAnObject);
}

#[test]
fn missing_required_fields_are_rejected() {
    assert_eq!(
        reason(r#"{"device_id":"a","event_time":0,"value":1}"#),
        RejectReason::MissingField
    );
    assert_eq!(
        reason(r#"{"sensor":"pitch","event_time":0,"ball_speed":1}"#),
        RejectReason::MissingField
    );
    assert_eq!(
        reason(r#"{"sensor":"pitch","device_id":"a","ball_speed":1}"#),
        RejectReason::MissingField
    );
    assert_eq!(
        reason(
            r#"{"sensor":"wearable","device_id":"a","event_time":0,"player_id":null,"heart_rate":60}"#
        ),
        RejectReason::MissingField
    );
    assert_eq!(
        reason(r#"{"sensor":"crowd","device_id":"a","event_time":0,"decibels":1}"#),
        RejectReason::MissingField
    );
    assert_eq!(
        reason(r#"{"sensor":"generic","device_id":"a","event_time":0,"value":1}"#),
        RejectReason::MissingField
    );
}

#[test]
fn fields_of_the_wrong_shape_are_invalid() {
    assert_eq!(
        reason(&format!(r#"{{{W},"heart_rate":"72"}}"#)),
        RejectReason::InvalidField
    );
    assert_eq!(
        reason(r#"{"sensor":"pitch","device_id":"a b","event_time":0,"ball_speed":1}"#),
        RejectReason::InvalidField
    );
    assert_eq!(
        reason(
            r#"{"sensor":"pitch","device_id":"a","event_time":0,"match_id":1.5,"ball_speed":1}"#
        ),
        RejectReason::InvalidField
    );
    let long_name = "n".repeat(65);
    assert_eq!(
        reason(&format!(
            r#"{{{W},"player_name":"{long_name}","heart_rate":60}}"#
        )),
        RejectReason::InvalidField
    );
    assert_eq!(
        reason(r#"{"sensor":7,"device_id":"a","event_time":0,"value":1}"#),
        RejectReason::InvalidField
    );
}

#[test]
fn non_finite_numbers_are_rejected() {
    assert_eq!(
        reason(&format!(r#"{{{W},"heart_rate":NaN}}"#)),
        RejectReason::NonFinite
    );
    assert_eq!(
        reason(&format!(r#"{{{W},"heart_rate":-Infinity}}"#)),
        RejectReason::NonFinite
    );
}

#[test]
fn out_of_range_numbers_are_rejected() {
    assert_eq!(
        reason(&format!(r#"{{{W},"acceleration":1e999}}"#)),
        RejectReason::OutOfRange
    );
    assert_eq!(
        reason(&format!(r#"{{{W},"heart_rate":300}}"#)),
        RejectReason::OutOfRange,
        "configured range"
    );
    assert_eq!(
        reason(r#"{"sensor":"pitch","device_id":"a","event_time":0,"match_id":-1,"ball_speed":1}"#),
        RejectReason::OutOfRange
    );
    assert_eq!(
        reason(
            r#"{"sensor":"pitch","device_id":"a","event_time":0,"event_id":99999999999999999999,"ball_speed":1}"#
        ),
        RejectReason::OutOfRange
    );
}

#[test]
fn unknown_sensor_is_rejected() {
    assert_eq!(
        reason(r#"{"sensor":"weather","device_id":"a","event_time":0,"value":1}"#),
        RejectReason::UnknownSensor
    );
}

#[test]
fn sensor_differing_from_source_kind_is_rejected() {
    let line = format!(r#"{{{W},"heart_rate":60}}"#);
    assert_eq!(
        reason_with(&line, Some(SensorKind::Pitch)),
        RejectReason::SensorMismatch
    );
}

#[test]
fn event_without_metrics_is_rejected() {
    assert_eq!(reason(&format!(r#"{{{W}}}"#)), RejectReason::NoMetrics);
    assert_eq!(
        reason(&format!(r#"{{{W},"heart_rate":null}}"#)),
        RejectReason::NoMetrics
    );
}

#[test]
fn bad_times_are_rejected() {
    assert_eq!(
        reason(r#"{"sensor":"pitch","device_id":"a","event_time":"yesterday","ball_speed":1}"#),
        RejectReason::InvalidTime
    );
    assert_eq!(
        reason(r#"{"sensor":"pitch","device_id":"a","event_time":1.5,"ball_speed":1}"#),
        RejectReason::InvalidTime
    );
    assert_eq!(
        reason(
            r#"{"sensor":"pitch","device_id":"a","event_time":9223372036854775807,"ball_speed":1}"#
        ),
        RejectReason::InvalidTime
    );
}

#[test]
fn live_sources_reject_implausible_times() {
    let clock = crate::util::time::parse_rfc3339("2026-11-29T19:30:00Z").unwrap();
    let d = Decoder::new(4096, vec![], Some(300_000_000));
    let r = |t: &str| match d.decode_bytes(
        format!(r#"{{"sensor":"pitch","device_id":"a","event_time":"{t}","ball_speed":1}}"#)
            .as_bytes(),
        None,
        clock,
    ) {
        Decoded::Reject(r) => Some(r.reason),
        _ => None,
    };
    assert_eq!(
        r("1970-01-01T00:00:10Z"),
        Some(RejectReason::ImplausibleTime)
    );
    assert_eq!(
        r("2026-11-29T19:36:00Z"),
        Some(RejectReason::ImplausibleTime)
    );
    assert_eq!(r("2026-11-29T19:34:00Z"), None);
}

#[test]
fn unknown_numeric_fields_of_an_accepted_event_are_reported_by_name() {
    let line = format!(
        r#"{{{W},"heart_rate":80,"accel":1.5,"body_temp":36.6,"note":"x","fw":{{"v":1}},"raw":NaN,"zone_id":3}}"#
    );
    let mut seen = Vec::new();
    let r = dec().decode_bytes_with(line.as_bytes(), None, 0, &mut |k, dev, name| {
        seen.push(format!("{k}/{dev}/{name}"))
    });
    assert!(matches!(r, Decoded::Event(_)), "{r:?}");
    assert_eq!(
        seen,
        [
            "wearable/w-1/accel",
            "wearable/w-1/body_temp",
            "wearable/w-1/raw",
            "wearable/w-1/zone_id"
        ]
    );
    let mut seen = 0;
    let rejected = format!(r#"{{{W},"accel":1.5}}"#);
    dec().decode_bytes_with(rejected.as_bytes(), None, 0, &mut |_, _, _| seen += 1);
    assert_eq!(seen, 0, "a rejected event (no metric) reports nothing");
}

#[test]
fn an_untrusted_clock_suspends_max_future_but_not_the_2020_floor() {
    let clock = crate::util::time::parse_rfc3339("2026-11-29T19:30:00Z").unwrap();
    let mut d = Decoder::new(4096, vec![], Some(300_000_000));
    d.set_clock_trusted(false);
    let line = |t: &str| {
        format!(r#"{{"sensor":"pitch","device_id":"a","event_time":"{t}","ball_speed":1}}"#)
    };
    assert!(matches!(
        d.decode_bytes(line("2027-06-01T00:00:00Z").as_bytes(), None, clock),
        Decoded::Event(_)
    ));
    assert!(matches!(
        d.decode_bytes(line("2019-12-31T23:59:59Z").as_bytes(), None, clock),
        Decoded::Reject(Reject {
            reason: RejectReason::ImplausibleTime,
            ..
        })
    ));
}

/// `n` lines of the venue mix (`bench --mix venue`), without their newlines.
fn venue_lines(n: usize) -> Vec<String> {
    let mut mix = crate::util::venue_mix::VenueMix::new(50, 3);
    (0..n)
        .map(|_| {
            let mut s = String::new();
            mix.line(&mut s);
            s.trim_end().to_string()
        })
        .collect()
}

/// A key spelled with an escape takes the string reader's path, not the
/// known-key table's: the two must decode every line alike, unknown
/// numeric fields included.
#[test]
fn keys_spelled_with_escapes_decode_as_the_plain_keys_do() {
    let escape_keys = |line: &str| {
        let parts: Vec<&str> = line.split("\":").collect();
        let mut out = String::new();
        for (k, part) in parts.iter().enumerate() {
            if k > 0 {
                out.push_str("\":");
            }
            // A key is the text after the last quote of a part that `":` follows.
            match part.rfind('"') {
                Some(q) if k + 1 < parts.len() => {
                    let first = part[q + 1..].chars().next().unwrap_or('x');
                    out.push_str(&part[..=q]);
                    out.push_str(&format!("\\u{:04x}", first as u32));
                    out.push_str(&part[q + 1 + first.len_utf8()..]);
                }
                _ => out.push_str(part),
            }
        }
        out
    };
    let mut lines = venue_lines(400);
    lines.push(format!(
        r#"{{{W},"heart_rate":80,"accel":1.5,"decibels":3,"accel":2}}"#
    ));
    lines.push(format!(r#"{{{W},"heart_rate":"80"}}"#));
    lines.push(format!(r#"{{{W},"heart_rate":400,"sensor":"crowd"}}"#));
    lines.push(r#"{"sensor":"generic","device_id":"g","event_time":1,"metric":"m"}"#.into());
    let decode = |line: &str| {
        let mut unknown = Vec::new();
        let d = dec().decode_bytes_with(line.as_bytes(), None, 0, &mut |k, dev, name| {
            unknown.push(format!("{k}/{dev}/{name}"))
        });
        (format!("{d:?}").replace("Owned(", "Borrowed("), unknown)
    };
    for line in &lines {
        let escaped = escape_keys(line);
        assert_ne!(&escaped, line);
        assert_eq!(decode(&escaped), decode(line), "{escaped}");
    }
}

/// A string value spelled with an escape is kept aside from the slots (the
/// one value the reader allocates for): every string field of every kind
/// decodes as its plain spelling does, wrong types and bad values alike.
#[test]
fn string_values_spelled_with_escapes_decode_as_the_plain_ones_do() {
    // `":"` starts every string value of these lines; escape its first character.
    let escape_values = |line: &str| {
        let mut parts = line.split("\":\"");
        let mut out = parts.next().unwrap_or_default().to_string();
        for part in parts {
            let first = part.chars().next().unwrap_or('x');
            out.push_str(&format!("\":\"\\u{:04x}", first as u32));
            out.push_str(&part[first.len_utf8()..]);
        }
        out
    };
    let mut lines = venue_lines(400);
    lines.push(format!(r#"{{{W},"heart_rate":80,"player_name":"Zoë"}}"#));
    lines.push(
        r#"{"sensor":"crowd","device_id":"m","event_time":1,"zone_id":"a b","decibels":3}"#.into(),
    );
    lines.push(
        r#"{"sensor":"generic","device_id":"g","event_time":"x","metric":"m","value":1}"#.into(),
    );
    lines.push(r#"{"sensor":"bogus","device_id":"g","event_time":1,"value":1}"#.into());
    let decode = |line: &str| format!("{:?}", dec().decode_bytes(line.as_bytes(), None, 0));
    for line in &lines {
        let escaped = escape_values(line);
        assert_ne!(&escaped, line);
        assert_eq!(decode(&escaped), decode(line), "{escaped}");
    }
}
