//! Prometheus text exposition at `metrics.listen` (`GET /metrics`), plus
//! `GET /healthz`. A tiny HTTP/1.1 responder: one request per connection.

use crate::model::{RejectReason, SensorKind};
use crate::pipeline::PipelineCounters;
use std::fmt::Write;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The figures the endpoint serves, refreshed by the pipeline every progress
/// interval (never on the per-event path).
#[derive(Debug, Clone, Default)]
pub struct MetricsSnapshot {
    /// Cumulative pipeline counters.
    pub counters: PipelineCounters,
    /// The latest progress row.
    pub progress: crate::tables::ProgressRow,
    /// Cumulative uploaded files.
    pub uploaded_files_total: u64,
    /// Cumulative upload failures.
    pub upload_failures_total: u64,
    /// Cumulative files written to the spool.
    pub files_written_total: u64,
    /// Cumulative spool files deleted without upload (spool ceiling).
    pub spool_evictions_total: u64,
    /// Checkpoints that could not be written or were unusable at start-up.
    pub checkpoint_failures_total: u64,
    /// Rows lost to failed spool writes, per table (`TableId::ALL` order).
    pub lost_rows_total: [u64; crate::tables::TableId::ALL.len()],
    /// Spool files that vanished before upload.
    pub vanished_files_total: u64,
    /// Serial and MQTT counters (live atomics).
    pub sources: Arc<crate::sources::SourceStats>,
    /// Alert-output counters (live atomics).
    pub alerts: Arc<crate::sinks::alerts::AlertStats>,
    /// Since when (µs) spool writes have been failing; 0 when they work.
    pub spool_failing_since: i64,
    /// How long a source may be down or the spool unwritable before
    /// `/healthz` fails, µs.
    pub health_grace: i64,
    /// Since when (µs) the input journal has been off; 0 when it works.
    pub journal_down_since: i64,
    /// Inputs processed while the journal was off (not crash-safe).
    pub unjournaled_inputs_total: u64,
    /// Journal open, write, fsync, rotation and start-up read failures.
    pub journal_failures_total: u64,
}

/// `Ok` when healthy, else why not: a source down, or the spool
/// unwritable, for longer than `health_grace`.
pub fn health(s: &MetricsSnapshot, now: i64) -> Result<(), String> {
    let mut why = Vec::new();
    // Each source down past the grace, by name (`serial:/dev/ttyUSB0`, `mqtt:host:1883`).
    for (name, down) in s.sources.down_sources(now) {
        if down > s.health_grace {
            why.push(format!("source {name} down for {} s", down / 1_000_000));
        }
    }
    if s.spool_failing_since > 0 && now - s.spool_failing_since > s.health_grace {
        why.push(format!(
            "spool unwritable for {} s",
            (now - s.spool_failing_since) / 1_000_000
        ));
    }
    if s.journal_down_since > 0 && now - s.journal_down_since > s.health_grace {
        why.push(format!(
            "input journal off for {} s (a crash would lose inputs; free space on output.spool_dir's disk)",
            (now - s.journal_down_since) / 1_000_000
        ));
    }
    if why.is_empty() {
        Ok(())
    } else {
        Err(why.join("; "))
    }
}

