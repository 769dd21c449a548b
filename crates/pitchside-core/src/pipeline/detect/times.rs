//! The event times of the detector's readings, 3 bytes each instead of 8.
//!
//! A reading's time is stored as a 24-bit offset from its key's base time: in
//! whole milliseconds when every time the key holds is one (RFC 3339 with
//! milliseconds and epoch ms are), which spans 4.6 hours, else in
//! microseconds, 16.7 seconds. Times that fit neither (a key whose window
//! spans more, as a device with a wrong clock can make it) are kept whole:
//! the low 3 bytes in the arena and the high 5 on the side, for that key
//! only, so a key never takes more than the 8 bytes a full time takes. Exact
//! either way: the duplicate check compares whole times.

use super::packed::{load, Coding, Packed, State, LANE_MAX};
use super::{Cells, TIME};
use crate::model::Micros;

/// A key's times: `t = base + offset × (1000 if ms else 1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Offset {
    base: Micros,
    ms: bool,
}

/// Times as offsets from their key's base time.
#[derive(Debug)]
pub(super) struct TimeCoding;

/// The times of every key's readings.
pub(super) type Times = Packed<TimeCoding>;

impl Coding for TimeCoding {
    type Item = Micros;
    type Code = Offset;
    const LANE: usize = TIME;

    #[inline]
    fn encode(t: Micros, c: Offset) -> Option<u32> {
        encode(t, c.base, c.ms)
    }

    #[inline]
    fn decode(off: u32, c: Offset) -> Micros {
        c.base + off as i64 * if c.ms { 1000 } else { 1 }
    }

    /// Whole milliseconds if every time is one and they span at most 4.6
    /// hours; else microseconds if they span at most 16.7 seconds; else none
    /// (whole times). The base is the earliest time: a steady key is
    /// re-encoded when its newest time passes the range, about once every
    /// 4.6 hours less the window's span.
    fn fit(times: impl Iterator<Item = Micros> + Clone, _: Option<Offset>) -> Option<Offset> {
        let (mut lo, mut hi, mut ms) = (Micros::MAX, Micros::MIN, true);
        for t in times {
            lo = lo.min(t);
            hi = hi.max(t);
            ms &= t.rem_euclid(1000) == 0;
        }
        match hi.checked_sub(lo) {
            Some(s) if ms && s / 1000 <= LANE_MAX as i64 => Some(Offset { base: lo, ms: true }),
            Some(s) if s <= LANE_MAX as i64 => Some(Offset {
                base: lo,
                ms: false,
            }),
            _ => None,
        }
    }

    fn to_bits(t: Micros) -> u64 {
        t as u64
    }

    fn from_bits(bits: u64) -> Micros {
        bits as i64
    }
}

impl Times {
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
        let (off, whole) = match self.states[id as usize] {
            State::Empty => return None,
            State::Coded(c) => (TimeCoding::encode(t, c)?, false),
            State::Whole => (t as u32 & LANE_MAX, true),
        };
        let hit = |pos: &usize| {
            load(&ring[*pos], TIME) == off && (!whole || self.get(cells, id, *pos) == t)
        };
        let first = (w - head).min(len);
        (head..head + first).chain(0..len - first).find(hit)
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
    u32::try_from(d).ok().filter(|&w| w <= LANE_MAX)
}

#[cfg(test)]
mod tests {
    use super::super::ring_model::appends;
    use super::*;
    use proptest::prelude::*;

    /// A model of one key's ring: what `Times` must give back.
    fn check(times: &[Micros], window: usize) {
        let mut arena = Times::new(window);
        let mut cells = vec![[0; 6]; 3 * window];
        let id = 1;
        arena.clear(id);
        let mut model: Vec<Option<Micros>> = vec![None; window];
        for (a, &t) in appends(times.len(), window).iter().zip(times) {
            let (head, len) = (a.head, a.len);
            arena.set(&mut cells, id, a.pos, t, a.others.iter().copied());
            model[a.pos] = Some(t);
            for p in a.live(window) {
                assert_eq!(Some(arena.get(&cells, id, p)), model[p], "position {p}");
            }
            for p in a.live(window) {
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
        let minute = 60_000_000i64;
        let times: Vec<Micros> = (0..50)
            .map(|k| 1_764_583_200_000_000 + k * 7 * minute)
            .collect();
        check(&times, 8);
        let mut arena = Times::new(4);
        let mut cells = vec![[0; 6]; 4];
        arena.clear(0);
        arena.set(&mut cells, 0, 0, times[0], std::iter::empty());
        arena.set(
            &mut cells,
            0,
            1,
            times[0] + 279 * minute,
            std::iter::once(0),
        );
        assert_eq!(
            arena.whole_keys(),
            0,
            "4.65 hours of whole milliseconds fit"
        );
        arena.set(&mut cells, 0, 2, times[0] + 20_000_001, [0, 1].into_iter());
        assert_eq!(
            arena.whole_keys(),
            1,
            "4.65 hours with a microsecond do not"
        );
        assert_eq!(arena.get(&cells, 0, 2), times[0] + 20_000_001);
        arena.clear(0);
        arena.set(&mut cells, 0, 0, times[0], std::iter::empty());
        arena.set(
            &mut cells,
            0,
            1,
            times[0] + 280 * minute,
            std::iter::once(0),
        );
        assert_eq!(arena.whole_keys(), 1, "4.67 hours do not");
        arena.clear(0);
        arena.set(&mut cells, 0, 0, times[0] + 1, std::iter::empty());
        arena.set(&mut cells, 0, 1, times[0] + 16_000_000, std::iter::once(0));
        assert_eq!(arena.whole_keys(), 0, "16 seconds of microseconds fit");
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
