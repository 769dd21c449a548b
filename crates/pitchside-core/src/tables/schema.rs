//! The columns of every table (SPEC §5), one builder per table family:
//! alerts, windows, readings (`raw`, `late`), rejects, progress; the two
//! console tables (`alert_acks`, `device_events`) inline. Built once,
//! on first use, by [`TableId::columns`].

use super::{ColType, Column, TableId};
use crate::model::SensorKind;
use ColType::*;

/// The table's columns, in file order.
pub(super) fn build(table: TableId) -> Vec<Column> {
    match table {
        TableId::Alerts => alerts(),
        TableId::FatigueAlerts => fatigue_alerts(),
        TableId::LoadAlerts => alert([
            c("rule", Utf8),
            c("watch", Utf8),
            c("match_id", I64),
            c("player_id", I64),
            n("player_name", Utf8),
            n("position", Utf8),
            c("device_id", Utf8),
            c("value", F64),
            c("threshold", F64),
            c("event_time", Ts),
            c("detected_at", Ts),
        ]),
        TableId::AlertAcks => stamped([
            c("alert_id", Utf8),
            c("by", Utf8),
            n("note", Utf8),
            c("acked_at", Ts),
        ]),
        TableId::DeviceEvents => stamped([
            c("sensor", Utf8),
            c("device_id", Utf8),
            n("player_id", I64),
            n("zone_id", Utf8),
            c("event", Utf8),
            c("last_seen", Ts),
            c("at", Ts),
        ]),
        TableId::WindowsWearable => windows(SensorKind::Wearable),
        TableId::WindowsPitch => windows(SensorKind::Pitch),
        TableId::WindowsCrowd => windows(SensorKind::Crowd),
        TableId::WindowsGeneric => windows(SensorKind::Generic),
        TableId::Raw => {
            let mut v = reading();
            v.push(clock_synchronized());
            v
        }
        TableId::Late => {
            let mut v = reading();
            v.extend([c("watermark", Ts), clock_synchronized()]);
            v
        }
        TableId::LoadPlayer1m => load_player(),
        TableId::Rejects => rejects(),
        TableId::Progress => progress(),
    }
}

/// A required column.
fn c(name: &str, ty: ColType) -> Column {
    Column {
        name: name.into(),
        ty,
        nullable: false,
    }
}

/// A nullable column.
fn n(name: &str, ty: ColType) -> Column {
    Column {
        name: name.into(),
        ty,
        nullable: true,
    }
}

/// The row stamp, then `rest`: the stamp comes first (after `alert_id`) in
/// every table.
fn stamped(rest: impl IntoIterator<Item = Column>) -> Vec<Column> {
    let mut v = vec![c("venue_id", Utf8), c("gateway_id", Utf8)];
    v.extend(rest);
    v
}

/// `alert_id`, the stamp, then `rest`: the head of both alert tables.
fn alert(rest: impl IntoIterator<Item = Column>) -> Vec<Column> {
    let mut v = vec![c("alert_id", Utf8)];
    v.extend(stamped(rest));
    v
}

fn alerts() -> Vec<Column> {
    alert([
        c("sensor", Utf8),
        c("device_id", Utf8),
        c("metric", Utf8),
        c("value", F64),
        c("z_score", F64),
        c("baseline_mean", F64),
        c("baseline_std", F64),
        c("baseline_count", I64),
        c("match_id", I64),
        c("event_time", Ts),
        c("detected_at", Ts),
        // The event's identity (SPEC §10), null where its kind has none.
        // Nullable also so that files of older gateways ingest as NULL.
        n("player_id", I64),
        n("player_name", Utf8),
        n("zone_id", Utf8),
        n("delivery_id", I64),
        clock_synchronized(),
    ])
}

fn fatigue_alerts() -> Vec<Column> {
    alert([
        c("match_id", I64),
        c("player_id", I64),
        n("player_name", Utf8),
        c("window_start", Ts),
        c("window_end", Ts),
        c("heart_rate_mean", F64),
        c("baseline_mean", F64),
        c("baseline_std", F64),
        c("baseline_windows", I64),
    ])
}

