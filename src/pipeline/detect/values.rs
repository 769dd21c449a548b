//! The values of the detector's readings, 4 bytes each instead of 8, exact.
//!
//! Sensors send short decimals (`149.48`, `89.6`, `1042`), and the decoder
//! reads such a number as its digits divided by a power of ten. So a reading
//! is stored as those digits, an `i32` `m`, with one exponent `e` per key,
//! and read back as `m / 10^e`: the same IEEE division of the same two exact
//! numbers, so the same bits. Each value is checked when it is stored; a key
//! whose values need more decimals is re-encoded with a larger exponent (up
//! to [`MAX_EXP`]), and a key with a value no exponent fits (a long
//! fraction, a mapped value after `scale`, `-0.0`, a magnitude past 2^31
//! digits) is kept whole: the low half of its bits in the arena and the high
//! half on the side, 4 more bytes a reading for that key only. Exact either
//! way: the running sums and the duplicate check see the very value stored.

use super::{Cells, VALUE};
use crate::util::hash::FxHashMap;

/// Largest decimal exponent tried: 10^9 and the digits are exact in an `f64`.
const MAX_EXP: u8 = 9;
/// A key whose values are kept whole, in [`Values::codes`].
const WHOLE: u8 = u8::MAX;
/// A key with no reading yet, in [`Values::codes`].
const EMPTY: u8 = u8::MAX - 1;

/// Powers of ten that are exact in an `f64`.
const POW10: [f64; MAX_EXP as usize + 1] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/// How the values of each key are coded: one exponent per key; the digits
/// are the [`VALUE`] halves of the detector's [`Cells`].
#[derive(Debug)]
pub(super) struct Values {
    window: usize,
    /// Per key: its exponent, [`EMPTY`] or [`WHOLE`] (a byte, so the codes of
    /// ten thousand keys stay cached).
    codes: Vec<u8>,
    high: FxHashMap<u32, Box<[u32]>>,
}

impl Values {
    /// The codes of windows of `window` values.
    pub(super) fn new(window: usize) -> Values {
        Values {
            window,
            codes: Vec::new(),
            high: FxHashMap::default(),
        }
    }

    /// Forgets key `id`'s values (its window is emptied).
    pub(super) fn clear(&mut self, id: u32) {
        let i = id as usize;
        if i >= self.codes.len() {
            self.codes.resize(i + 1, EMPTY);
        }
        if self.codes[i] == WHOLE {
            self.high.remove(&id);
        }
        self.codes[i] = EMPTY;
    }

    /// Keys whose values are kept whole (8 bytes a reading).
    pub(super) fn whole_keys(&self) -> usize {
        self.high.len()
    }

    /// The value at ring position `pos` of key `id`.
    #[inline]
    pub(super) fn get(&self, cells: &Cells, id: u32, pos: usize) -> f64 {
        let cell = cells[id as usize * self.window + pos][VALUE];
        match self.codes[id as usize] {
            e if e <= MAX_EXP => decode(cell, e),
            WHOLE => whole(self.high[&id][pos], cell),
            _ => unreachable!("a value read from an empty window"),
        }
    }

    /// The `len` values of key `id` from ring position `head` on, oldest first.
    pub(super) fn ring<'a>(
        &'a self,
        cells: &'a Cells,
        id: u32,
        head: usize,
        len: usize,
    ) -> impl Iterator<Item = f64> + Clone + 'a {
        let w = self.window;
        (0..len).map(move |k| self.get(cells, id, (head + k) % w))
    }

    /// Stores `x` at ring position `pos` of key `id`, whose other live values
    /// are at `others`. Re-encodes the key's values when `x` does not fit.
    #[inline]
    pub(super) fn set<I>(&mut self, cells: &mut Cells, id: u32, pos: usize, x: f64, others: I)
    where
        I: Iterator<Item = usize> + Clone,
    {
        let e = self.codes[id as usize];
        if e <= MAX_EXP {
            if let Some(cell) = encode(x, e) {
                cells[id as usize * self.window + pos][VALUE] = cell;
                return;
            }
        }
        self.set_slow(cells, id, pos, x, others);
    }

    /// [`Values::set`] for a value that does not fit the key's exponent (its
    /// first value, more decimals) or a key kept whole.
    #[cold]
    #[inline(never)]
    fn set_slow<I: Iterator<Item = usize> + Clone>(
        &mut self,
        cells: &mut Cells,
        id: u32,
        pos: usize,
        x: f64,
        others: I,
    ) {
        if self.codes[id as usize] != WHOLE {
            self.recode(cells, id, x, others);
        }
        let at = id as usize * self.window + pos;
        match self.codes[id as usize] {
            WHOLE => {
                let bits = x.to_bits();
                cells[at][VALUE] = bits as u32;
                if let Some(h) = self.high.get_mut(&id) {
                    h[pos] = (bits >> 32) as u32;
                }
            }
            e => cells[at][VALUE] = encode(x, e).expect("the new exponent fits x"),
        }
    }

    /// Picks the smallest exponent that fits key `id`'s live values and `x`
    /// (smaller than the present one, too, once the values that needed it
    /// have left the window), else whole values, and rewrites the live
    /// values in it.
    fn recode<I: Iterator<Item = usize> + Clone>(
        &mut self,
        cells: &mut Cells,
        id: u32,
        x: f64,
        others: I,
    ) {
        let fits = |e: u8| {
            encode(x, e).is_some()
                && others
                    .clone()
                    .all(|p| encode(self.get(cells, id, p), e).is_some())
        };
        let new = (0..=MAX_EXP).find(|&e| fits(e)).unwrap_or(WHOLE);
        let live: Vec<(usize, f64)> = others.map(|p| (p, self.get(cells, id, p))).collect();
        if new == WHOLE {
            self.high
                .insert(id, vec![0; self.window].into_boxed_slice());
        }
        self.codes[id as usize] = new;
        let base = id as usize * self.window;
        for (pos, v) in live {
            let bits = v.to_bits();
            cells[base + pos][VALUE] = match new {
                WHOLE => bits as u32,
                e => encode(v, e).expect("the new exponent fits"),
            };
            if let Some(h) = self.high.get_mut(&id) {
                h[pos] = (bits >> 32) as u32;
            }
        }
    }
}

