//! Event-time tumbling windows with one watermark per sensor kind (SPEC §3).
//!
//! Pure logic: the aggregator sees events and their times, never the clock.
//! A window `[start, end)` is emitted once, when its kind's watermark reaches
//! `end`; an event whose window already ended at or before the watermark is
//! late and goes to the `late` table instead.

use crate::model::{Event, Identity, Micros, SensorKind};
use crate::util::hash::FxHashMap;
use std::collections::BTreeMap;

/// Window parameters (`[windows]`).
#[derive(Debug, Clone, Copy)]
pub struct WindowParams {
    /// Window size, µs.
    pub size: Micros,
    /// Watermark delay, µs.
    pub delay: Micros,
    /// Cap on open (window, group) cells over all kinds.
    pub max_open_groups: usize,
}

/// The group a window row belongs to (SPEC §3 table).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupKey {
    /// `windows_wearable`: match and player.
    Wearable {
        /// Match.
        match_id: i64,
        /// Player.
        player_id: i64,
    },
    /// `windows_pitch`: match.
    Pitch {
        /// Match.
        match_id: i64,
    },
    /// `windows_crowd`: match and zone.
    Crowd {
        /// Match.
        match_id: i64,
        /// Zone.
        zone_id: Box<str>,
    },
    /// `windows_generic`: device and metric.
    Generic {
        /// Device.
        device_id: Box<str>,
        /// Metric name.
        metric: Box<str>,
    },
}

impl GroupKey {
    fn of(e: &Event) -> GroupKey {
        match &e.identity {
            Identity::Wearable { player_id, .. } => GroupKey::Wearable {
                match_id: e.match_id,
                player_id: *player_id,
            },
            Identity::Pitch { .. } => GroupKey::Pitch {
                match_id: e.match_id,
            },
            Identity::Crowd { zone_id } => GroupKey::Crowd {
                match_id: e.match_id,
                zone_id: zone_id.as_str().into(),
            },
            Identity::Generic { metric } => GroupKey::Generic {
                device_id: e.device_id.as_str().into(),
                metric: metric.as_str().into(),
            },
        }
    }
}

/// Mean (compensated sum), min and max of one metric in one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agg {
    /// Values seen.
    pub count: u32,
    sum: f64,
    comp: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Default for Agg {
    fn default() -> Self {
        Agg {
            count: 0,
            sum: 0.0,
            comp: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Agg {
    fn add(&mut self, x: f64) {
        // Neumaier summation keeps the mean exact to a few ulps.
        let t = self.sum + x;
        self.comp += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
        self.count = self.count.saturating_add(1);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// The mean, `None` when no value was seen.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| (self.sum + self.comp) / self.count as f64)
    }

    /// The minimum, `None` when no value was seen.
    pub fn min(&self) -> Option<f64> {
        (self.count > 0).then_some(self.min)
    }

    /// The maximum, `None` when no value was seen.
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then_some(self.max)
    }
}

/// One group's aggregates in one window.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Non-late, non-duplicate events.
    pub events: u64,
    /// Last non-null player name (wearables).
    pub player_name: Option<Box<str>>,
    /// One per metric of the kind (generic: one, for `value`), sized to the
    /// kind so that a generic cell does not carry four.
    pub aggs: Box<[Agg]>,
}

impl Cell {
    fn new(kind: SensorKind) -> Cell {
        let n = kind.metrics().len().max(1);
        Cell {
            events: 0,
            player_name: None,
            aggs: vec![Agg::default(); n].into_boxed_slice(),
        }
    }
}

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
    p: WindowParams,
    max_time: [Option<Micros>; 4],
    open: [BTreeMap<Micros, FxHashMap<GroupKey, Cell>>; 4],
    open_cells: usize,
    dropped: u64,
    /// Groups in the last emitted window of each kind: new windows' maps are
    /// sized to it, so they do not grow (and briefly double) by rehashing.
    last_groups: [usize; 4],
}

impl WindowAggregator {
    /// No windows open, no watermarks yet.
    pub fn new(p: WindowParams) -> WindowAggregator {
        WindowAggregator {
            p,
            max_time: [None; 4],
            open: Default::default(),
            open_cells: 0,
            dropped: 0,
            last_groups: [0; 4],
        }
    }

