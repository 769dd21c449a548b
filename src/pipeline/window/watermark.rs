//! Watermarks and emission: one watermark per sensor kind, which decides
//! which events are late and which windows are due.

use super::{WindowAggregator, WindowRow};
use crate::model::{Micros, SensorKind};

impl WindowAggregator {
    /// The kind's watermark: its largest accepted event time minus the delay.
    pub fn watermark(&self, kind: SensorKind) -> Option<Micros> {
        self.max_time[kind.index()].map(|t| t.saturating_sub(self.p.delay))
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
            let Some((_, cells)) = windows.pop_first() else {
                break;
            };
            self.open_cells -= cells.len();
            self.last_groups[kind.index()] = cells.len();
            let mut rows = std::mem::take(&mut self.emitting);
            rows.extend(cells);
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            let spare = &mut self.spare[kind.index()];
            for (key, cell) in rows.drain(..) {
                let row = WindowRow {
                    kind,
                    start,
                    end,
                    key,
                    cell,
                };
                out(&row);
                spare.push(row.cell.aggs);
            }
            self.emitting = rows;
        }
    }
}