/// `load_player_1m` (SPEC §11): the wearable window's group, the player's
/// figures, the window's load and the match's totals so far.
fn load_player() -> Vec<Column> {
    let mut v = stamped([
        c("window_start", Ts),
        c("window_end", Ts),
        c("match_id", I64),
        c("player_id", I64),
        n("player_name", Utf8),
        n("position", Utf8),
        c("on_roster", Bool),
        c("hr_max", F64),
        n("target_trimp", F64),
    ]);
    v.extend((1..=5).map(|k| c(&format!("zone{k}_s"), F64)));
    v.extend([
        c("trimp_edwards", F64),
        c("trimp_banister", F64),
        c("distance_m", F64),
        c("hsr_distance_m", F64),
        c("hsr_s", F64),
        c("sprints", I64),
        c("accel_load", F64),
        c("session_distance_m", F64),
        c("session_hsr_distance_m", F64),
        c("session_sprints", I64),
        c("session_trimp_edwards", F64),
        c("session_accel_load", F64),
        n("gateway_downtime_ms", I64),
    ]);
    v
}

/// A kind's windows table: its group columns, `events`, mean/min/max of each
/// metric, `gateway_downtime_ms`.
fn windows(kind: SensorKind) -> Vec<Column> {
    let mut v = stamped([c("window_start", Ts), c("window_end", Ts)]);
    match kind {
        SensorKind::Wearable => v.extend([
            c("match_id", I64),
            c("player_id", I64),
            n("player_name", Utf8),
        ]),
        SensorKind::Pitch => v.push(c("match_id", I64)),
        SensorKind::Crowd => v.extend([c("match_id", I64), c("zone_id", Utf8)]),
        SensorKind::Generic => v.extend([c("device_id", Utf8), c("metric", Utf8)]),
    }
    v.push(c("events", I64));
    let metrics: &[&str] = match kind {
        SensorKind::Generic => &["value"],
        k => k.metrics(),
    };
    for m in metrics {
        for s in ["mean", "min", "max"] {
            v.push(n(&format!("{m}_{s}"), F64));
        }
    }
    v.push(n("gateway_downtime_ms", I64));
    v
}

/// Whether the gateway's clock was synchronised when the event was accepted
/// (SPEC §3): the last column of `raw`, `late` and `alerts`; null from
/// `replay`, and nullable so that files of older gateways ingest as NULL.
fn clock_synchronized() -> Column {
    n("clock_synchronized", Bool)
}

/// One reading a row (`raw`; `late` adds `watermark`).
fn reading() -> Vec<Column> {
    stamped([
        c("sensor", Utf8),
        c("device_id", Utf8),
        c("metric", Utf8),
        c("value", F64),
        c("match_id", I64),
        n("event_id", I64),
        c("event_time", Ts),
        c("received_at", Ts),
    ])
}

fn rejects() -> Vec<Column> {
    stamped([
        c("source", Utf8),
        c("reason", Utf8),
        c("detail", Utf8),
        c("payload", Binary),
        c("received_at", Ts),
    ])
}

fn progress() -> Vec<Column> {
    let mut v = stamped([
        c("timestamp", Ts),
        c("input_rows", I64),
        c("input_rows_per_second", F64),
        c("processed_rows_per_second", F64),
        c("batch_duration_ms", F64),
        c("state_keys", I64),
        c("state_bytes", I64),
        c("open_windows", I64),
    ]);
    for k in SensorKind::ALL {
        v.push(n(&format!("watermark_{k}"), Ts));
    }
    v.extend([
        c("late_rows", I64),
        c("rejected_rows", I64),
        c("duplicate_rows", I64),
        c("alerts", I64),
        c("evictions", I64),
        c("spool_files", I64),
        c("spool_bytes", I64),
        c("uploaded_files", I64),
        c("upload_failures", I64),
        n("last_upload_at", Ts),
        // Came after the first progress files: nullable in the file (an older
        // gateway's file lacks them, SPEC §6), always written.
        n("spool_evictions", I64),
        n("duplicate_conflicts", I64),
    ]);
    v
}
