//! The detector's checkpoint: every live key's window and running sums,
//! oldest-appended key first.

use super::keys::KeyRef;
use super::stats::ShiftedSums;
use super::{Detector, NIL};
use crate::util::codec::{Dec, DecodeError, Enc};

impl Detector {
    /// Writes every live key's window, oldest-appended key first (checkpoints).
    pub fn save(&self, e: &mut Enc) {
        e.i64(self.now);
        let c = self.counters;
        e.u64(c.duplicates);
        e.u64(c.evictions);
        e.u64(c.expired);
        e.u64(self.map.len() as u64);
        let w = self.p.window;
        let mut id = self.lru_tail;
        while id != NIL {
            let s = &self.slots[id as usize];
            e.bytes(s.key.as_slice());
            e.u32(s.len);
            for k in 0..s.len as usize {
                let pos = (s.head as usize + k) % w;
                e.f64(self.values.get(&self.cells, id, pos));
                e.i64(self.times.get(&self.cells, id, pos));
            }
            e.i64(s.last_t);
            e.i64(s.max_t);
            // The running sums, bit for bit, so a restored key continues exactly.
            e.f64(s.sums.k);
            e.f64(s.sums.s1);
            e.f64(s.sums.s2);
            e.f64(s.sums.mag);
            id = s.prev;
        }
    }

    /// Restores what [`Detector::save`] wrote into this (fresh) detector. A
    /// smaller `window` or `max_keys` than when saved keeps the newest data.
    pub fn load(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        self.now = d.i64()?;
        self.counters.duplicates = d.u64()?;
        self.counters.evictions = d.u64()?;
        self.counters.expired = d.u64()?;
        let n = d.count(44)?;
        let w = self.p.window;
        let mut vals = Vec::with_capacity(w);
        for _ in 0..n {
            let key = d.bytes()?;
            let len = d.u32()? as usize;
            vals.clear();
            for _ in 0..len {
                vals.push((d.f64()?, d.i64()?));
            }
            let (last_t, max_t) = (d.i64()?, d.i64()?);
            let saved = ShiftedSums {
                k: d.f64()?,
                s1: d.f64()?,
                s2: d.f64()?,
                mag: d.f64()?,
            };
            let key = KeyRef::of(key).ok_or(DecodeError("a detector key without its parts"))?;
            let h = key.hash();
            let id = match self.find_key(key, h) {
                Some(id) => id,
                None => self.insert_key(key, h),
            };
            let keep = &vals[len.saturating_sub(w)..];
            for (k, &(v, t)) in keep.iter().enumerate() {
                self.values.set(&mut self.cells, id, k, v, 0..k);
                self.times.set(&mut self.cells, id, k, t, 0..k);
            }
            let slot = &mut self.slots[id as usize];
            slot.head = 0;
            slot.len = keep.len() as u32;
            if keep.len() == len {
                slot.sums = saved;
            } else {
                // A smaller window than when saved: sums over what is kept.
                slot.sums
                    .recompute(self.values.ring(&self.cells, id, 0, keep.len()), keep.len());
            }
            slot.last_t = last_t;
            slot.max_t = max_t;
            self.min_last_t = self.min_last_t.min(last_t);
        }
        Ok(())
    }
}
