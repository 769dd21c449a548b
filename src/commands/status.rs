//! `pitchside status`: the running gateway's state for a person on the
//! device, read from its metrics endpoint (`/metrics` and `/healthz`).

use crate::commands::console::{emit, error_text, print_error, still_open};
use crate::config;
use crate::telemetry::parse_metrics;
use crate::util::time::{format_rfc3339, now_micros};
use anyhow::Context as _;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::io::{IsTerminal, Read, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `pitchside status`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatusArgs {
    /// Read metrics.listen from this config (default: the address below).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Metrics address of the gateway.
    #[arg(long, default_value = "127.0.0.1:9898")]
    pub addr: String,
    /// Redraw the report every --interval until Ctrl-C (on a pipe: one
    /// block per interval, separated by a blank line).
    #[arg(long)]
    pub watch: bool,
    /// How often --watch refreshes (`500ms`, `2s`, `1m`).
    #[arg(long, default_value = "2s", value_parser = interval, requires = "watch")]
    pub interval: Duration,
}

/// `--interval`: a duration of at least 100 ms.
fn interval(s: &str) -> Result<Duration, String> {
    let us = crate::util::units::parse_duration(s)?;
    if us < 100_000 {
        return Err(format!("{s:?} is too short: at least 100ms"));
    }
    Ok(Duration::from_micros(us as u64))
}

/// Prints the report; the exit code says healthy, unhealthy or unreachable
/// (a config without `metrics.listen` counts as unreachable).
pub fn execute(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let addr = match &args.config {
        Some(p) => match listen_address(p) {
            Ok(a) => a,
            Err(e) => {
                print_error(error_text(&e));
                return Ok(ExitCode::from(EXIT_UNREACHABLE));
            }
        },
        None => args.addr,
    };
    if args.watch {
        return watch(&addr, args.interval);
    }
    match report(&addr) {
        Ok(r) => {
            emit(&r.text)?;
            Ok(ExitCode::from(r.exit_code()))
        }
        Err(e) => {
            print_error(e);
            Ok(ExitCode::from(EXIT_UNREACHABLE))
        }
    }
}

/// `status --watch`: the report every `every` until Ctrl-C or until the
/// reader closes stdout. On a terminal the screen is cleared and redrawn;
/// on a pipe the blocks follow each other, a blank line between. A gateway
/// that cannot be reached is shown as such, and asked again next time.
fn watch(addr: &str, every: Duration) -> anyhow::Result<ExitCode> {
    let tty = std::io::stdout().is_terminal();
    loop {
        let body = match report(addr) {
            Ok(r) => r.text,
            Err(e) => format!("error: {e}\n"),
        };
        let head = format!(
            "pitchside status  {addr}  {}  (every {:?}; Ctrl-C to stop)\n",
            format_rfc3339(now_micros()),
            every
        );
        let frame = if tty {
            // Cursor home, clear the screen: a redraw without scrolling.
            format!("\x1b[H\x1b[2J{head}{body}")
        } else {
            format!("{head}{body}\n")
        };
        let mut out = std::io::stdout().lock();
        if !still_open(out.write_all(frame.as_bytes()).and_then(|()| out.flush()))? {
            return Ok(ExitCode::SUCCESS);
        }
        drop(out);
        std::thread::sleep(every);
    }
}

/// `metrics.listen` of the config file at `path`.
fn listen_address(path: &std::path::Path) -> anyhow::Result<String> {
    config::load(path)?
        .metrics
        .listen
        .context("metrics.listen is \"\" in that config: the gateway exposes no status")
}

/// Why the gateway could not be asked.
#[derive(Debug, thiserror::Error)]
#[error("cannot reach the gateway at {addr}: {source} (is pitchside running, and is metrics.listen set?)")]
pub struct StatusError {
    addr: String,
    source: std::io::Error,
}

fn get(addr: &str, path: &str) -> Result<(u16, String), StatusError> {
    let err = |source| StatusError {
        addr: addr.to_string(),
        source,
    };
    let mut s = TcpStream::connect(addr).map_err(err)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(err)?;
    s.set_write_timeout(Some(Duration::from_secs(5)))
        .map_err(err)?;
    // The whole request in one write.
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    std::io::Write::write_all(&mut s, request.as_bytes()).map_err(err)?;
    let mut text = String::new();
    s.read_to_string(&mut text).map_err(err)?;
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    if code == 0 {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "no HTTP answer (is that address really pitchside's metrics.listen?)",
        )));
    }
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((code, body))
}

/// Exit code of `pitchside status` when the gateway answered and is healthy.
pub const EXIT_HEALTHY: u8 = 0;
/// Exit code when the gateway answered but `/healthz` says it is unhealthy.
pub const EXIT_UNHEALTHY: u8 = 1;
/// Exit code when the gateway could not be asked (not running, wrong address, no answer).
pub const EXIT_UNREACHABLE: u8 = 2;

/// What `pitchside status` found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The text for a person.
    pub text: String,
    /// Whether `/healthz` answered 200.
    pub healthy: bool,
}

impl Report {
    /// [`EXIT_HEALTHY`] or [`EXIT_UNHEALTHY`].
    pub fn exit_code(&self) -> u8 {
        if self.healthy {
            EXIT_HEALTHY
        } else {
            EXIT_UNHEALTHY
        }
    }
}

/// The status report for the gateway whose metrics listen on `addr`.
pub fn report(addr: &str) -> Result<Report, StatusError> {
    let (_, metrics) = get(addr, "/metrics")?;
    let (code, health) = get(addr, "/healthz")?;
    let m = parse_metrics(&metrics);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "health      {}",
        if code == 200 {
            "ok".to_string()
        } else {
            health.trim().to_string()
        }
    );
    o.push_str(&input_lines(&m));
    o.push_str(&output_lines(&m));
    o.push_str(&venue_lines(&m));
    o.push_str(&data_path_lines(&m));
    Ok(Report {
        text: o,
        healthy: code == 200,
    })
}

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
fn input_lines(m: &BTreeMap<String, f64>) -> String {
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
fn output_lines(m: &BTreeMap<String, f64>) -> String {
    let v = |k: &str| value(m, k);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "spool       {} files, {:.1} MiB waiting; {} evicted",
        v("pitchside_spool_files"),
        v("pitchside_spool_bytes") / 1048576.0,
        v("pitchside_spool_evictions_total")
    );
    let _ = writeln!(
        o,
        "upload      {} files, {} failures; last {}",
        v("pitchside_uploaded_files_total"),
        v("pitchside_upload_failures_total"),
        when(v("pitchside_last_upload_seconds"))
    );
    o
}

/// Device health and the console (SPEC §10); the console line only when
/// it is on (it then reports its requests).
fn venue_lines(m: &BTreeMap<String, f64>) -> String {
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
fn data_path_lines(m: &BTreeMap<String, f64>) -> String {
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
        let _ = writeln!(
            o,
            "clock       unsynchronised: event times not checked against limits.max_future ({} events so far)",
            m.get("pitchside_clock_unsynced_events_total").copied().unwrap_or(0.0)
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_and_an_unsynchronised_clock_are_shown() {
        let m = parse_metrics(
            "pitchside_unknown_fields_total{sensor=\"wearable\",field=\"accel\"} 3\n\
             pitchside_clock_synchronized 0\npitchside_clock_unsynced_events_total 12\n",
        );
        let text = data_path_lines(&m);
        assert!(text.contains("wearable.accel 3"), "{text}");
        assert!(
            text.contains("unsynchronised") && text.contains("12 events"),
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
             pitchside_console_unauthorized_total 2\n",
        );
        let text = venue_lines(&m);
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
