//! The lines of the status report, each from the gateway's metrics:
//! sources and input, spool and uploads, devices and console, and the
//! data path's caveats.

use crate::util::time::{format_rfc3339, now_micros};
use std::collections::BTreeMap;
use std::fmt::Write;

/// A metric's value; 0 when the gateway does not report it.
fn value(m: &BTreeMap<String, f64>, name: &str) -> f64 {
    m.get(name).copied().unwrap_or(0.0)
}

/// A time in seconds since the epoch, and how long ago; 0 is `never`.
fn when(secs: f64) -> String {
    if secs > 0.0 {
        let t = (secs * 1e6) as i64;
        format!(
            "{} ({} s ago)",
            format_rfc3339(t),
            (now_micros() - t) / 1_000_000
        )
    } else {
        "never".to_string()
    }
}

/// Sources, input, the detector and watermarks.
pub(super) fn input_lines(m: &BTreeMap<String, f64>) -> String {
    let v = |k: &str| value(m, k);
    let mut o = String::new();
    let down: Vec<String> = m
        .iter()
        .filter_map(|(k, secs)| {
            let name = k
                .strip_prefix("pitchside_source_down_seconds{source=\"")?
                .strip_suffix("\"}")?;
            Some(format!("{name} for {secs:.0} s"))
        })
        .collect();
    let _ = writeln!(
        o,
        "sources     {} down{}; serial disconnects {}, MQTT disconnects {}",
        v("pitchside_sources_down"),
        if down.is_empty() {
            String::new()
        } else {
            format!(" ({})", down.join(", "))
        },
        v("pitchside_serial_disconnects_total"),
        v("pitchside_mqtt_disconnects_total")
    );
    let _ = writeln!(
        o,
        "input       {:.0} events/s; {} inputs, {} rejected, {} late, {} duplicates",
        v("pitchside_input_rows_per_second"),
        v("pitchside_input_rows_total"),
        m.iter()
            .filter(|(k, _)| k.starts_with("pitchside_rejected_rows_total"))
            .map(|(_, x)| x)
            .sum::<f64>(),
        v("pitchside_late_rows_total"),
        v("pitchside_duplicate_rows_total")
    );
    let _ = writeln!(
        o,
        "detector    {} keys, {:.1} MiB, {} evictions; {} alerts, {} fatigue alerts",
        v("pitchside_state_keys"),
        v("pitchside_state_bytes") / 1048576.0,
        v("pitchside_evictions_total"),
        v("pitchside_alerts_total"),
        v("pitchside_fatigue_alerts_total")
    );
    let held = v("pitchside_notify_suppressed_total");
    if held > 0.0 {
        let _ = writeln!(
            o,
            "notify      {held} alerts not notified within alerts.notify_cooldown (all in the tables)"
        );
    }
    for k in ["wearable", "pitch", "crowd", "generic"] {
        if let Some(w) = m.get(&format!("pitchside_watermark_seconds{{sensor=\"{k}\"}}")) {
            let _ = writeln!(o, "watermark   {k:<9} {}", when(*w));
        }
    }
    o
}

/// The spool and the uploads.
pub(super) fn output_lines(m: &BTreeMap<String, f64>) -> String {
    let v = |k: &str| value(m, k);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "spool       {} files, {:.1} MiB waiting; {} evicted",
        v("pitchside_spool_files"),
        v("pitchside_spool_bytes") / 1048576.0,
        v("pitchside_spool_evictions_total")
    );
    let stuck = v("pitchside_upload_stuck_files");
    let _ = writeln!(
        o,
        "upload      {} files, {} failures; last {}{}",
        v("pitchside_uploaded_files_total"),
        v("pitchside_upload_failures_total"),
        when(v("pitchside_last_upload_seconds")),
        if stuck > 0.0 {
            format!("; {stuck} refused by the store, retried on the side (see the log)")
        } else {
            String::new()
        }
    );
    o
}

