//! The line `alerts --follow` prints for a console event, for a person:
//!
//! ```text
//! 12:03:07 ANOMALY wearable band-07 heart_rate=190 z=4.1 player 7 R. Sharma
//! 12:04:00 FATIGUE player 7 R. Sharma heart rate 171.0 (baseline 150.0)
//! 12:03:05 DEVICE silent band-03 (player 3) last seen 12:02:50
//! 12:05:10 ACK wembley/wearable/band-07/heart_rate/… by Dr Khan: note
//! ```
//!
//! Times are the gateway's, UTC (hours, minutes, seconds of the RFC 3339
//! text it sends): the reading's time for an anomaly, the window's end for
//! fatigue, when the event was raised for a device, when the ack was made.

use serde_json::Value;

/// The line for an event of type `event` with JSON `data`; `None` for
/// types that are not printed (`state`, `health`, unknown ones).
pub fn line(event: &str, data: &Value) -> Option<String> {
    let s = |k: &str| data.get(k).and_then(Value::as_str).unwrap_or("?");
    let n = |k: &str| data.get(k).and_then(Value::as_f64);
    Some(match event {
        "alert" => format!(
            "{} ANOMALY {} {} {}={} z={}{}",
            clock(s("event_time")),
            s("sensor"),
            s("device_id"),
            s("metric"),
            n("value").map_or("?".into(), |v| v.to_string()),
            n("z_score").map_or("?".into(), |z| format!("{z:.1}")),
            who(data)
        ),
        "fatigue" => format!(
            "{} FATIGUE{} heart rate {} (baseline {})",
            clock(s("window_end")),
            who(data),
            n("heart_rate_mean").map_or("?".into(), |v| format!("{v:.1}")),
            n("baseline_mean").map_or("?".into(), |v| format!("{v:.1}"))
        ),
        "device" => format!(
            "{} DEVICE {} {}{} last seen {}",
            clock(s("at")),
            s("event"),
            s("device_id"),
            whose(data),
            clock(s("last_seen"))
        ),
        "ack" => format!(
            "{} ACK {} by {}{}",
            clock(s("acked_at")),
            s("alert_id"),
            s("by"),
            match data.get("note").and_then(Value::as_str) {
                Some(note) if !note.is_empty() => format!(": {note}"),
                _ => String::new(),
            }
        ),
        _ => return None,
    })
}

/// `HH:MM:SS` of an RFC 3339 time (`2026-12-01T12:03:07.250000Z`); the
/// text itself when it is not one.
fn clock(t: &str) -> &str {
    t.split_once('T')
        .and_then(|(_, time)| time.get(..8))
        .unwrap_or(t)
}

/// ` player 7 R. Sharma`, ` zone north`, ` delivery 12`: who or where, as
/// far as the alert says; empty when it says nothing.
fn who(data: &Value) -> String {
    let mut out = String::new();
    if let Some(p) = data.get("player_id").and_then(Value::as_i64) {
        out.push_str(&format!(" player {p}"));
        if let Some(name) = data.get("player_name").and_then(Value::as_str) {
            out.push_str(&format!(" {name}"));
        }
    }
    if let Some(z) = data.get("zone_id").and_then(Value::as_str) {
        out.push_str(&format!(" zone {z}"));
    }
    if let Some(d) = data.get("delivery_id").and_then(Value::as_i64) {
        out.push_str(&format!(" delivery {d}"));
    }
    out
}

/// ` (player 3)` or ` (zone north)` for a device event; empty otherwise.
fn whose(data: &Value) -> String {
    let who = who(data);
    if who.is_empty() {
        who
    } else {
        format!(" ({})", who.trim_start())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_anomaly_line_names_sensor_device_reading_and_player() {
        let data = json!({"kind":"anomaly","sensor":"wearable","device_id":"band-07",
            "metric":"heart_rate","value":190.0,"z_score":4.1234,
            "event_time":"2026-12-01T12:03:07.250000Z","player_id":7,
            "player_name":"R. Sharma","zone_id":null,"delivery_id":null});
        assert_eq!(
            line("alert", &data).unwrap(),
            "12:03:07 ANOMALY wearable band-07 heart_rate=190 z=4.1 player 7 R. Sharma"
        );
    }

    #[test]
    fn a_crowd_anomaly_names_its_zone_and_a_pitch_one_its_delivery() {
        let crowd = json!({"sensor":"crowd","device_id":"slm-1","metric":"decibels",
            "value":112.5,"z_score":-5.0,"event_time":"2026-12-01T12:00:00Z",
            "player_id":null,"zone_id":"north"});
        assert_eq!(
            line("alert", &crowd).unwrap(),
            "12:00:00 ANOMALY crowd slm-1 decibels=112.5 z=-5.0 zone north"
        );
        let pitch = json!({"sensor":"pitch","device_id":"radar","metric":"ball_speed",
            "value":161.0,"z_score":6.0,"event_time":"2026-12-01T12:00:00Z","delivery_id":12});
        assert!(line("alert", &pitch)
            .unwrap()
            .ends_with("z=6.0 delivery 12"));
    }

    #[test]
    fn fatigue_device_and_ack_lines() {
        let f = json!({"kind":"fatigue","player_id":7,"player_name":"R. Sharma",
            "window_end":"2026-12-01T12:04:00.000000Z","heart_rate_mean":171.04,"baseline_mean":150.0});
        assert_eq!(
            line("fatigue", &f).unwrap(),
            "12:04:00 FATIGUE player 7 R. Sharma heart rate 171.0 (baseline 150.0)"
        );
        let d = json!({"sensor":"wearable","device_id":"band-03","player_id":3,"zone_id":null,
            "event":"silent","last_seen":"2026-12-01T12:02:50.100000Z","at":"2026-12-01T12:03:05.000000Z"});
        assert_eq!(
            line("device", &d).unwrap(),
            "12:03:05 DEVICE silent band-03 (player 3) last seen 12:02:50"
        );
        let a = json!({"alert_id":"v/wearable/band-07/heart_rate/1","by":"Dr Khan",
            "note":"seen","acked_at":"2026-12-01T12:05:10Z"});
        assert_eq!(
            line("ack", &a).unwrap(),
            "12:05:10 ACK v/wearable/band-07/heart_rate/1 by Dr Khan: seen"
        );
        let no_note =
            json!({"alert_id":"x","by":"A","note":null,"acked_at":"2026-12-01T12:05:10Z"});
        assert_eq!(line("ack", &no_note).unwrap(), "12:05:10 ACK x by A");
    }

    #[test]
    fn state_and_health_events_and_unknown_types_print_nothing() {
        for t in ["state", "health", "message", "future-kind"] {
            assert_eq!(line(t, &json!({})), None);
        }
    }

    #[test]
    fn missing_fields_show_a_question_mark_instead_of_failing() {
        assert_eq!(line("alert", &json!({})).unwrap(), "? ANOMALY ? ? ?=? z=?");
    }
}
