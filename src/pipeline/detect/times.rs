//! The event times of the detector's readings, 4 bytes each instead of 8.
//!
//! A reading's time is stored as an offset from its key's base time: in
//! microseconds while the key's window spans at most 35 minutes (the cheapest
//! to encode), else in whole milliseconds when every time the key holds is one
//! (RFC 3339 with milliseconds and epoch ms are: 49 days of span), else in
//! microseconds up to 71 minutes. Times that fit none (a key whose window spans
//! more, as a device with a wrong clock can make it) are kept whole: the low
//! half in the arena and the high half on the side, 4 more bytes a reading for
//! that key only, so a key never takes more than the 8 bytes a full time takes.
//! Exact either way: the duplicate check compares whole times.

use super::{Cells, TIME};
use crate::model::Micros;
use crate::util::hash::FxHashMap;

/// How one key's times are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    /// No reading yet.
    Empty,
    /// `t = base + offset × (1000 if ms else 1)`.
    Offset { base: Micros, ms: bool },
    /// `t = high << 32 | offset`, the high halves in [`Times::high`].
    Whole,
}

/// How the times of each key are coded: one [`Code`] per key; the offsets
/// are the [`TIME`] halves of the detector's [`Cells`].
#[derive(Debug)]
pub(super) struct Times {
    window: usize,
    codes: Vec<Code>,
    high: FxHashMap<u32, Box<[u32]>>,
}

impl Times {
    /// The codes of windows of `window` times.
    pub(super) fn new(window: usize) -> Times {
        Times {
            window,
            codes: Vec::new(),
            high: FxHashMap::default(),
        }
    }

    /// Forgets key `id`'s times (its window is emptied).
    pub(super) fn clear(&mut self, id: u32) {
        let i = id as usize;
        if i >= self.codes.len() {
            self.codes.resize(i + 1, Code::Empty);
        }
        if self.codes[i] == Code::Whole {
            self.high.remove(&id);
        }
        self.codes[i] = Code::Empty;
    }

    /// Keys whose times are kept whole (8 bytes a reading).
    pub(super) fn whole_keys(&self) -> usize {
        self.high.len()
    }

    /// The time at ring position `pos` of key `id`.
    pub(super) fn get(&self, cells: &Cells, id: u32, pos: usize) -> Micros {
        let off = cells[id as usize * self.window + pos][TIME];
        match self.codes[id as usize] {
            Code::Offset { base, ms } => base + off as i64 * if ms { 1000 } else { 1 },
            Code::Whole => whole(self.high[&id][pos], off),
            Code::Empty => unreachable!("a time read from an empty window"),
        }
    }

    /// The ring position of key `id`'s reading at time `t` among the `len`
    /// readings from ring position `head`, if it holds one.
    pub(super) fn find(
        &self,
        cells: &Cells,
        id: u32,
        head: usize,
        len: usize,
        t: Micros,
    ) -> Option<usize> {
        let w = self.window;
        let ring = &cells[id as usize * w..][..w];
        let (off, high) = match self.codes[id as usize] {
            Code::Empty => return None,
            Code::Offset { base, ms } => (encode(t, base, ms)?, None),
            Code::Whole => (t as u32, Some(((t as u64 >> 32) as u32, &self.high[&id]))),
        };
        let hit = |pos: &usize| ring[*pos][TIME] == off && high.is_none_or(|(h, hs)| hs[*pos] == h);
        let first = (w - head).min(len);
        (head..head + first).chain(0..len - first).find(hit)
    }

    /// Stores `t` at ring position `pos` of key `id`, whose other live readings
    /// are at `others`. Re-encodes the key's times when `t` does not fit.
    #[inline]
    pub(super) fn set<I>(&mut self, cells: &mut Cells, id: u32, pos: usize, t: Micros, others: I)
    where
        I: Iterator<Item = usize> + Clone,
    {
        if let Code::Offset { base, ms } = self.codes[id as usize] {
            if let Some(off) = encode(t, base, ms) {
                cells[id as usize * self.window + pos][TIME] = off;
                return;
            }
        }
        self.set_slow(cells, id, pos, t, others);
    }

    /// [`Times::set`] for a time that does not fit the key's code (its first
    /// reading, a jump past the offset's range) or a key kept whole.
    #[cold]
    #[inline(never)]
    fn set_slow<I: Iterator<Item = usize> + Clone>(
        &mut self,
        cells: &mut Cells,
        id: u32,
        pos: usize,
        t: Micros,
        others: I,
    ) {
        if self.codes[id as usize] != Code::Whole {
            self.recode(cells, id, t, others);
        }
        let at = id as usize * self.window + pos;
        match self.codes[id as usize] {
            Code::Offset { base, ms } => {
                cells[at][TIME] = encode(t, base, ms).expect("the new code fits t");
            }
            _ => {
                cells[at][TIME] = t as u32;
                if let Some(h) = self.high.get_mut(&id) {
                    h[pos] = (t as u64 >> 32) as u32;
                }
            }
        }
    }