/// Device health and the console (SPEC §10), player load (SPEC §11); the
/// console line only when it is on (it then reports its requests).
pub(super) fn venue_lines(m: &BTreeMap<String, f64>) -> String {
    let v = |k: &str| value(m, k);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "devices     {} tracked, {} silent; {} went silent, {} came back, {} forgotten{}",
        v("pitchside_devices"),
        v("pitchside_devices_silent"),
        v("pitchside_device_events_total{event=\"silent\"}"),
        v("pitchside_device_events_total{event=\"back\"}"),
        v("pitchside_device_evictions_total"),
        if v("pitchside_health_paused") > 0.0 {
            " (health PAUSED: no device is reported silent)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        o,
        "load        {} players; {} load alerts, {} forgotten, {} not on the roster, {} GPS jumps",
        v("pitchside_load_players"),
        v("pitchside_load_alerts_total"),
        v("pitchside_load_evictions_total"),
        v("pitchside_load_unrostered_players_total"),
        v("pitchside_load_speed_glitches_total")
    );
    if m.contains_key("pitchside_console_requests_total") {
        let _ = writeln!(
            o,
            "console     {} open, {} dropped (fell behind), {} refused (no token), {} requests",
            v("pitchside_console_clients"),
            v("pitchside_console_clients_dropped_total"),
            v("pitchside_console_unauthorized_total"),
            v("pitchside_console_requests_total")
        );
    }
    o
}

/// Lines about input that was accepted with less than it carried: unknown
/// numeric fields (misspelled metrics?) and a clock not trusted to judge event times.
pub(super) fn data_path_lines(m: &BTreeMap<String, f64>) -> String {
    let mut o = String::new();
    let unknown: Vec<String> = m
        .iter()
        .filter_map(|(k, n)| {
            let labels = k.strip_prefix("pitchside_unknown_fields_total{sensor=\"")?;
            let (sensor, field) = labels.strip_suffix("\"}")?.split_once("\",field=\"")?;
            Some(format!("{sensor}.{field} {n}"))
        })
        .collect();
    if !unknown.is_empty() {
        let _ = writeln!(
            o,
            "unknown     numeric fields ignored (misspelled metrics?): {}",
            unknown.join(", ")
        );
    }
    if m.get("pitchside_clock_synchronized") == Some(&0.0) {
        let _ =
            writeln!(
            o,
            "clock       unsynchronised: event times judged against the time two devices agree on \
             ({} events accepted, {} refused as implausible_time)",
            m.get("pitchside_clock_unsynced_events_total").copied().unwrap_or(0.0),
            m.get("pitchside_clock_unvouched_events_total").copied().unwrap_or(0.0)
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::parse_metrics;

    #[test]
    fn unknown_fields_and_an_unsynchronised_clock_are_shown() {
        let m = parse_metrics(
            "pitchside_unknown_fields_total{sensor=\"wearable\",field=\"accel\"} 3\n\
             pitchside_clock_synchronized 0\npitchside_clock_unsynced_events_total 12\n\
             pitchside_clock_unvouched_events_total 1\n",
        );
        let text = data_path_lines(&m);
        assert!(text.contains("wearable.accel 3"), "{text}");
        assert!(
            text.contains("unsynchronised") && text.contains("12 events accepted, 1 refused"),
            "{text}"
        );
        let quiet = parse_metrics("pitchside_clock_synchronized 1\n");
        assert_eq!(data_path_lines(&quiet), "");
    }

    #[test]
    fn device_health_and_the_console_are_shown() {
        let m = parse_metrics(
            "pitchside_devices 29\npitchside_devices_silent 2\n\
             pitchside_device_events_total{event=\"silent\"} 3\n\
             pitchside_device_events_total{event=\"back\"} 1\npitchside_health_paused 1\n\
             pitchside_console_clients 4\npitchside_console_requests_total 80\n\
             pitchside_console_unauthorized_total 2\n\
             pitchside_load_players 22\npitchside_load_alerts_total 5\n\
             pitchside_load_unrostered_players_total 1\npitchside_load_speed_glitches_total 3\n",
        );
        let text = venue_lines(&m);
        assert!(
            text.contains(
                "22 players; 5 load alerts, 0 forgotten, 1 not on the roster, 3 GPS jumps"
            ),
            "{text}"
        );
        assert!(
            text.contains(
                "29 tracked, 2 silent; 3 went silent, 1 came back, 0 forgotten (health PAUSED"
            ),
            "{text}"
        );
        assert!(
            text.contains("4 open, 0 dropped (fell behind), 2 refused"),
            "{text}"
        );
        let off = parse_metrics("pitchside_devices 0\n");
        assert!(!venue_lines(&off).contains("console"));
    }
}