/// Renders the snapshot as Prometheus text.
pub fn render(s: &MetricsSnapshot) -> String {
    let mut o = String::with_capacity(4096);
    let c = &s.counters;
    let p = &s.progress;
    let _ = writeln!(
        o,
        "# HELP pitchside_build_info Build information.\n# TYPE pitchside_build_info gauge\npitchside_build_info{{version=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION")
    );
    let counter = |o: &mut String, name: &str, help: &str, v: u64| {
        let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}");
    };
    let gauge = |o: &mut String, name: &str, help: &str, v: f64| {
        let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
    };
    counter(
        &mut o,
        "pitchside_input_rows_total",
        "Inputs received (events and rejects).",
        c.input_rows,
    );
    counter(
        &mut o,
        "pitchside_readings_total",
        "Accepted non-duplicate readings.",
        c.readings,
    );
    let _ = writeln!(o, "# HELP pitchside_rejected_rows_total Rejected inputs by reason.\n# TYPE pitchside_rejected_rows_total counter");
    for r in RejectReason::ALL {
        let _ = writeln!(
            o,
            "pitchside_rejected_rows_total{{reason=\"{}\"}} {}",
            r.as_str(),
            c.rejected[r as usize]
        );
    }
    counter(
        &mut o,
        "pitchside_late_rows_total",
        "Readings that arrived after their window closed.",
        c.late_rows,
    );
    counter(
        &mut o,
        "pitchside_duplicate_rows_total",
        "Readings ignored as duplicates.",
        c.duplicate_rows,
    );
    counter(
        &mut o,
        "pitchside_duplicate_conflicts_total",
        "Duplicates with another value than the reading kept (also in duplicate_rows).",
        c.duplicate_conflicts,
    );
    unknown_fields(&mut o, &c.unknown_fields);
    counter(
        &mut o,
        "pitchside_clock_unsynced_events_total",
        "Events accepted without the limits.max_future check: the clock was unsynchronised.",
        c.clock_unsynced_events,
    );
    gauge(
        &mut o,
        "pitchside_clock_synchronized",
        "1 while the kernel reports the system clock synchronised (limits.max_future is checked).",
        if c.clock_unsynchronized { 0.0 } else { 1.0 },
    );
    counter(
        &mut o,
        "pitchside_alerts_total",
        "z-score alerts.",
        c.alerts,
    );
    counter(
        &mut o,
        "pitchside_fatigue_alerts_total",
        "Fatigue alerts.",
        c.fatigue_alerts,
    );
    counter(
        &mut o,
        "pitchside_evictions_total",
        "Detector keys evicted at detector.max_keys.",
        c.evictions,
    );
    counter(
        &mut o,
        "pitchside_window_drops_total",
        "Events not windowed at windows.max_open_groups.",
        c.window_drops,
    );
    counter(
        &mut o,
        "pitchside_files_written_total",
        "Parquet files written to the spool.",
        s.files_written_total,
    );
    counter(
        &mut o,
        "pitchside_spool_evictions_total",
        "Spool files deleted without upload to stay inside output.spool_max_bytes / min_free_disk.",
        s.spool_evictions_total,
    );
    let _ = writeln!(o, "# HELP pitchside_lost_rows_total Rows that could not be written to the spool (disk full or failing) and are lost, by table.\n# TYPE pitchside_lost_rows_total counter");
    for (t, n) in crate::tables::TableId::ALL.iter().zip(s.lost_rows_total) {
        let _ = writeln!(o, "pitchside_lost_rows_total{{table=\"{}\"}} {n}", t.name());
    }
    counter(
        &mut o,
        "pitchside_spool_vanished_files_total",
        "Spool files gone from disk before upload (removed by hand); their rows are lost.",
        s.vanished_files_total,
    );
    counter(
        &mut o,
        "pitchside_checkpoint_failures_total",
        "Checkpoints that could not be written, or were found unusable at start-up (set aside; the gateway started fresh).",
        s.checkpoint_failures_total,
    );
    gauge(
        &mut o,
        "pitchside_sources_down",
        "Serial and MQTT sources not connected now.",
        crate::sources::SourceStats::get(&s.sources.sources_down) as f64,
    );
    let _ = writeln!(o, "# HELP pitchside_source_down_seconds How long each source that is down now has been down.\n# TYPE pitchside_source_down_seconds gauge");
    for (name, down) in s.sources.down_sources(crate::util::time::now_micros()) {
        let _ = writeln!(
            o,
            "pitchside_source_down_seconds{{source=\"{}\"}} {}",
            name.replace('\\', "\\\\").replace('"', "\\\""),
            down as f64 / 1e6
        );
    }
    counter(
        &mut o,
        "pitchside_uploaded_files_total",
        "Files uploaded to the store.",
        s.uploaded_files_total,
    );
    counter(
        &mut o,
        "pitchside_upload_failures_total",
        "Failed upload attempts.",
        s.upload_failures_total,
    );
    gauge(
        &mut o,
        "pitchside_journal_enabled",
        "1 while inputs are journaled (crash-safe), 0 while the journal is off.",
        if s.journal_down_since == 0 { 1.0 } else { 0.0 },
    );
    counter(
        &mut o,
        "pitchside_unjournaled_inputs_total",
        "Inputs processed while the journal was off (a crash would have lost them).",
        s.unjournaled_inputs_total,
    );
    counter(
        &mut o,
        "pitchside_journal_failures_total",
        "Journal open, write, fsync, rotation and start-up read failures.",
        s.journal_failures_total,
    );
    sources(&mut o, &s.sources, &s.alerts);
    gauge(
        &mut o,
        "pitchside_input_rows_per_second",
        "Input rate over the last progress interval.",
        p.input_rows_per_second,
    );
    gauge(
        &mut o,
        "pitchside_state_keys",
        "Live detector keys.",
        p.state_keys as f64,
    );
    gauge(
        &mut o,
        "pitchside_state_bytes",
        "Detector state bytes.",
        p.state_bytes as f64,
    );
    gauge(
        &mut o,
        "pitchside_open_windows",
        "Open window cells.",
        p.open_windows as f64,
    );
    gauge(
        &mut o,
        "pitchside_spool_files",
        "Files waiting in the spool.",
        p.spool_files as f64,
    );
    gauge(
        &mut o,
        "pitchside_spool_bytes",
        "Bytes waiting in the spool.",
        p.spool_bytes as f64,
    );
    let _ = writeln!(o, "# HELP pitchside_watermark_seconds Watermark per sensor kind (epoch seconds).\n# TYPE pitchside_watermark_seconds gauge");
    for (k, w) in SensorKind::ALL.iter().zip(p.watermarks) {
        if let Some(w) = w {
            let _ = writeln!(
                o,
                "pitchside_watermark_seconds{{sensor=\"{k}\"}} {}",
                w as f64 / 1e6
            );
        }
    }
    if let Some(t) = p.last_upload_at {
        gauge(
            &mut o,
            "pitchside_last_upload_seconds",
            "Time of the last successful upload (epoch seconds).",
            t as f64 / 1e6,
        );
    }
    o
}

