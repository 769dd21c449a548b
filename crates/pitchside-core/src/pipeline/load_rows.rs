//! Player load's rows (SPEC §11): `load_player_1m` with each wearable
//! window, and `load_alerts` with each rule that fires.

use crate::model::Micros;
use crate::pipeline::load::LoadRow;
use crate::pipeline::window::{GroupKey, WindowRow};
use crate::tables::{Stamp, TableBuffer};

/// `{venue_id}/load/{rule}/{match_id}/{player_id}/{event_time µs}` (SPEC §11).
pub fn write_load_alert_id(
    out: &mut String,
    venue_id: &str,
    rule: &str,
    match_id: i64,
    player_id: i64,
    t: Micros,
) {
    use std::fmt::Write as _;
    out.clear();
    let _ = write!(out, "{venue_id}/load/{rule}/{match_id}/{player_id}/{t}");
}

/// A `[[load.rules]]` alert, as one `load_alerts` row (SPEC §11).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadAlertRecord {
    /// Deterministic id.
    pub alert_id: String,
    /// The rule's name.
    pub rule: String,
    /// What it watches: `hr_pct`, `sprints`, `load_pct`.
    pub watch: String,
    /// Match.
    pub match_id: i64,
    /// Player.
    pub player_id: i64,
    /// The roster's name, else the event's.
    pub player_name: Option<String>,
    /// The roster's position.
    pub position: Option<String>,
    /// The device of the event that fired it.
    pub device_id: String,
    /// The watched value (% of HRmax, sprints, % of the target).
    pub value: f64,
    /// The rule's threshold.
    pub threshold: f64,
    /// The event's time.
    pub event_time: Micros,
    /// Wall clock when raised.
    pub detected_at: Micros,
}

impl Stamp {
    /// Appends a `load_alerts` row.
    pub fn load_alert(&self, buf: &mut TableBuffer, a: &LoadAlertRecord) {
        buf.row(a.event_time)
            .str(&a.alert_id)
            .str(&self.venue_id)
            .str(&self.gateway_id)
            .str(&a.rule)
            .str(&a.watch)
            .i64(a.match_id)
            .i64(a.player_id)
            .opt_str(a.player_name.as_deref())
            .opt_str(a.position.as_deref())
            .str(&a.device_id)
            .f64(a.value)
            .f64(a.threshold)
            .i64(a.event_time)
            .i64(a.detected_at)
            .finish();
    }

    /// Appends a `load_player_1m` row for wearable window `w` (SPEC §11).
    pub fn load(&self, buf: &mut TableBuffer, w: &WindowRow, l: &LoadRow<'_>, downtime_ms: i64) {
        let GroupKey::Wearable {
            match_id,
            player_id,
        } = w.key
        else {
            return;
        };
        let f = l.profile;
        let (s, t) = (&l.window, &l.session);
        let name = f.name.as_deref().or(w.cell.player_name.as_deref());
        let mut r = buf
            .row(w.start)
            .str(&self.venue_id)
            .str(&self.gateway_id)
            .i64(w.start)
            .i64(w.end)
            .i64(match_id)
            .i64(player_id)
            .opt_str(name)
            .opt_str(f.position.as_deref())
            .bool(f.on_roster)
            .f64(f.hr_max)
            .opt_f64(f.target_trimp);
        for k in 0..5 {
            r = r.f64(s.zone_s(k));
        }
        r.f64(s.trimp_edwards())
            .f64(s.trimp_banister)
            .f64(s.distance)
            .f64(s.hsr_distance)
            .f64(s.hsr_us as f64 / 1e6)
            .i64(s.sprints)
            .f64(s.accel_load)
            .f64(t.distance)
            .f64(t.hsr_distance)
            .i64(t.sprints)
            .f64(t.trimp_edwards)
            .f64(t.accel_load)
            .opt_i64(Some(downtime_ms))
            .finish();
    }
}
