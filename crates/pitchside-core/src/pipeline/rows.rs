//! Row builders: domain values → one row of a table, columns in schema order.

use crate::model::{Event, Identity, Micros, RejectReason, SensorKind};
use crate::pipeline::detect::stats::Baseline;
use crate::pipeline::fatigue::FatigueFinding;
use crate::pipeline::window::{GroupKey, WindowRow};
use crate::tables::{Stamp, TableBuffer};

/// `{venue_id}/{sensor}/{device_id}/{metric}/{event_time µs}` (SPEC §2).
pub fn alert_id(
    venue_id: &str,
    sensor: SensorKind,
    device_id: &str,
    metric: &str,
    t: Micros,
) -> String {
    let mut id = String::new();
    write_alert_id(&mut id, venue_id, sensor, device_id, metric, t);
    id
}

/// [`alert_id`], written into `out` (emptied first), so that a buffer
/// kept for it serves every alert.
pub fn write_alert_id(
    out: &mut String,
    venue_id: &str,
    sensor: SensorKind,
    device_id: &str,
    metric: &str,
    t: Micros,
) {
    use std::fmt::Write as _;
    out.clear();
    let _ = write!(out, "{venue_id}/{sensor}/{device_id}/{metric}/{t}");
}

/// `{venue_id}/fatigue/{match_id}/{player_id}/{window_start µs}` (SPEC §4).
pub fn fatigue_alert_id(venue_id: &str, match_id: i64, player_id: i64, start: Micros) -> String {
    let mut id = String::new();
    write_fatigue_alert_id(&mut id, venue_id, match_id, player_id, start);
    id
}

/// [`fatigue_alert_id`], written into `out` (emptied first).
pub fn write_fatigue_alert_id(
    out: &mut String,
    venue_id: &str,
    match_id: i64,
    player_id: i64,
    start: Micros,
) {
    use std::fmt::Write as _;
    out.clear();
    let _ = write!(out, "{venue_id}/fatigue/{match_id}/{player_id}/{start}");
}

/// A z-score alert, as one `alerts` row.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertRecord {
    /// Deterministic id.
    pub alert_id: String,
    /// Sensor kind.
    pub sensor: SensorKind,
    /// Device.
    pub device_id: String,
    /// Metric name.
    pub metric: String,
    /// The anomalous value.
    pub value: f64,
    /// Signed z-score.
    pub z_score: f64,
    /// Baseline it was compared with.
    pub baseline: Baseline,
    /// Match.
    pub match_id: i64,
    /// Event time.
    pub event_time: Micros,
    /// When the gateway detected it (wall clock).
    pub detected_at: Micros,
    /// Who or what the event that raised it was about (SPEC §10).
    pub identity: AlertIdentity,
    /// Whether the gateway's clock was synchronised (`None` in `replay`).
    pub clock_synchronized: Option<bool>,
}

/// The identity of the event that raised a z-score alert (SPEC §10): the
/// player, zone or delivery, each `None` where the event's kind has none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlertIdentity {
    /// Player number (wearables).
    pub player_id: Option<i64>,
    /// Player display name (wearables that send one).
    pub player_name: Option<String>,
    /// Zone (crowd sensors).
    pub zone_id: Option<String>,
    /// Delivery number (pitch events that send one).
    pub delivery_id: Option<i64>,
}

/// An `alerts` row, borrowed from the event that raised it: the table row
/// is written from it without copying a string, and an [`AlertRecord`] is
/// made of it only for real-time outputs.
#[derive(Debug, Clone, Copy)]
pub struct AlertRow<'a> {
    /// Deterministic id.
    pub alert_id: &'a str,
    /// The event.
    pub event: &'a Event<'a>,
    /// Metric name.
    pub metric: &'a str,
    /// The anomalous value.
    pub value: f64,
    /// Signed z-score.
    pub z_score: f64,
    /// Baseline it was compared with.
    pub baseline: Baseline,
    /// When the gateway detected it (wall clock).
    pub detected_at: Micros,
    /// Whether the gateway's clock was synchronised (`None` in `replay`).
    pub clock_synchronized: Option<bool>,
}

