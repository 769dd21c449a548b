//! What the stage hands on: table rows (rejects, alerts, readings, windows,
//! fatigue alerts, progress, device events, acks), the bounded list of live alerts, and the
//! tables taken for encoding.

use super::{LiveAlert, Outputs, Pipeline};
use crate::model::{Event, Micros, RejectReason, SensorKind};
use crate::pipeline::console_rows::{AckRecord, DeviceEventRecord};
use crate::pipeline::detect::stats::Baseline;
use crate::pipeline::load_rows::{write_load_alert_id, LoadAlertRecord};
use crate::pipeline::rows::{write_alert_id, write_fatigue_alert_id, AlertRow, FatigueRow};
use crate::pipeline::window::{GroupKey, WindowRow};
use crate::tables::{RowGroupLimit, TableBuffer, TableId};

impl Outputs {
    fn push_live(&mut self, a: LiveAlert) {
        if self.live_alerts.len() < self.live_alerts_cap {
            self.live_alerts.push(a);
        }
    }

    /// Writes a `rejects` row; the payload is cut to `max_bytes`.
    pub(super) fn reject(
        &mut self,
        source: &str,
        reason: RejectReason,
        detail: &str,
        payload: &[u8],
        max_bytes: usize,
        at: Micros,
    ) {
        let buf = &mut self.tables[TableId::Rejects.index()];
        self.stamp
            .reject(buf, source, reason, detail, payload, max_bytes, at);
    }

    /// Writes a z-score alert for reading `x` of `e`, and passes it on live
    /// (the only copy of its strings, and only when live alerts are on).
    pub(super) fn alert(
        &mut self,
        e: &Event<'_>,
        metric: &str,
        x: f64,
        z_score: f64,
        baseline: Baseline,
        clock: Micros,
    ) {
        let mut id = std::mem::take(&mut self.alert_id);
        write_alert_id(
            &mut id,
            &self.stamp.venue_id,
            e.sensor,
            &e.device_id,
            metric,
            e.event_time,
        );
        let row = AlertRow {
            alert_id: &id,
            event: e,
            metric,
            value: x,
            z_score,
            baseline,
            detected_at: clock,
            clock_synchronized: self.stamp.clock_synchronized,
        };
        self.stamp
            .alert(&mut self.tables[TableId::Alerts.index()], &row);
        self.counters.alerts += 1;
        if self.live_alerts.len() < self.live_alerts_cap {
            self.push_live(LiveAlert::ZScore(row.to_record()));
        }
        self.alert_id = id;
    }

    /// Writes the new readings of `e` to `raw` (when `raw` is on) and, when
    /// the event is late against watermark `late`, to `late`.
    pub(super) fn readings(
        &mut self,
        e: &Event,
        readings: &[(u8, f64)],
        received_at: Micros,
        late: Option<Micros>,
        raw: bool,
    ) {
        for &(i, x) in readings {
            let metric = e.metric_name(i);
            if raw {
                self.stamp.reading(
                    &mut self.tables[TableId::Raw.index()],
                    e,
                    metric,
                    x,
                    received_at,
                    None,
                );
            }
            if let Some(wm) = late {
                self.counters.late_rows += 1;
                self.stamp.reading(
                    &mut self.tables[TableId::Late.index()],
                    e,
                    metric,
                    x,
                    received_at,
                    Some(wm),
                );
            }
        }
    }

    /// Writes an emitted window row, and a fatigue alert if it is one.
    pub(super) fn window(&mut self, w: &WindowRow) {
        self.counters.windows_emitted += 1;
        let t = TableId::windows(w.kind);
        let downtime_ms = self.downtime.overlap_ms(w.start, w.end);
        self.stamp
            .window(&mut self.tables[t.index()], w, downtime_ms);
        if let (
            SensorKind::Wearable,
            GroupKey::Wearable {
                match_id,
                player_id,
            },
        ) = (w.kind, &w.key)
        {
            self.fatigue(w, *match_id, *player_id);
            self.load_row(w, *match_id, *player_id, downtime_ms);
        }
    }

    /// Writes the player's `load_player_1m` row of a wearable window (none
    /// when the load tracker forgot the player at `load.max_players`).
    fn load_row(&mut self, w: &WindowRow, match_id: i64, player_id: i64, downtime_ms: i64) {
        if let Some(row) = self.load.on_window(match_id, player_id, w.start) {
            let buf = &mut self.tables[TableId::LoadPlayer1m.index()];
            self.stamp.load(buf, w, &row, downtime_ms);
        }
    }

    /// Feeds a wearable window's mean heart rate to the fatigue tracker;
    /// writes a fatigue alert if it finds one, and passes it on live.
    fn fatigue(&mut self, w: &WindowRow, match_id: i64, player_id: i64) {
        let hr = w.cell.aggs[0].mean();
        let Some(finding) = self.fatigue.on_window(match_id, player_id, w.start, hr) else {
            return;
        };
        let mut id = std::mem::take(&mut self.alert_id);
        write_fatigue_alert_id(&mut id, &self.stamp.venue_id, match_id, player_id, w.start);
        let row = FatigueRow {
            alert_id: &id,
            match_id,
            player_id,
            player_name: w.cell.player_name.as_deref(),
            window_start: w.start,
            window_end: w.end,
            // on_window only finds fatigue when the mean exists.
            heart_rate_mean: hr.unwrap_or_default(),
            finding,
        };
        self.stamp
            .fatigue(&mut self.tables[TableId::FatigueAlerts.index()], &row);
        self.counters.fatigue_alerts += 1;
        if self.live_alerts.len() < self.live_alerts_cap {
            self.push_live(LiveAlert::Fatigue(row.to_record()));
        }
        self.alert_id = id;
    }

