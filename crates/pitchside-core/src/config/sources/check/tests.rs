use crate::config::sources::format::{Entry, SensorFrom, Syntax, TimeFormat, TimeFrom};

const HEAD: &str = "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/o\"\nspool_dir = \"/tmp/s\"\n";

fn load(extra: &str) -> Result<crate::config::Config, String> {
    crate::config::parse(&format!("{HEAD}{extra}"), "test")
        .map_err(|e| e.to_string())?
        .validate()
        .map_err(|e| e.to_string())
}

fn problems(extra: &str) -> String {
    load(extra).expect_err("the config must be refused")
}

const METER: &str = r#"
[[sources.serial]]
path = "/dev/ttyUSB0"
format = "regex"
pattern = '^(?P<ts>\S+ \S+) LAeq,1s=(?P<db>[0-9.]+) dB$'
[sources.serial.map]
sensor = "crowd"
device_id = { value = "slm-1" }
zone_id = { value = "north" }
event_time = { field = "ts", format = "%Y-%m-%d %H:%M:%S", utc_offset = "+05:30" }
[sources.serial.map.metrics]
decibels = { field = "db" }
"#;

#[test]
fn a_regex_profile_becomes_a_checked_format_under_its_default_name() {
    let c = load(METER).unwrap();
    let src = c.inputs.get("serial:/dev/ttyUSB0").unwrap();
    let f = src.format.as_ref().unwrap();
    assert!(matches!(f.syntax, Syntax::Regex(_)));
    assert!(matches!(
        f.map.sensor,
        SensorFrom::Fixed(crate::model::SensorKind::Crowd)
    ));
    assert!(matches!(
        &f.map.event_time,
        TimeFrom::Entry(Entry::Field(r), TimeFormat::Pattern(_, 19_800)) if r.text == "ts" && r.index == Some(1)
    ));
    assert_eq!(f.map.metrics[0].name, "decibels");
}

