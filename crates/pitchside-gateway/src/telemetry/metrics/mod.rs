//! `/metrics`: a [`MetricsSnapshot`] as Prometheus text. One function per
//! owner of the figures, called in the order the families have always been
//! served in (dashboards and `pitchside status` read them by name, but a
//! stable order keeps diffs of scrapes readable).

use super::delivery::upload;
use super::endpoint::{EndpointStats, HttpStats, Server};
use super::exposition::{Exposition, Kind};
use super::{ConsoleStats, MetricsSnapshot};
use crate::model::{RejectReason, SensorKind};
use crate::pipeline::decode::unknown::UnknownFields;
use crate::pipeline::PipelineCounters;
use crate::sinks::alerts::AlertStats;
use crate::sources::SourceStats;
use crate::tables::{ProgressRow, TableId};
use std::sync::atomic::{AtomicU64, Ordering};

/// Renders the snapshot as Prometheus text.
pub fn render(s: &MetricsSnapshot) -> String {
    let mut o = Exposition::with_capacity(4096);
    o.family("pitchside_build_info", Kind::Gauge, "Build information.");
    o.sample(
        "pitchside_build_info",
        &[("version", env!("CARGO_PKG_VERSION"))],
        1,
    );
    pipeline(&mut o, &s.counters);
    spool(&mut o, s);
    o.counter(
        "pitchside_checkpoint_failures_total",
        "Checkpoints that could not be written, or were found unusable at start-up (set aside; the gateway started fresh).",
        s.checkpoint_failures_total,
    );
    sources_down(&mut o, &s.sources);
    upload(&mut o, s);
    journal(&mut o, s);
    live_figures(&mut o, &s.sources, &s.alerts);
    serve(&mut o, &CONSOLE_FIGURES, &s.console);
    http(&mut o, &s.http);
    progress(&mut o, &s.progress);
    o.into_text()
}

/// What the pipeline counts: inputs, rejects, late and duplicate readings,
/// the clock, alerts, what its bounded state had to drop, device health.
fn pipeline(o: &mut Exposition, c: &PipelineCounters) {
    o.counter(
        "pitchside_input_rows_total",
        "Inputs received (events and rejects).",
        c.input_rows,
    );
    o.counter(
        "pitchside_readings_total",
        "Accepted non-duplicate readings.",
        c.readings,
    );
    rejects(o, c);
    o.counter(
        "pitchside_late_rows_total",
        "Readings that arrived after their window closed.",
        c.late_rows,
    );
    o.counter(
        "pitchside_duplicate_rows_total",
        "Readings ignored as duplicates.",
        c.duplicate_rows,
    );
    o.counter(
        "pitchside_duplicate_conflicts_total",
        "Duplicates with another value than the reading kept (also in duplicate_rows).",
        c.duplicate_conflicts,
    );
    unknown_fields(o, &c.unknown_fields);
    clock(o, c);
    o.counter("pitchside_alerts_total", "z-score alerts.", c.alerts);
    o.counter(
        "pitchside_fatigue_alerts_total",
        "Fatigue alerts.",
        c.fatigue_alerts,
    );
    o.counter(
        "pitchside_evictions_total",
        "Detector keys evicted at detector.max_keys.",
        c.evictions,
    );
    o.counter(
        "pitchside_window_drops_total",
        "Events not windowed at windows.max_open_groups.",
        c.window_drops,
    );
    super::devices::device_health(o, c);
    load(o, c);
}

/// Player load (SPEC §11).
fn load(o: &mut Exposition, c: &PipelineCounters) {
    o.gauge(
        "pitchside_load_players",
        "Players (match and player) with load state.",
        c.load_players as f64,
    );
    o.counter(
        "pitchside_load_alerts_total",
        "Alerts of [[load.rules]].",
        c.load_alerts,
    );
    o.counter(
        "pitchside_load_evictions_total",
        "Players whose load state was forgotten at load.max_players.",
        c.load.evictions,
    );
    o.counter(
        "pitchside_load_unrostered_players_total",
        "Admissions of players load.roster does not have (given the [load] defaults): once per player, again after an eviction.",
        c.load.unrostered,
    );
    o.counter(
        "pitchside_load_speed_glitches_total",
        "Distance intervals faster than load.max_speed, credited nothing.",
        c.load.speed_glitches,
    );
}

fn rejects(o: &mut Exposition, c: &PipelineCounters) {
    o.labelled(
        "pitchside_rejected_rows_total",
        Kind::Counter,
        "Rejected inputs by reason.",
        RejectReason::ALL.map(|r| ([("reason", r.as_str())], c.rejected[r as usize])),
    );
}

fn unknown_fields(o: &mut Exposition, u: &UnknownFields) {
    o.labelled(
        "pitchside_unknown_fields_total",
        Kind::Counter,
        "Accepted events with a numeric field their sensor kind does not know (ignored), by field; names beyond the first 64 count as field=\"other\".",
        u.iter()
            .map(|(sensor, field, n)| ([("sensor", sensor.as_str()), ("field", field)], n)),
    );
}

