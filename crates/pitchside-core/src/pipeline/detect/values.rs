//! The values of the detector's readings, 3 bytes each instead of 8, exact.
//!
//! Sensors send short decimals (`149.48`, `89.6`, `1042`), and the decoder
//! reads such a number as its digits divided by a power of ten. So a reading
//! is stored as those digits `m`, with one exponent `e` and one base `b` per
//! key: the cell holds `m − b` in 24 bits, and the value is read back as
//! `m / 10^e`, the same IEEE division of the same two exact numbers, so the
//! same bits. Each value is checked when it is stored. A key whose values
//! need more decimals, or spread past the 16.7 million digits a cell holds
//! around the base, is re-encoded (exponents up to [`MAX_EXP`]; the base
//! below the lowest value by half the room the spread leaves, so that the
//! spread sits in the middle of the cell's range and the next values fit
//! too), and a
//! key with a value no exponent fits (a long fraction, a mapped value after
//! `scale`, `-0.0`, a magnitude past 2^31 digits) is kept whole: the low 3
//! bytes of its bits in the arena and the high 5 on the side, for that key
//! only. Exact either way: the running sums and the duplicate check see the
//! very value stored.

use super::packed::{Coding, Packed, State, LANE_MAX};
use super::{Cells, VALUE};

/// Largest decimal exponent tried: more decimals than 9 rarely leave a
/// sensor value's digits under 2^31, the bound [`digits`] keeps.
const MAX_EXP: u8 = 9;

/// A decimal exponent, 0 to [`MAX_EXP`]: an enum, so that a key's state
/// ([`State`] of [`Digits`]) is 8 bytes, not 12.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Exp {
    E0,
    E1,
    E2,
    E3,
    E4,
    E5,
    E6,
    E7,
    E8,
    E9,
}

/// Every exponent, smallest first.
const EXPS: [Exp; MAX_EXP as usize + 1] = [
    Exp::E0,
    Exp::E1,
    Exp::E2,
    Exp::E3,
    Exp::E4,
    Exp::E5,
    Exp::E6,
    Exp::E7,
    Exp::E8,
    Exp::E9,
];

const _: () = assert!(std::mem::size_of::<State<Digits>>() == 8);

/// Powers of ten that are exact in an `f64`.
const POW10: [f64; MAX_EXP as usize + 1] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/// Values as decimal digits with one exponent per key.
#[derive(Debug)]
pub(super) struct ValueCoding;

/// The values of every key's readings.
pub(super) type Values = Packed<ValueCoding>;

/// A key's values: `x = (base + cell) / 10^exp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Digits {
    exp: Exp,
    base: i32,
}

impl Coding for ValueCoding {
    type Item = f64;
    type Code = Digits;
    const LANE: usize = VALUE;

    #[inline]
    fn encode(x: f64, c: Digits) -> Option<u32> {
        let off = digits(x, c.exp)? - c.base as i64;
        (0..=LANE_MAX as i64).contains(&off).then_some(off as u32)
    }

    #[inline]
    fn decode(cell: u32, c: Digits) -> f64 {
        value(c.base as i64 + cell as i64, c.exp)
    }

    /// The exponent last picked (for any key) when it fits every value, else
    /// the smallest that does, which can be smaller than the key's present
    /// one once the values that needed it have left the window; the base
    /// below the lowest value by half the room the spread leaves (never
    /// below `i32::MIN`, which the lowest value is above).
    fn fit(values: impl Iterator<Item = f64> + Clone, hint: Option<Digits>) -> Option<Digits> {
        let at = |exp: Exp| {
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            for v in values.clone() {
                let m = digits(v, exp)?;
                (lo, hi) = (lo.min(m), hi.max(m));
            }
            let room = (LANE_MAX as i64).checked_sub(hi - lo).filter(|&r| r >= 0)?;
            Some(Digits {
                exp,
                base: (lo - room / 2).max(i32::MIN as i64) as i32,
            })
        };
        hint.and_then(|h| at(h.exp))
            .or_else(|| EXPS.into_iter().find_map(at))
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
fn digits(x: f64, e: Exp) -> Option<i64> {
    // Rounded half away from zero by truncating (`f64::round` is a library
    // call on baseline x86-64); `as` saturates out of range. Any `m` that
    // reads back as `x` to the bit is right, and the check is exact.
    let half = if x < 0.0 { -0.5 } else { 0.5 };
    let m = (x * POW10[e as usize] + half) as i64;
    (m.unsigned_abs() < 1 << 31 && value(m, e).to_bits() == x.to_bits()).then_some(m)
}

/// The value of digits `m` at exponent `e`.
#[inline]
fn value(m: i64, e: Exp) -> f64 {
    m as f64 / POW10[e as usize]
}

#[cfg(test)]
mod tests {
    use super::super::ring_model::appends;
    use super::*;
    use proptest::prelude::*;

    /// A model of one key's ring: what `Values` must give back, to the bit.
    fn check(values: &[f64], window: usize) -> Values {
        let mut arena = Values::new(window);
        let mut cells = vec![[0; 6]; 3 * window];
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
    fn short_decimals_take_three_bytes_and_come_back_to_the_bit() {
        let values: Vec<f64> = ["149.48", "150.5", "72", "-3.25", "0.001", "14.3647", "0"]
            .iter()
            .map(|t| t.parse().unwrap_or(0.0))
            .collect();
        let arena = check(&values, 4);
        assert_eq!(arena.whole_keys(), 0, "every one is a short decimal");
        let exp = |a: &Values| match a.states[1] {
            State::Coded(c) => Some(c.exp as u8),
            _ => None,
        };
        assert_eq!(exp(&arena), Some(4), "14.3647 raised the exponent to 4");
        // Once the values with four decimals have left the window, a value
        // that needs a smaller exponent lowers it instead of going whole.
        let arena = check(&[0.0001, 1.5, 2.5, 3.5, 4.5, 1_000_000.5], 4);
        assert_eq!((arena.whole_keys(), exp(&arena)), (0, Some(1)));
        // Digits far from zero fit around their base; a spread wider than a
        // cell's 24 bits does not, at any exponent.
        let arena = check(&[51.5073509, 51.5073611, 51.5072977, 51.5074001], 4);
        assert_eq!((arena.whole_keys(), exp(&arena)), (0, Some(7)));
        let arena = check(&[0.0, 16_777_215.0], 4);
        assert_eq!(arena.whole_keys(), 0, "a spread of 2^24 - 1 digits fits");
        let arena = check(&[0.0, 16_777_216.0], 4);
        assert_eq!(arena.whole_keys(), 1, "a spread of 2^24 digits");
        // Digits near the ends of an i32 keep a base inside it.
        for edge in [-2_147_483_000.0, 2_147_483_000.0, -2_147_483_647.0] {
            let arena = check(&[edge, edge + 1.0], 4);
            assert_eq!(arena.whole_keys(), 0, "{edge}");
        }
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