impl AlertRow<'_> {
    /// Player number, player name, zone and delivery of the event (SPEC §10).
    fn who(&self) -> (Option<i64>, Option<&str>, Option<&str>, Option<i64>) {
        match &self.event.identity {
            Identity::Wearable {
                player_id,
                player_name,
            } => (Some(*player_id), player_name.as_deref(), None, None),
            Identity::Pitch { delivery_id } => (None, None, None, *delivery_id),
            Identity::Crowd { zone_id } => (None, None, Some(zone_id), None),
            Identity::Generic { .. } => (None, None, None, None),
        }
    }

    /// The alert as an owned record, for real-time outputs.
    pub fn to_record(&self) -> AlertRecord {
        let (player_id, player_name, zone_id, delivery_id) = self.who();
        let e = self.event;
        AlertRecord {
            alert_id: self.alert_id.to_string(),
            sensor: e.sensor,
            device_id: e.device_id.to_string(),
            metric: self.metric.to_string(),
            value: self.value,
            z_score: self.z_score,
            baseline: self.baseline,
            match_id: e.match_id,
            event_time: e.event_time,
            detected_at: self.detected_at,
            identity: AlertIdentity {
                player_id,
                player_name: player_name.map(String::from),
                zone_id: zone_id.map(String::from),
                delivery_id,
            },
            clock_synchronized: self.clock_synchronized,
        }
    }
}

/// A `fatigue_alerts` row, borrowed (see [`AlertRow`]).
#[derive(Debug, Clone, Copy)]
pub struct FatigueRow<'a> {
    /// Deterministic id.
    pub alert_id: &'a str,
    /// Match.
    pub match_id: i64,
    /// Player.
    pub player_id: i64,
    /// Player name, if known.
    pub player_name: Option<&'a str>,
    /// Window start.
    pub window_start: Micros,
    /// Window end.
    pub window_end: Micros,
    /// The window's heart-rate mean.
    pub heart_rate_mean: f64,
    /// The baseline.
    pub finding: FatigueFinding,
}

impl FatigueRow<'_> {
    /// The alert as an owned record, for real-time outputs.
    pub fn to_record(&self) -> FatigueRecord {
        FatigueRecord {
            alert_id: self.alert_id.to_string(),
            match_id: self.match_id,
            player_id: self.player_id,
            player_name: self.player_name.map(String::from),
            window_start: self.window_start,
            window_end: self.window_end,
            heart_rate_mean: self.heart_rate_mean,
            finding: self.finding,
        }
    }
}

/// A fatigue alert, as one `fatigue_alerts` row.
#[derive(Debug, Clone, PartialEq)]
pub struct FatigueRecord {
    /// Deterministic id.
    pub alert_id: String,
    /// Match.
    pub match_id: i64,
    /// Player.
    pub player_id: i64,
    /// Player name, if known.
    pub player_name: Option<String>,
    /// Window start.
    pub window_start: Micros,
    /// Window end.
    pub window_end: Micros,
    /// The window's heart-rate mean.
    pub heart_rate_mean: f64,
    /// The baseline.
    pub finding: FatigueFinding,
}

impl Stamp {
    /// Appends an `alerts` row.
    pub fn alert(&self, buf: &mut TableBuffer, a: &AlertRow<'_>) {
        let e = a.event;
        let (player_id, player_name, zone_id, delivery_id) = a.who();
        buf.row(e.event_time)
            .str(a.alert_id)
            .str(&self.venue_id)
            .str(&self.gateway_id)
            .str(e.sensor.as_str())
            .str(&e.device_id)
            .str(a.metric)
            .f64(a.value)
            .f64(a.z_score)
            .f64(a.baseline.mean)
            .f64(a.baseline.std)
            .i64(a.baseline.count as i64)
            .i64(e.match_id)
            .i64(e.event_time)
            .i64(a.detected_at)
            .opt_i64(player_id)
            .opt_str(player_name)
            .opt_str(zone_id)
            .opt_i64(delivery_id)
            .opt_bool(a.clock_synchronized)
            .finish();
    }