fn clock(o: &mut Exposition, c: &PipelineCounters) {
    o.counter(
        "pitchside_clock_unsynced_events_total",
        "Events accepted while the clock was unsynchronised (judged against the trusted time).",
        c.clock_unsynced_events,
    );
    o.counter(
        "pitchside_clock_unvouched_events_total",
        "Events rejected as implausible_time while the clock was unsynchronised: \
         more than limits.max_future ahead of the trusted time.",
        c.clock_unvouched_events,
    );
    o.gauge(
        "pitchside_clock_synchronized",
        "1 while the kernel reports the system clock synchronised (event times are judged against it).",
        if c.clock_unsynchronized { 0.0 } else { 1.0 },
    );
}

/// What the encoder and the spool count ([`crate::sinks::UploadStats`]).
fn spool(o: &mut Exposition, s: &MetricsSnapshot) {
    o.counter(
        "pitchside_files_written_total",
        "Parquet files written to the spool.",
        s.files_written_total,
    );
    o.counter(
        "pitchside_spool_evictions_total",
        "Spool files deleted without upload to stay inside output.spool_max_bytes / min_free_disk.",
        s.spool_evictions_total,
    );
    o.labelled(
        "pitchside_lost_rows_total",
        Kind::Counter,
        "Rows that could not be written to the spool (disk full or failing) and are lost, by table.",
        TableId::ALL.map(|t| ([("table", t.name())], s.lost_rows_total[t.index()])),
    );
    o.counter(
        "pitchside_spool_vanished_files_total",
        "Spool files gone from disk before upload (removed by hand); their rows are lost.",
        s.vanished_files_total,
    );
}

/// The input journal's state ([`crate::state::StateStats`]).
fn journal(o: &mut Exposition, s: &MetricsSnapshot) {
    o.gauge(
        "pitchside_journal_enabled",
        "1 while inputs are journaled (crash-safe), 0 while the journal is off.",
        if s.journal_down_since == 0 { 1.0 } else { 0.0 },
    );
    o.counter(
        "pitchside_unjournaled_inputs_total",
        "Inputs processed while the journal was off (a crash would have lost them).",
        s.unjournaled_inputs_total,
    );
    o.counter(
        "pitchside_journal_failures_total",
        "Journal open, write, fsync, rotation and start-up read failures.",
        s.journal_failures_total,
    );
}

/// Serial and MQTT sources not connected now, and for how long.
fn sources_down(o: &mut Exposition, s: &SourceStats) {
    o.gauge(
        "pitchside_sources_down",
        "Serial and MQTT sources not connected now.",
        SourceStats::get(&s.sources_down) as f64,
    );
    let down = s.down_sources(crate::util::time::now_micros());
    o.labelled(
        "pitchside_source_down_seconds",
        Kind::Gauge,
        "How long each source that is down now has been down.",
        down.iter()
            .map(|(source, us)| ([("source", source.as_str())], *us as f64 / 1e6)),
    );
}

/// A family of one live figure: name, type, help, and where in the
/// owner's stats `S` it is counted.
type Figure<S> = (&'static str, Kind, &'static str, fn(&S) -> &AtomicU64);

/// The live figures of the sources, in the order served.
#[rustfmt::skip]
const SOURCE_FIGURES: [Figure<SourceStats>; 6] = [
    ("pitchside_serial_disconnects_total", Kind::Counter, "Serial devices that went away.", |s| &s.serial_disconnects),
    ("pitchside_serial_dropped_lines_total", Kind::Counter, "Serial lines dropped while the pipeline was behind.", |s| &s.serial_dropped),
    ("pitchside_mqtt_messages_total", Kind::Counter, "MQTT messages received.", |s| &s.mqtt_messages),
    ("pitchside_mqtt_disconnects_total", Kind::Counter, "MQTT source connections lost.", |s| &s.mqtt_disconnects),
    ("pitchside_mqtt_dropped_messages_total", Kind::Counter, "MQTT messages dropped while the pipeline was behind.", |s| &s.mqtt_dropped),
    ("pitchside_mqtt_oversized_messages_total", Kind::Counter, "MQTT messages over limits.max_event_bytes, rejected as too_large.", |s| &s.mqtt_oversized),
];

/// The live figures of the MQTT alert output, served after the sources'.
#[rustfmt::skip]
const ALERT_FIGURES: [Figure<AlertStats>; 6] = [
    ("pitchside_alerts_published_total", Kind::Counter, "Alerts acknowledged by the alert broker.", |a| &a.published),
    ("pitchside_alerts_dropped_total", Kind::Counter, "Alerts dropped from the MQTT output (queue full).", |a| &a.dropped),
    ("pitchside_alerts_disconnects_total", Kind::Counter, "Alert output connections lost.", |a| &a.disconnects),
    ("pitchside_alerts_queued", Kind::Gauge, "Alerts waiting for the alert broker.", |a| &a.queued),
    ("pitchside_notify_suppressed_total", Kind::Counter, "Alerts not notified (log, MQTT, console) within alerts.notify_cooldown of their key; the tables hold them.", |a| &a.notify_suppressed),
    ("pitchside_notify_evictions_total", Kind::Counter, "Cooldown keys forgotten early (more than detector.max_keys cooling down).", |a| &a.notify_evictions),
];