/// `x` as digits `m` with `x == m / 10^e` to the bit, if it is one.
#[inline]
fn encode(x: f64, e: u8) -> Option<u32> {
    // Rounded half away from zero by truncating (`f64::round` is a library
    // call on baseline x86-64); `as` saturates out of range. Any `m` that
    // reads back as `x` to the bit is right, and the check is exact.
    let half = if x < 0.0 { -0.5 } else { 0.5 };
    let m = (x * POW10[e as usize] + half) as i32;
    (decode(m as u32, e).to_bits() == x.to_bits()).then_some(m as u32)
}

/// The value of digits `cell` at exponent `e`.
#[inline]
fn decode(cell: u32, e: u8) -> f64 {
    cell as i32 as f64 / POW10[e as usize]
}

/// A value from the high and low halves of its bits.
fn whole(high: u32, low: u32) -> f64 {
    f64::from_bits((high as u64) << 32 | low as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A model of one key's ring: what `Values` must give back, to the bit.
    fn check(values: &[f64], window: usize) -> Values {
        let mut arena = Values::new(window);
        let mut cells = vec![[0; 2]; 3 * window];
        let id = 1;
        arena.clear(id);
        let (mut head, mut len) = (0usize, 0usize);
        let mut model: Vec<Option<u64>> = vec![None; window];
        for &x in values {
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
            arena.set(&mut cells, id, pos, x, others.into_iter());
            model[pos] = Some(x.to_bits());
            for k in 0..len {
                let p = (head + k) % window;
                assert_eq!(
                    Some(arena.get(&cells, id, p).to_bits()),
                    model[p],
                    "position {p}"
                );
            }
            let ring: Vec<u64> = arena
                .ring(&cells, id, head, len)
                .map(f64::to_bits)
                .collect();
            let want: Vec<u64> = (0..len)
                .filter_map(|k| model[(head + k) % window])
                .collect();
            assert_eq!(ring, want);
        }
        arena
    }

    #[test]
    fn short_decimals_take_four_bytes_and_come_back_to_the_bit() {
        let values: Vec<f64> = [
            "149.48",
            "150.5",
            "72",
            "-3.25",
            "0.001",
            "214748.3647",
            "0",
        ]
        .iter()
        .map(|t| t.parse().unwrap_or(0.0))
        .collect();
        let arena = check(&values, 4);
        assert_eq!(arena.whole_keys(), 0, "every one is a short decimal");
        assert_eq!(arena.codes[1], 4, "214748.3647 raised the exponent to 4");
        // Once the values with four decimals have left the window, a value
        // that needs a smaller exponent lowers it instead of going whole.
        let arena = check(&[0.0001, 1.5, 2.5, 3.5, 4.5, 2_000_000.5], 4);
        assert_eq!((arena.whole_keys(), arena.codes[1]), (0, 1));
    }

    #[test]
    fn values_no_exponent_fits_keep_the_key_whole_until_it_is_cleared() {
        let mut arena = check(&[89.6, 1.0 / 3.0, 12.5], 4);
        assert_eq!(arena.whole_keys(), 1, "a third has no short decimal");
        arena.clear(1);
        assert_eq!(arena.whole_keys(), 0);
        for odd in [-0.0, 1e300, f64::MIN_POSITIVE, 2147483648.0, 0.1 + 0.2] {
            let arena = check(&[1.5, odd, 2.5], 3);
            assert_eq!(arena.whole_keys(), 1, "{odd:e}");
        }
    }

    proptest! {
        #[test]
        fn any_values_come_back(
            steps in proptest::collection::vec(
                (-2_000_000_000i64..2_000_000_000, 0u8..12, any::<u64>(), any::<bool>()),
                1..60,
            ),
            window in 2usize..12,
        ) {
            // Mostly decimals as a decoder reads them, some any finite bits.
            let values: Vec<f64> = steps
                .iter()
                .map(|&(m, e, bits, wild)| {
                    let wild_value = f64::from_bits(bits);
                    if wild && wild_value.is_finite() {
                        wild_value
                    } else {
                        format!("{m}e-{e}").parse().unwrap_or(0.0)
                    }
                })
                .collect();
            check(&values, window);
        }
    }
}
