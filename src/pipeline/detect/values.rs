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

use super::packed::{Coding, Packed};
use super::{Cells, VALUE};

/// Largest decimal exponent tried: 10^9 and the digits are exact in an `f64`.
const MAX_EXP: u8 = 9;

/// Powers of ten that are exact in an `f64`.
const POW10: [f64; MAX_EXP as usize + 1] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/// Values as decimal digits with one exponent per key.
#[derive(Debug)]
pub(super) struct ValueCoding;

/// The values of every key's readings.
pub(super) type Values = Packed<ValueCoding>;

impl Coding for ValueCoding {
    type Item = f64;
    /// The decimal exponent.
    type Code = u8;
    const LANE: usize = VALUE;

    #[inline]
    fn encode(x: f64, e: u8) -> Option<u32> {
        encode(x, e)
    }

    #[inline]
    fn decode(cell: u32, e: u8) -> f64 {
        decode(cell, e)
    }

    /// The exponent last picked when it fits every value, else the smallest
    /// that does (smaller than a key's present one, too, once the values
    /// that needed it have left the window).
    fn fit(values: impl Iterator<Item = f64> + Clone, hint: Option<u8>) -> Option<u8> {
        let fits = |e: u8| values.clone().all(|v| encode(v, e).is_some());
        hint.filter(|&e| fits(e))
            .or_else(|| (0..=MAX_EXP).find(|&e| fits(e)))
    }

    fn to_bits(x: f64) -> u64 {
        x.to_bits()
    }

    fn from_bits(bits: u64) -> f64 {
        f64::from_bits(bits)
    }
}

impl Values {
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

#[cfg(test)]
mod tests {
    use super::super::packed::State;
    use super::super::ring_model::appends;
    use super::*;
    use proptest::prelude::*;

    /// A model of one key's ring: what `Values` must give back, to the bit.
    fn check(values: &[f64], window: usize) -> Values {
        let mut arena = Values::new(window);
        let mut cells = vec![[0; 2]; 3 * window];
        let id = 1;
        arena.clear(id);
        let mut model: Vec<Option<u64>> = vec![None; window];
        for (a, &x) in appends(values.len(), window).iter().zip(values) {
            arena.set(&mut cells, id, a.pos, x, a.others.iter().copied());
            model[a.pos] = Some(x.to_bits());
            let ring: Vec<u64> = arena
                .ring(&cells, id, a.head, a.len)
                .map(f64::to_bits)
                .collect();
            let want: Vec<u64> = a.live(window).filter_map(|p| model[p]).collect();
            assert_eq!(ring, want);
            for p in a.live(window) {
                let got = arena.get(&cells, id, p).to_bits();
                assert_eq!(Some(got), model[p], "position {p}");
            }
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
        assert_eq!(
            arena.states[1],
            State::Coded(4),
            "214748.3647 raised the exponent to 4"
        );
        // Once the values with four decimals have left the window, a value
        // that needs a smaller exponent lowers it instead of going whole.
        let arena = check(&[0.0001, 1.5, 2.5, 3.5, 4.5, 2_000_000.5], 4);
        assert_eq!((arena.whole_keys(), arena.states[1]), (0, State::Coded(1)));
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
