//! The aggregator's checkpoint: watermarks and every open window's cells.

use super::cell::{Agg, Cell, GroupKey};
use super::cells::Cells;
use super::WindowAggregator;
use crate::model::SensorKind;
use crate::util::codec::{Dec, DecodeError, Enc};

impl WindowAggregator {
    /// Writes watermarks and every open window (checkpoints).
    pub fn save(&self, e: &mut Enc) {
        e.i64(self.p.size);
        e.u64(self.dropped);
        for k in SensorKind::ALL {
            e.opt_i64(self.max_time[k.index()]);
            let windows = &self.open[k.index()];
            e.u64(windows.len() as u64);
            for (start, cells) in windows {
                e.i64(*start);
                e.u64(cells.len() as u64);
                for (group, aggs) in cells.iter() {
                    match &group.key {
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
                    e.u64(group.events);
                    e.opt_str(group.player_name.as_deref());
                    e.u32(aggs.len() as u32);
                    for a in aggs {
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
    pub fn load(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        let same_size = d.i64()? == self.p.size;
        self.dropped = d.u64()?;
        for k in SensorKind::ALL {
            self.max_time[k.index()] = d.opt_i64()?;
            let n_windows = d.count(16)?;
            for _ in 0..n_windows {
                let start = d.i64()?;
                let n_cells = d.count(10)?;
                for _ in 0..n_cells {
                    let tag = d.u8()?;
                    if tag as usize != k.index() {
                        return Err(DecodeError("window group of another sensor kind"));
                    }
                    let key = match tag {
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
                        // A group written twice counts once (the last wins).
                        let added = self.open[k.index()]
                            .entry(start)
                            .or_insert_with(|| Cells::new(k, 0))
                            .insert(key, cell);
                        self.open_cells += added as usize;
                    }
                }
            }
        }
        Ok(())
    }
}