    /// Writes the `load_alerts` rows of the rules wearable event `e` fired,
    /// and passes them on live.
    pub(super) fn load_alerts(&mut self, e: &Event<'_>, clock: Micros) {
        let crate::model::Identity::Wearable { player_id, .. } = e.identity else {
            return;
        };
        for f in self.load.take_findings(e.match_id, player_id) {
            let mut id = String::new();
            write_load_alert_id(
                &mut id,
                &self.stamp.venue_id,
                &f.rule,
                e.match_id,
                player_id,
                e.event_time,
            );
            let p = &f.profile;
            let record = LoadAlertRecord {
                alert_id: id,
                rule: f.rule,
                watch: f.watch.to_string(),
                match_id: e.match_id,
                player_id,
                player_name: p.name.as_deref().or(e.player_name()).map(str::to_string),
                position: p.position.as_deref().map(str::to_string),
                device_id: e.device_id.to_string(),
                value: f.value,
                threshold: f.threshold,
                event_time: e.event_time,
                detected_at: clock,
            };
            self.stamp
                .load_alert(&mut self.tables[TableId::LoadAlerts.index()], &record);
            self.counters.load_alerts += 1;
            self.push_live(LiveAlert::Load(record));
        }
    }

    /// Writes a `device_events` row and passes the event on live.
    pub(super) fn device_event(&mut self, d: DeviceEventRecord) {
        self.stamp
            .device_event(&mut self.tables[TableId::DeviceEvents.index()], &d);
        self.push_live(LiveAlert::Device(d));
    }
}

impl Pipeline {
    /// Alerts raised since the last call (bounded; the tables have them all).
    pub fn drain_alerts(&mut self) -> Vec<LiveAlert> {
        std::mem::take(&mut self.out.live_alerts)
    }

    /// Turns off the real-time alert list (replay and benchmarks need only tables).
    pub fn disable_live_alerts(&mut self) {
        self.out.live_alerts_cap = 0;
    }

    /// Emits every open window (end of a replay).
    pub fn flush_windows(&mut self) {
        let out = &mut self.out;
        self.windows.flush_all(&mut |w| out.window(w));
    }

    /// Writes an acknowledgement of an alert to `alert_acks`, unless the
    /// same person's ack of the same alert was written (then `false`).
    pub fn ack(&mut self, a: &AckRecord) -> bool {
        let out = &mut self.out;
        if !out.acks.insert(a) {
            return false;
        }
        out.stamp
            .ack(&mut out.tables[TableId::AlertAcks.index()], a);
        true
    }

    /// The ack `by` already wrote for `alert_id`, if any (remembered: the
    /// last [`crate::pipeline::console_rows::ACKS_REMEMBERED`]).
    pub fn acked(&self, alert_id: &str, by: &str) -> Option<&AckRecord> {
        self.out.acks.get(alert_id, by)
    }

    /// Appends a progress row.
    pub fn push_progress(&mut self, row: &crate::tables::ProgressRow) {
        let out = &mut self.out;
        row.write(&out.stamp, &mut out.tables[TableId::Progress.index()]);
    }

    /// Takes the tables that hold a full row group (`RowGroupLimit::ANY`:
    /// every non-empty table).
    pub fn take_tables(&mut self, limit: RowGroupLimit) -> Vec<TableBuffer> {
        self.out
            .tables
            .iter_mut()
            .filter(|t| limit.reached_by(t))
            .map(|t| t.take())
            .collect()
    }

    /// Hands the tables that hold a full row group (`RowGroupLimit::ANY`:
    /// every non-empty table) to `write`, then empties them in place: the
    /// next rows reuse their memory, and no second buffer of a table ever
    /// exists. For a caller that writes at once (`replay`); `run`'s encoder
    /// thread takes them instead ([`Pipeline::take_tables`]). Rows `write`
    /// fails on are dropped with the buffers, as taken ones would be.
    pub fn write_tables<E>(
        &mut self,
        limit: RowGroupLimit,
        write: impl FnOnce(&[&TableBuffer]) -> Result<(), E>,
    ) -> Result<(), E> {
        let tables = &mut self.out.tables;
        let full: Vec<&TableBuffer> = tables.iter().filter(|t| limit.reached_by(t)).collect();
        let result = write(&full);
        // The same tables: `write` only read them.
        tables
            .iter_mut()
            .filter(|t| limit.reached_by(t))
            .for_each(TableBuffer::clear);
        result
    }

    /// Whether a table holds a full row group.
    pub fn tables_due(&self, limit: RowGroupLimit) -> bool {
        self.out.tables.iter().any(|t| limit.reached_by(t))
    }
}
