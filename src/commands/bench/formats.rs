//! The bench's input in each input format: the same generic reading (a
//! device, a time in epoch ms, one `temp` value) as SPEC §1 JSON or as a
//! device would send it, and the source block whose map reads it back.

use std::fmt::Write as _;

/// The formats `bench --format` takes.
pub const FORMATS: [&str; 6] = ["pitchside", "json", "csv", "regex", "logfmt", "influx"];

/// Appends one input line (with its newline) in `format`.
pub fn line(format: &str, out: &mut String, dev: u64, ms: i64, v: f64) {
    let _ = match format {
        "json" => writeln!(out, "{{\"dev\":\"dev-{dev}\",\"ts\":{ms},\"m\":{{\"temp\":{v:.4}}},\"rssi\":-61}}"),
        "csv" => writeln!(out, "dev-{dev},{ms},{v:.4}"),
        "regex" => writeln!(out, "dev-{dev} {ms} temp={v:.4}"),
        "logfmt" => writeln!(out, "dev=dev-{dev} ts={ms} temp={v:.4}"),
        "influx" => writeln!(out, "bench,dev=dev-{dev} temp={v:.4} {ms}000000"),
        _ => writeln!(
            out,
            "{{\"sensor\":\"generic\",\"device_id\":\"dev-{dev}\",\"event_time\":{ms},\"match_id\":1,\"metric\":\"temp\",\"value\":{v:.4}}}"
        ),
    };
}

/// The `[[sources.serial]]` block named `bench` that decodes `format`
/// (none for `pitchside`, which replays as §1 JSON).
pub fn source(format: &str) -> Option<String> {
    let (extra, device, time, temp) = match format {
        "json" => (
            "",
            "/dev",
            "{ field = \"/ts\", format = \"epoch_ms\" }",
            "/m/temp",
        ),
        "csv" => (
            "columns = [\"dev\", \"ts\", \"temp\"]",
            "dev",
            "{ field = \"ts\", format = \"epoch_ms\" }",
            "temp",
        ),
        "regex" => (
            r"pattern = '^(?P<dev>\S+) (?P<ts>\d+) temp=(?P<temp>\S+)$'",
            "dev",
            "{ field = \"ts\", format = \"epoch_ms\" }",
            "temp",
        ),
        "logfmt" => (
            "",
            "dev",
            "{ field = \"ts\", format = \"epoch_ms\" }",
            "temp",
        ),
        "influx" => (
            "",
            "dev",
            "{ field = \"time\", format = \"epoch_ns\" }",
            "temp",
        ),
        _ => return None,
    };
    Some(format!(
        "[[sources.serial]]\nname = \"bench\"\npath = \"/dev/null\"\nformat = \"{format}\"\n{extra}\n\
         [sources.serial.map]\nsensor = \"generic\"\ndevice_id = {{ field = \"{device}\" }}\nevent_time = {time}\n\
         match_id = {{ value = 1 }}\n[sources.serial.map.metrics]\ntemp = {{ field = \"{temp}\" }}\n"
    ))
}