    /// Picks the code that fits key `id`'s live times and `t`, and rewrites
    /// the live times in it. Microseconds (the cheapest to encode) while the
    /// span is at most half the offset's range, so that a steady key is
    /// re-encoded at most every 36 minutes; then whole milliseconds if every
    /// time is one; then microseconds if they still fit; else whole times.
    fn recode<I: Iterator<Item = usize> + Clone>(
        &mut self,
        cells: &mut Cells,
        id: u32,
        t: Micros,
        others: I,
    ) {
        let (mut lo, mut hi, mut ms) = (t, t, t.rem_euclid(1000) == 0);
        for pos in others.clone() {
            let x = self.get(cells, id, pos);
            lo = lo.min(x);
            hi = hi.max(x);
            ms &= x.rem_euclid(1000) == 0;
        }
        let new = match hi.checked_sub(lo) {
            Some(s) if s <= i32::MAX as i64 => Code::Offset {
                base: lo,
                ms: false,
            },
            Some(s) if ms && s / 1000 <= u32::MAX as i64 => Code::Offset { base: lo, ms: true },
            Some(s) if s <= u32::MAX as i64 => Code::Offset {
                base: lo,
                ms: false,
            },
            _ => Code::Whole,
        };
        if new == Code::Whole {
            self.high
                .insert(id, vec![0; self.window].into_boxed_slice());
        }
        let base = id as usize * self.window;
        for pos in others {
            let x = self.get(cells, id, pos);
            cells[base + pos][TIME] = match new {
                Code::Offset { base, ms } => encode(x, base, ms).expect("the new code fits"),
                _ => x as u32,
            };
            if let Some(h) = self.high.get_mut(&id) {
                h[pos] = (x as u64 >> 32) as u32;
            }
        }
        self.codes[id as usize] = new;
    }
}

/// `t` as an offset from `base` (in ms when `ms`), if it is one.
#[inline]
fn encode(t: Micros, base: Micros, ms: bool) -> Option<u32> {
    let d = t.checked_sub(base)?;
    let d = if ms {
        if d % 1000 != 0 {
            return None;
        }
        d / 1000
    } else {
        d
    };
    u32::try_from(d).ok()
}

/// A time from its high and low halves.
fn whole(high: u32, low: u32) -> Micros {
    ((high as u64) << 32 | low as u64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A model of one key's ring: what `Times` must give back.
    fn check(times: &[Micros], window: usize) {
        let mut arena = Times::new(window);
        let mut cells = vec![[0; 2]; 3 * window];
        let id = 1;
        arena.clear(id);
        let (mut head, mut len) = (0usize, 0usize);
        let mut model: Vec<Option<Micros>> = vec![None; window];
        for &t in times {
            let (pos, others): (usize, Vec<usize>) = if len == window {
                let o = (1..window).map(|k| (head + k) % window).collect();
                let p = head;
                head = (head + 1) % window;
                (p, o)
            } else {
                let o = (0..len).map(|k| (head + k) % window).collect();
                len += 1;
                ((head + len - 1) % window, o)
            };
            arena.set(&mut cells, id, pos, t, others.into_iter());
            model[pos] = Some(t);
            for k in 0..len {
                let p = (head + k) % window;
                assert_eq!(Some(arena.get(&cells, id, p)), model[p], "position {p}");
            }
            for k in 0..len {
                let p = (head + k) % window;
                let found = arena
                    .find(&cells, id, head, len, model[p].unwrap())
                    .unwrap();
                assert_eq!(model[found], model[p]);
            }
            let absent = times
                .iter()
                .map(|x| x.wrapping_add(1))
                .find(|x| !model.contains(&Some(*x)));
            if let Some(x) = absent {
                assert_eq!(
                    arena.find(&cells, id, head, len, x),
                    None,
                    "{x} is not held"
                );
            }
        }
    }

    #[test]
    fn whole_milliseconds_take_the_millisecond_code() {
        let day_ms = 86_400_000_000i64;
        let times: Vec<Micros> = (0..50)
            .map(|k| 1_764_583_200_000_000 + k * day_ms / 2)
            .collect();
        check(&times, 8);
        let mut arena = Times::new(4);
        let mut cells = vec![[0; 2]; 4];
        arena.clear(0);
        arena.set(&mut cells, 0, 0, times[0], std::iter::empty());
        arena.set(&mut cells, 0, 1, times[0] + 40 * day_ms, std::iter::once(0));
        assert_eq!(arena.whole_keys(), 0, "40 days of whole milliseconds fit");
        arena.set(&mut cells, 0, 2, times[0] + 1, [0, 1].into_iter());
        assert_eq!(arena.whole_keys(), 1, "40 days with a microsecond do not");
        assert_eq!(arena.get(&cells, 0, 2), times[0] + 1);
        arena.clear(0);
        assert_eq!(arena.whole_keys(), 0);
    }

    #[test]
    fn microseconds_rebase_and_go_back_in_time() {
        let t0 = 1_764_583_200_000_001i64;
        let times: Vec<Micros> = (0..200)
            .map(|k| t0 + k * 45_000_007 - (k % 7) * 3_000_000_000)
            .collect();
        check(&times, 16);
    }

    #[test]
    fn extreme_times_are_exact() {
        check(
            &[
                i64::MIN,
                i64::MAX,
                0,
                -1,
                1,
                i64::MIN + 1,
                4_294_967_296,
                -4_294_967_296,
            ],
            4,
        );
    }

    proptest! {
        #[test]
        fn any_times_come_back(
            base in any::<i64>(),
            steps in proptest::collection::vec((any::<bool>(), -5_000_000_000i64..5_000_000_000), 1..60),
            window in 2usize..12,
        ) {
            let times: Vec<Micros> = steps
                .iter()
                .map(|&(wild, d)| if wild { base.wrapping_add(d.wrapping_mul(1_000_003)) } else { base.wrapping_add(d / 1000 * 1000) })
                .collect();
            check(&times, window);
        }
    }
}