fn unknown_fields(o: &mut String, u: &crate::pipeline::decode::unknown::UnknownFields) {
    let _ = writeln!(
        o,
        "# HELP pitchside_unknown_fields_total Accepted events with a numeric field their sensor kind does not know (ignored), by field; names beyond the first 64 count as field=\"other\".\n# TYPE pitchside_unknown_fields_total counter"
    );
    for (sensor, name, n) in u.iter() {
        let _ = writeln!(
            o,
            "pitchside_unknown_fields_total{{sensor=\"{sensor}\",field=\"{}\"}} {n}",
            label_value(name)
        );
    }
}

/// A label value with `\`, `"` and newlines escaped (Prometheus text format).
fn label_value(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn sources(o: &mut String, s: &crate::sources::SourceStats, a: &crate::sinks::alerts::AlertStats) {
    use crate::sinks::alerts::AlertStats as A;
    use crate::sources::SourceStats as S;
    let figures = [
        (
            "pitchside_serial_disconnects_total",
            "counter",
            "Serial devices that went away.",
            S::get(&s.serial_disconnects),
        ),
        (
            "pitchside_serial_dropped_lines_total",
            "counter",
            "Serial lines dropped while the pipeline was behind.",
            S::get(&s.serial_dropped),
        ),
        (
            "pitchside_mqtt_messages_total",
            "counter",
            "MQTT messages received.",
            S::get(&s.mqtt_messages),
        ),
        (
            "pitchside_mqtt_disconnects_total",
            "counter",
            "MQTT source connections lost.",
            S::get(&s.mqtt_disconnects),
        ),
        (
            "pitchside_mqtt_dropped_messages_total",
            "counter",
            "MQTT messages dropped while the pipeline was behind.",
            S::get(&s.mqtt_dropped),
        ),
        (
            "pitchside_alerts_published_total",
            "counter",
            "Alerts acknowledged by the alert broker.",
            A::get(&a.published),
        ),
        (
            "pitchside_alerts_dropped_total",
            "counter",
            "Alerts dropped from the MQTT output (queue full).",
            A::get(&a.dropped),
        ),
        (
            "pitchside_alerts_disconnects_total",
            "counter",
            "Alert output connections lost.",
            A::get(&a.disconnects),
        ),
        (
            "pitchside_alerts_queued",
            "gauge",
            "Alerts waiting for the alert broker.",
            A::get(&a.queued),
        ),
    ];
    for (name, kind, help, v) in figures {
        let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {v}");
    }
}

/// Longest request head (request line and headers) the endpoint reads;
/// a longer one is answered `431`.
pub const MAX_REQUEST_HEAD: usize = 8 * 1024;
/// How long a client may take to send its request head before the
/// connection is closed without an answer.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// What reading a request head gave.
#[derive(Debug, PartialEq, Eq)]
pub enum RequestHead {
    /// The head, up to and without the blank line.
    Complete(String),
    /// More than [`MAX_REQUEST_HEAD`] bytes without the blank line.
    TooLarge,
    /// The client closed, failed or was too slow before the head ended.
    Incomplete,
}

/// Reads until the blank line that ends an HTTP request head, however the
/// client splits its writes, at most `max` bytes.
pub async fn read_head<R: tokio::io::AsyncRead + Unpin>(r: &mut R, max: usize) -> RequestHead {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => return RequestHead::Incomplete,
            Ok(n) => n,
        };
        // Look for the end only in the part that can contain it.
        let from = head.len().saturating_sub(3);
        head.extend_from_slice(&buf[..n]);
        if let Some(i) = head[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            let end = from + i;
            if end > max {
                return RequestHead::TooLarge;
            }
            return RequestHead::Complete(String::from_utf8_lossy(&head[..end]).into_owned());
        }
        if head.len() > max {
            return RequestHead::TooLarge;
        }
    }
}

