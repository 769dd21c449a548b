//! Event-time tumbling windows with one watermark per sensor kind (SPEC §3).
//!
//! Pure logic: the aggregator sees events and their times, never the clock.
//! A window `[start, end)` is emitted once, when its kind's watermark reaches
//! `end`; an event whose window already ended at or before the watermark is
//! late and goes to the `late` table instead.
//!
//! Here: the aggregator and how an event joins its window's cell. `cell`:
//! group keys and the per-metric aggregates. `cells`: one window's cells
//! of one kind, in arrival order. `watermark`: watermarks,
//! lateness and emission. `snapshot`: the checkpoint.

mod cell;
mod cells;
mod snapshot;
mod watermark;

pub use cell::{Agg, Cell, GroupKey};

use crate::config::WindowsConfig;
use crate::model::{Event, Micros, SensorKind};
use crate::util::intern::Interner;
use cell::GroupRef;
use cells::Cells;
use std::collections::BTreeMap;

/// An emitted window row.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowRow {
    /// Kind (selects the table).
    pub kind: SensorKind,
    /// Window start, µs.
    pub start: Micros,
    /// Window end, µs.
    pub end: Micros,
    /// Group.
    pub key: GroupKey,
    /// Aggregates.
    pub cell: Cell,
}

/// Where an event went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// Added to its window.
    Window,
    /// Late: its window ended at or before this watermark.
    Late {
        /// The kind's watermark at the event's arrival.
        watermark: Micros,
    },
    /// Not added: `max_open_groups` cells are open (counted).
    Dropped,
}

/// The open windows and watermarks of all kinds.
#[derive(Debug)]
pub struct WindowAggregator {
    /// `[windows]`, as validated.
    p: WindowsConfig,
    max_time: [Option<Micros>; 4],
    open: [BTreeMap<Micros, Cells>; 4],
    open_cells: usize,
    dropped: u64,
    /// The strings of group keys and player names, shared across windows.
    names: Interner,
    /// Per kind, the emptied cells of the window emitted last, for the
    /// next window to fill: sized to it, so they neither allocate nor grow
    /// (and briefly double) by rehashing.
    spare: [Option<Cells>; 4],
    /// Groups in the last emitted window of each kind: a window that finds
    /// no spare (two opened before one was emitted) is sized to it.
    last_groups: [usize; 4],
    /// The groups of the window being emitted, sorted (kept for its
    /// capacity).
    emitting: Vec<(GroupKey, u32)>,
}

impl WindowAggregator {
    /// No windows open, no watermarks yet.
    pub fn new(p: WindowsConfig) -> WindowAggregator {
        WindowAggregator {
            p,
            max_time: [None; 4],
            open: Default::default(),
            open_cells: 0,
            dropped: 0,
            names: Interner::default(),
            spare: Default::default(),
            last_groups: [0; 4],
            emitting: Vec::new(),
        }
    }

    /// Open (window, group) cells.
    pub fn open_cells(&self) -> usize {
        self.open_cells
    }

    /// Events dropped because `max_open_groups` cells were open.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The window start of an event time.
    pub fn window_start(&self, t: Micros) -> Micros {
        t.div_euclid(self.p.size) * self.p.size
    }

    /// Adds an event's non-duplicate readings (`values`) to its window, unless
    /// it is late. Call [`WindowAggregator::advance`] after it.
    pub fn add(&mut self, e: &Event, values: &[(u8, f64)]) -> Placement {
        match self.window_of(e.sensor, e.event_time) {
            (_, Some(watermark)) => Placement::Late { watermark },
            (start, None) => self.add_to(e, start, values),
        }
    }

    /// [`WindowAggregator::add`] of an event that is not late, to the window
    /// that starts at `start` (from [`WindowAggregator::window_of`]).
    pub fn add_to(&mut self, e: &Event, start: Micros, values: &[(u8, f64)]) -> Placement {
        let kind = e.sensor.index();
        let windows = &mut self.open[kind];
        let group = GroupRef::of(e);
        let (cell, aggs) = match windows.get_mut(&start).and_then(|w| w.get_mut(&group)) {
            Some(c) => c,
            None => {
                if self.open_cells >= self.p.max_open_groups {
                    self.dropped += 1;
                    return Placement::Dropped;
                }
                self.open_cells += 1;
                let (names, spare) = (&mut self.names, &mut self.spare[kind]);
                let hint = self.last_groups[kind];
                windows
                    .entry(start)
                    .or_insert_with(|| spare.take().unwrap_or_else(|| Cells::new(e.sensor, hint)))
                    .get_or_insert(&group, || group.to_key(names))
            }
        };
        cell.events += 1;
        if let Some(name) = e.player_name() {
            if cell.player_name.as_deref() != Some(name) {
                cell.player_name = Some(self.names.get(name));
            }
        }
        for &(i, x) in values {
            aggs[i as usize].add(x);
        }
        Placement::Window
    }
}

#[cfg(test)]
mod tests;