    /// Appends a `fatigue_alerts` row.
    pub fn fatigue(&self, buf: &mut TableBuffer, f: &FatigueRow<'_>) {
        buf.row(f.window_start)
            .str(f.alert_id)
            .str(&self.venue_id)
            .str(&self.gateway_id)
            .i64(f.match_id)
            .i64(f.player_id)
            .opt_str(f.player_name)
            .i64(f.window_start)
            .i64(f.window_end)
            .f64(f.heart_rate_mean)
            .f64(f.finding.baseline_mean)
            .f64(f.finding.baseline_std)
            .i64(f.finding.baseline_windows as i64)
            .finish();
    }

    /// Appends a `windows_*` row (the buffer must be the row's kind's table);
    /// `downtime_ms` is how much of the window the gateway was not running
    /// (see [`crate::pipeline::downtime`]).
    pub fn window(&self, buf: &mut TableBuffer, w: &WindowRow, downtime_ms: i64) {
        let mut r = buf
            .row(w.start)
            .str(&self.venue_id)
            .str(&self.gateway_id)
            .i64(w.start)
            .i64(w.end);
        r = match &w.key {
            GroupKey::Wearable {
                match_id,
                player_id,
            } => r
                .i64(*match_id)
                .i64(*player_id)
                .opt_str(w.cell.player_name.as_deref()),
            GroupKey::Pitch { match_id } => r.i64(*match_id),
            GroupKey::Crowd { match_id, zone_id } => r.i64(*match_id).str(zone_id),
            GroupKey::Generic { device_id, metric } => r.str(device_id).str(metric),
        };
        r = r.i64(w.cell.events as i64);
        let metrics = match w.kind {
            SensorKind::Generic => 1,
            k => k.metrics().len(),
        };
        for agg in &w.cell.aggs[..metrics] {
            r = r.opt_f64(agg.mean()).opt_f64(agg.min()).opt_f64(agg.max());
        }
        // Nullable so that files of older gateways (no column) ingest as NULL.
        r.opt_i64(Some(downtime_ms)).finish();
    }

    /// Appends a `raw` row, or a `late` row when `watermark` is given.
    pub fn reading(
        &self,
        buf: &mut TableBuffer,
        e: &Event,
        metric: &str,
        value: f64,
        received_at: Micros,
        watermark: Option<Micros>,
    ) {
        let r = buf
            .row(e.event_time)
            .str(&self.venue_id)
            .str(&self.gateway_id)
            .str(e.sensor.as_str())
            .str(&e.device_id)
            .str(metric)
            .f64(value)
            .i64(e.match_id)
            .opt_i64(e.event_id)
            .i64(e.event_time)
            .i64(received_at);
        let r = match watermark {
            Some(wm) => r.i64(wm),
            None => r,
        };
        r.opt_bool(self.clock_synchronized).finish();
    }

    /// Appends a `rejects` row; the payload is cut to `max_bytes`.
    #[allow(clippy::too_many_arguments)]
    pub fn reject(
        &self,
        buf: &mut TableBuffer,
        source: &str,
        reason: RejectReason,
        detail: &str,
        payload: &[u8],
        max_bytes: usize,
        received_at: Micros,
    ) {
        buf.row(received_at)
            .str(&self.venue_id)
            .str(&self.gateway_id)
            .str(source)
            .str(reason.as_str())
            .str(detail)
            .bytes(&payload[..payload.len().min(max_bytes)])
            .i64(received_at)
            .finish();
    }
}