    /// The kind's watermark: its largest accepted event time minus the delay.
    pub fn watermark(&self, kind: SensorKind) -> Option<Micros> {
        self.max_time[kind.index()].map(|t| t.saturating_sub(self.p.delay))
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

    /// Is an event of this kind and time late, and against which watermark?
    pub fn lateness(&self, kind: SensorKind, t: Micros) -> Option<Micros> {
        let wm = self.watermark(kind)?;
        let end = self.window_start(t).saturating_add(self.p.size);
        (end <= wm).then_some(wm)
    }

    /// Adds an event's non-duplicate readings (`values`) to its window, unless
    /// it is late. Call [`WindowAggregator::advance`] after it.
    pub fn add(&mut self, e: &Event, values: &[(u8, f64)]) -> Placement {
        if let Some(watermark) = self.lateness(e.sensor, e.event_time) {
            return Placement::Late { watermark };
        }
        let start = self.window_start(e.event_time);
        let windows = &mut self.open[e.sensor.index()];
        let key = GroupKey::of(e);
        let cell = match windows.get_mut(&start).and_then(|w| w.get_mut(&key)) {
            Some(c) => c,
            None => {
                if self.open_cells >= self.p.max_open_groups {
                    self.dropped += 1;
                    return Placement::Dropped;
                }
                self.open_cells += 1;
                let hint = self.last_groups[e.sensor.index()];
                windows
                    .entry(start)
                    .or_insert_with(|| {
                        FxHashMap::with_capacity_and_hasher(hint, Default::default())
                    })
                    .entry(key)
                    .or_insert_with(|| Cell::new(e.sensor))
            }
        };
        cell.events += 1;
        if let Some(name) = e.player_name() {
            if cell.player_name.as_deref() != Some(name) {
                cell.player_name = Some(name.into());
            }
        }
        for &(i, x) in values {
            cell.aggs[i as usize].add(x);
        }
        Placement::Window
    }

    /// Moves the kind's watermark after an accepted event at `t` and emits
    /// (hands to `out`, in window then group order) every window whose end it reached.
    pub fn advance(&mut self, kind: SensorKind, t: Micros, out: &mut dyn FnMut(WindowRow)) {
        let slot = &mut self.max_time[kind.index()];
        *slot = Some(slot.map_or(t, |m| m.max(t)));
        if let Some(wm) = self.watermark(kind) {
            self.emit(kind, |end| end <= wm, out);
        }
    }

    /// Emits every open window of every kind (end of a replay).
    pub fn flush_all(&mut self, out: &mut dyn FnMut(WindowRow)) {
        for kind in SensorKind::ALL {
            self.emit(kind, |_| true, out);
        }
    }

    fn emit(
        &mut self,
        kind: SensorKind,
        due: impl Fn(Micros) -> bool,
        out: &mut dyn FnMut(WindowRow),
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
            let mut rows: Vec<_> = cells.into_iter().collect();
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            for (key, cell) in rows {
                out(WindowRow {
                    kind,
                    start,
                    end,
                    key,
                    cell,
                });
            }
        }
    }
}

impl WindowAggregator {
    /// Writes watermarks and every open window (checkpoints).
    pub fn save(&self, e: &mut crate::util::codec::Enc) {
        e.i64(self.p.size);
        e.u64(self.dropped);
        for k in SensorKind::ALL {
            e.opt_i64(self.max_time[k.index()]);
            let windows = &self.open[k.index()];
            e.u64(windows.len() as u64);
            for (start, cells) in windows {
                e.i64(*start);
                e.u64(cells.len() as u64);
                for (key, cell) in cells {
                    match key {
                        GroupKey::Wearable {
                            match_id,
                            player_id,
                        } => {
                            e.u8(0);
                            e.i64(*match_id);
                            e.i64(*player_id);
                        }
                        GroupKey::Pitch { match_id } => {
                            e.u8(1);
                            e.i64(*match_id);
                        }
                        GroupKey::Crowd { match_id, zone_id } => {
                            e.u8(2);
                            e.i64(*match_id);
                            e.str(zone_id);
                        }
                        GroupKey::Generic { device_id, metric } => {
                            e.u8(3);
                            e.str(device_id);
                            e.str(metric);
                        }
                    }
                    e.u64(cell.events);
                    e.opt_str(cell.player_name.as_deref());
                    e.u32(cell.aggs.len() as u32);
                    for a in cell.aggs.iter() {
                        e.u32(a.count);
                        e.f64(a.sum);
                        e.f64(a.comp);
                        e.f64(a.min);
                        e.f64(a.max);
                    }
                }
            }
        }
    }

    /// Restores what [`WindowAggregator::save`] wrote. Open windows saved
    /// with another `windows.size` are dropped (they no longer align);
    /// watermarks are kept.
    pub fn load(
        &mut self,
        d: &mut crate::util::codec::Dec<'_>,
    ) -> Result<(), crate::util::codec::DecodeError> {
        use crate::util::codec::DecodeError;
        let same_size = d.i64()? == self.p.size;
        self.dropped = d.u64()?;
        for k in SensorKind::ALL {
            self.max_time[k.index()] = d.opt_i64()?;
            let n_windows = d.count(16)?;
            for _ in 0..n_windows {
                let start = d.i64()?;
                let n_cells = d.count(10)?;
                for _ in 0..n_cells {
                    let key = match d.u8()? {
                        0 => GroupKey::Wearable {
                            match_id: d.i64()?,
                            player_id: d.i64()?,
                        },
                        1 => GroupKey::Pitch { match_id: d.i64()? },
                        2 => GroupKey::Crowd {
                            match_id: d.i64()?,
                            zone_id: d.string()?.into(),
                        },
                        3 => GroupKey::Generic {
                            device_id: d.string()?.into(),
                            metric: d.string()?.into(),
                        },
                        _ => return Err(DecodeError("unknown window group")),
                    };
                    let mut cell = Cell::new(k);
                    cell.events = d.u64()?;
                    cell.player_name = d.opt_string()?.map(Into::into);
                    let n = d.u32()? as usize;
                    if n != cell.aggs.len() {
                        return Err(DecodeError("window cell has the wrong number of metrics"));
                    }
                    for a in cell.aggs.iter_mut() {
                        *a = Agg {
                            count: d.u32()?,
                            sum: d.f64()?,
                            comp: d.f64()?,
                            min: d.f64()?,
                            max: d.f64()?,
                        };
                    }
                    if same_size && self.open_cells < self.p.max_open_groups {
                        self.open_cells += 1;
                        self.open[k.index()]
                            .entry(start)
                            .or_default()
                            .insert(key, cell);
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