/// Serves `/metrics` and `/healthz` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    snapshot: Arc<Mutex<MetricsSnapshot>>,
    shutdown: CancellationToken,
) {
    loop {
        let (mut sock, _) = tokio::select! {
            _ = shutdown.cancelled() => return,
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "Metrics endpoint accept failed.");
                    continue;
                }
            },
        };
        let snapshot = snapshot.clone();
        tokio::spawn(async move {
            let head =
                tokio::time::timeout(REQUEST_TIMEOUT, read_head(&mut sock, MAX_REQUEST_HEAD))
                    .await
                    .unwrap_or(RequestHead::Incomplete);
            let (status, body) = match head {
                // Nothing to answer: the client is gone or too slow.
                RequestHead::Incomplete => return,
                RequestHead::TooLarge => (
                    "431 Request Header Fields Too Large",
                    format!("request head longer than {MAX_REQUEST_HEAD} bytes\n"),
                ),
                RequestHead::Complete(req) => respond(&req, &snapshot),
            };
            let resp = format!(
                "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(resp.as_bytes()).await;
            let _ = sock.shutdown().await;
        });
    }
}

/// The status line and body for one request head.
fn respond(req: &str, snapshot: &Mutex<MetricsSnapshot>) -> (&'static str, String) {
    let mut words = req.split_whitespace();
    let method = words.next().unwrap_or("");
    let path = words.next().unwrap_or("/");
    if method != "GET" {
        return ("405 Method Not Allowed", "only GET is served\n".to_string());
    }
    match path {
        "/metrics" => {
            // The lock is held only to clone a small snapshot.
            let s = snapshot.lock().map(|g| g.clone()).unwrap_or_default();
            ("200 OK", render(&s))
        }
        "/healthz" => {
            let s = snapshot.lock().map(|g| g.clone()).unwrap_or_default();
            match health(&s, crate::util::time::now_micros()) {
                Ok(()) => ("200 OK", "ok\n".to_string()),
                Err(why) => ("503 Service Unavailable", format!("unhealthy: {why}\n")),
            }
        }
        _ => ("404 Not Found", "try /metrics or /healthz\n".to_string()),
    }
}

#[cfg(test)]
mod data_path_tests {
    use super::*;
    use crate::model::SensorKind::Wearable;

    #[test]
    fn unknown_fields_conflicts_and_clock_state_are_exposed_with_escaped_labels() {
        let mut s = MetricsSnapshot::default();
        let u = &mut s.counters.unknown_fields;
        u.note(Wearable, "accel");
        u.note(Wearable, "accel");
        u.note(Wearable, "we\"ird\\name\n");
        s.counters.duplicate_conflicts = 4;
        s.counters.clock_unsynced_events = 9;
        s.counters.clock_unsynchronized = true;
        let text = render(&s);
        let m = crate::commands::status::parse_metrics(&text);
        assert_eq!(
            m["pitchside_unknown_fields_total{sensor=\"wearable\",field=\"accel\"}"],
            2.0
        );
        assert!(
            text.contains("{sensor=\"wearable\",field=\"we\\\"ird\\\\name\\n\"} 1\n"),
            "{text}"
        );
        assert_eq!(m["pitchside_duplicate_conflicts_total"], 4.0);
        assert_eq!(m["pitchside_clock_unsynced_events_total"], 9.0);
        assert_eq!(m["pitchside_clock_synchronized"], 0.0);
        s.counters.clock_unsynchronized = false;
        let m = crate::commands::status::parse_metrics(&render(&s));
        assert_eq!(m["pitchside_clock_synchronized"], 1.0);
    }
}