#[test]
fn a_capture_the_pattern_lacks_is_named_with_the_captures_it_has() {
    let p = problems(&METER.replace(r#"{ field = "db" }"#, r#"{ field = "dba" }"#));
    assert!(
        p.contains("sources.serial[0].map.metrics.decibels.field: capture \"dba\" is not in the pattern (its named captures are ts, db)"),
        "{p}"
    );
}

#[test]
fn a_metric_the_kind_does_not_have_names_the_kind_and_its_metrics() {
    let p = problems(&METER.replace("decibels = {", "decibel = {"));
    assert!(
        p.contains("sources.serial[0].map.metrics.decibel: \"decibel\" is not a crowd metric (those are decibels, density)"),
        "{p}"
    );
}

#[test]
fn bad_pointers_columns_and_time_formats_are_named_by_key() {
    let json = r#"
[[sources.mqtt]]
broker = { host = "h" }
[[sources.mqtt.subscriptions]]
topic = "ble/hr/+/+"
format = "json"
[sources.mqtt.subscriptions.map]
sensor = "wearable"
device_id = { topic_level = 7 }
player_id = { topic_level = 2 }
event_time = { field = "/t", format = "%Q" }
[sources.mqtt.subscriptions.map.metrics]
heart_rate = { field = "hr/bpm" }
"#;
    let p = problems(json);
    for want in [
        "sources.mqtt[0].subscriptions[0].map.device_id.topic_level: 7 is past the last level of \"ble/hr/+/+\"",
        "sources.mqtt[0].subscriptions[0].map.metrics.heart_rate.field: JSON pointer \"hr/bpm\" must start with '/'",
        "sources.mqtt[0].subscriptions[0].map.event_time.format: \"%Q\" is not rfc3339",
    ] {
        assert!(p.contains(want), "missing {want:?} in {p}");
    }
    let csv = r#"
[[sources.serial]]
path = "/dev/x"
format = "csv"
columns = ["t", "dev", "speed"]
[sources.serial.map]
sensor = "pitch"
device_id = { field = "device" }
event_time = { field = "t", format = "epoch_ms" }
[sources.serial.map.metrics]
ball_speed = { field = "speed", scale = 1.609344 }
"#;
    let p = problems(csv);
    assert!(p.contains("sources.serial[0].map.device_id.field: \"device\" is not one of the columns (t, dev, speed)"), "{p}");
}

#[test]
fn required_parts_of_a_map_and_of_its_kind_are_asked_for() {
    let p = problems("[[sources.serial]]\npath = \"/dev/x\"\nformat = \"logfmt\"\n[sources.serial.map]\nsensor = \"wearable\"\n[sources.serial.map.metrics]\nhr = { field = \"hr\" }\n");
    for want in [
        "sources.serial[0].map.device_id: required",
        "sources.serial[0].map.event_time: required",
        "sources.serial[0].map.player_id: a wearable event needs player_id",
        "sources.serial[0].map.metrics.hr: \"hr\" is not a wearable metric",
    ] {
        assert!(p.contains(want), "missing {want:?} in {p}");
    }
    let p = problems("[[sources.serial]]\npath = \"/dev/x\"\nformat = \"regex\"\n");
    assert!(
        p.contains("sources.serial[0].pattern: format \"regex\" needs a pattern"),
        "{p}"
    );
    let p = problems("[[sources.serial]]\npath = \"/dev/x\"\nformat = \"logfmt\"\n");
    assert!(
        p.contains("sources.serial[0].map: format \"logfmt\" needs a map"),
        "{p}"
    );
}

#[test]
fn keys_of_another_format_and_a_map_without_a_format_are_refused() {
    let p = problems("[[sources.serial]]\npath = \"/dev/x\"\npattern = \"x\"\n[sources.serial.map]\nsensor = \"crowd\"\n");
    assert!(
        p.contains("sources.serial[0].pattern: only for a device format"),
        "{p}"
    );
    assert!(
        p.contains("sources.serial[0].map: only for a device format"),
        "{p}"
    );
    let p = problems(&METER.replace(
        "format = \"regex\"",
        "format = \"regex\"\ncolumns = [\"a\"]",
    ));
    assert!(
        p.contains("sources.serial[0].columns: only for format \"csv\", not \"regex\""),
        "{p}"
    );
    let p = problems(&METER.replace("format = \"regex\"", "format = \"xml\""));
    assert!(p.contains("sources.serial[0].format: \"xml\" must be pitchside, json, csv, regex, logfmt or influx"), "{p}");
}

#[test]
fn entries_take_exactly_one_source_and_only_their_own_keys() {
    let p = problems(&METER.replace(
        r#"zone_id = { value = "north" }"#,
        r#"zone_id = { value = "north", field = "z" }"#,
    ));
    assert!(
        p.contains("sources.serial[0].map.zone_id: exactly one of field, topic_level, value"),
        "{p}"
    );
    let p = problems(&METER.replace(
        r#"decibels = { field = "db" }"#,
        r#"decibels = { field = "db", utc_offset = "+01:00" }"#,
    ));
    assert!(
        p.contains(
            "sources.serial[0].map.metrics.decibels: format and utc_offset are for event_time"
        ),
        "{p}"
    );
    let p = problems(&METER.replace(
        r#"device_id = { value = "slm-1" }"#,
        r#"device_id = "slm-1""#,
    ));
    assert!(
        p.contains("sources.serial[0].map.device_id: write { field = \"slm-1\" }"),
        "{p}"
    );
    let p = problems(&METER.replace(
        "/dev/ttyUSB0\"",
        "/dev/ttyUSB0\"\n[sources.serial.map.nonsense]",
    ));
    assert!(
        p.contains("sources.serial[0].map.nonsense: unknown key"),
        "{p}"
    );
}

#[test]
fn topic_levels_are_for_mqtt_and_names_are_unique() {
    let p = problems(&METER.replace(
        r#"device_id = { value = "slm-1" }"#,
        r#"device_id = { topic_level = 1 }"#,
    ));
    assert!(
        p.contains("sources.serial[0].map.device_id.topic_level: only on an MQTT subscription"),
        "{p}"
    );
    let twice =
        format!("{METER}\n[[sources.serial]]\npath = \"/dev/y\"\nname = \"serial:/dev/ttyUSB0\"\n");
    let p = problems(&twice);
    assert!(
        p.contains("sources.serial[1].name: \"serial:/dev/ttyUSB0\" is the name of another source"),
        "{p}"
    );
}

#[test]
fn oversized_and_unnamed_patterns_are_refused() {
    let long = format!("(?P<a>{})", "a".repeat(1100));
    let p = problems(&METER.replace(
        r#"'^(?P<ts>\S+ \S+) LAeq,1s=(?P<db>[0-9.]+) dB$'"#,
        &format!("'{long}'"),
    ));
    assert!(
        p.contains("sources.serial[0].pattern: 1107 bytes, at most 1024"),
        "{p}"
    );
    let p = problems(&METER.replace(
        r#"'^(?P<ts>\S+ \S+) LAeq,1s=(?P<db>[0-9.]+) dB$'"#,
        r"'(?P<a>\w{1000}){1000}'",
    ));
    assert!(
        p.contains("sources.serial[0].pattern: not a valid regular expression"),
        "{p}"
    );
    let p = problems(&METER.replace(
        r#"'^(?P<ts>\S+ \S+) LAeq,1s=(?P<db>[0-9.]+) dB$'"#,
        "'[0-9]+'",
    ));
    assert!(
        p.contains("sources.serial[0].pattern: has no named capture"),
        "{p}"
    );
}

#[test]
fn patterns_may_use_unicode_classes() {
    let c = load(&METER.replace(r"(?P<ts>\S+ \S+)", r"(?P<ts>\S+ \S+)(?:\s\p{L}+)?")).unwrap();
    assert!(c
        .inputs
        .get("serial:/dev/ttyUSB0")
        .unwrap()
        .format
        .is_some());
}