/// The live figures of the venue console, served after the alert output's.
#[rustfmt::skip]
const CONSOLE_FIGURES: [Figure<ConsoleStats>; 7] = [
    ("pitchside_console_clients", Kind::Gauge, "Console event streams open now.", |c| &c.clients),
    ("pitchside_console_requests_total", Kind::Counter, "Console HTTP requests answered.", |c| &c.requests),
    ("pitchside_console_unauthorized_total", Kind::Counter, "Console requests refused for want of the token (401).", |c| &c.unauthorized),
    ("pitchside_console_clients_dropped_total", Kind::Counter, "Console event streams dropped because the client fell behind.", |c| &c.clients_dropped),
    ("pitchside_console_updates_dropped_total", Kind::Counter, "Alerts and device updates the console could not take (its inbox was full).", |c| &c.updates_dropped),
    ("pitchside_console_states_replaced_total", Kind::Counter, "State events replaced, unsent, by a newer one (a slow console client).", |c| &c.states_replaced),
    ("pitchside_console_bad_host_total", Kind::Counter, "Console requests refused with 421: a Host it does not serve without a token (console.allowed_hosts).", |c| &c.bad_host),
];

/// The connection counters of both HTTP servers, one family each with a
/// `server` label (`metrics`, `console`).
#[rustfmt::skip]
const HTTP_FIGURES: [Figure<EndpointStats>; 4] = [
    ("pitchside_http_accept_errors_total", Kind::Counter, "Failed accepts (mostly: no descriptor left); the server paused before the next.", |e| &e.accept_errors),
    ("pitchside_http_connections_refused_total", Kind::Counter, "Connections closed at once because the server held its most connections.", |e| &e.refused),
    ("pitchside_http_heads_timed_out_total", Kind::Counter, "Connections closed without an answer: no whole request head within 5 s.", |e| &e.heads_timed_out),
    ("pitchside_http_connections_evicted_total", Kind::Counter, "Connections still without a request head closed to make room for a newer one.", |e| &e.evicted),
];

fn http(o: &mut Exposition, s: &HttpStats) {
    for (name, kind, help, counted_in) in HTTP_FIGURES {
        o.family(name, kind, help);
        for server in [Server::Metrics, Server::Console] {
            let v = counted_in(s.of(server)).load(Ordering::Relaxed);
            o.sample(name, &[("server", server.name())], v);
        }
    }
}

fn live_figures(o: &mut Exposition, s: &SourceStats, a: &AlertStats) {
    serve(o, &SOURCE_FIGURES, s);
    serve(o, &ALERT_FIGURES, a);
}

fn serve<S>(o: &mut Exposition, figures: &[Figure<S>], stats: &S) {
    for (name, kind, help, counted_in) in figures {
        o.family(name, *kind, help);
        o.sample(name, &[], counted_in(stats).load(Ordering::Relaxed));
    }
}

/// Gauges of the latest progress row: rate, detector state, open windows,
/// the spool, watermarks and the last upload.
fn progress(o: &mut Exposition, p: &ProgressRow) {
    o.gauge(
        "pitchside_input_rows_per_second",
        "Input rate over the last progress interval.",
        p.input_rows_per_second,
    );
    o.gauge(
        "pitchside_state_keys",
        "Live detector keys.",
        p.state_keys as f64,
    );
    o.gauge(
        "pitchside_state_bytes",
        "Detector state bytes.",
        p.state_bytes as f64,
    );
    o.gauge(
        "pitchside_open_windows",
        "Open window cells.",
        p.open_windows as f64,
    );
    o.gauge(
        "pitchside_spool_files",
        "Files waiting in the spool.",
        p.spool_files as f64,
    );
    o.gauge(
        "pitchside_spool_bytes",
        "Bytes waiting in the spool.",
        p.spool_bytes as f64,
    );
    o.labelled(
        "pitchside_watermark_seconds",
        Kind::Gauge,
        "Watermark per sensor kind (epoch seconds).",
        SensorKind::ALL
            .iter()
            .zip(p.watermarks)
            .filter_map(|(k, w)| Some(([("sensor", k.as_str())], w? as f64 / 1e6))),
    );
    if let Some(t) = p.last_upload_at {
        o.gauge(
            "pitchside_last_upload_seconds",
            "Time of the last successful upload (epoch seconds).",
            t as f64 / 1e6,
        );
    }
}

#[cfg(test)]
mod tests;
