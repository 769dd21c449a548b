//! Watermarks and emission: one watermark per sensor kind, which decides
//! which events are late and which windows are due.

use super::{Cell, GroupKey, WindowAggregator, WindowRow};
use crate::model::{Micros, SensorKind};

impl WindowAggregator {
    /// The kind's watermark: its largest accepted event time minus the delay.
    pub fn watermark(&self, kind: SensorKind) -> Option<Micros> {
        self.max_time[kind.index()].map(|t| t.saturating_sub(self.p.watermark_delay))
    }

    /// The start of the window an event of this kind at `t` falls in, and
    /// whether that window is late: `Some(watermark)` when it ended at or
    /// before the kind's watermark. The start is handed back for
    /// [`WindowAggregator::add_to`], so an event's time is divided once.
    pub fn window_of(&self, kind: SensorKind, t: Micros) -> (Micros, Option<Micros>) {
        let start = self.window_start(t);
        (start, self.lateness_of_window(kind, start))
    }

    /// Whether the window of this kind that starts at `start` is late, and
    /// against which watermark.
    fn lateness_of_window(&self, kind: SensorKind, start: Micros) -> Option<Micros> {
        let wm = self.watermark(kind)?;
        (start.saturating_add(self.p.size) <= wm).then_some(wm)
    }

    /// Moves the kind's watermark after an accepted event at `t` and emits
    /// (hands to `out`, in window then group order) every window whose end it reached.
    pub fn advance(&mut self, kind: SensorKind, t: Micros, out: &mut dyn FnMut(&WindowRow)) {
        let slot = &mut self.max_time[kind.index()];
        *slot = Some(slot.map_or(t, |m| m.max(t)));
        if let Some(wm) = self.watermark(kind) {
            self.emit(kind, |end| end <= wm, out);
        }
    }

    /// Emits every open window of every kind (end of a replay).
    pub fn flush_all(&mut self, out: &mut dyn FnMut(&WindowRow)) {
        for kind in SensorKind::ALL {
            self.emit(kind, |_| true, out);
        }
    }

    fn emit(
        &mut self,
        kind: SensorKind,
        due: impl Fn(Micros) -> bool,
        out: &mut dyn FnMut(&WindowRow),
    ) {
        let size = self.p.size;
        let windows = &mut self.open[kind.index()];
        while let Some((&start, _)) = windows.first_key_value() {
            let end = start.saturating_add(size);
            if !due(end) {
                break;
            }
            // first_key_value just returned this entry.
            let Some((_, mut cells)) = windows.pop_first() else {
                break;
            };
            let groups = cells.len();
            self.open_cells -= groups;
            self.last_groups[kind.index()] = groups;
            let mut order = std::mem::take(&mut self.emitting);
            let mut row = WindowRow {
                kind,
                start,
                end,
                key: GroupKey::Pitch { match_id: 0 },
                cell: Cell::new(kind),
            };
            cells.drain_sorted(&mut order, |key, group, aggs| {
                row.key = key;
                row.cell.events = group.events;
                row.cell.player_name = group.player_name.take();
                row.cell.aggs.copy_from_slice(aggs);
                out(&row);
            });
            cells.shrink_to(groups);
            self.spare[kind.index()] = Some(cells);
            self.emitting = order;
        }
    }
}
