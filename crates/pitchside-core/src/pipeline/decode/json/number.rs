//! A JSON number as the reader hands it over: its text (the grammar
//! already checked) and, for the plain numbers events carry (`1042`,
//! `151.23`), its digits read as one integer in the same pass. So an
//! integer or a decimal is read once, not once by the reader and again by
//! its consumer. Each fast path gives exactly what `str::parse` gives, or
//! `None` to leave the text to it.

use super::{JsonValue, Reader, R};

/// Powers of ten that are exact in an `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Most digits (integer and fraction together) of a plain number: below
/// 10^18, so they fit in [`DIGITS`] bits and an `i64`.
const MAX_DIGITS: usize = 18;
/// Bits of [`Number::packed`] that hold the digits.
const DIGITS: u32 = 60;
/// The fraction-length field of [`Number::packed`] of a number that is not
/// plain (an exponent, more than [`MAX_DIGITS`] digits or a fraction of 15
/// digits or more).
const NOT_PLAIN: u64 = 15;

/// A number token.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Number<'a> {
    /// The text, as in the input.
    text: &'a str,
    /// The digits as one integer (low [`DIGITS`] bits) and the number of
    /// them after the point (the top four), or [`NOT_PLAIN`] there.
    packed: u64,
}

impl<'a> Number<'a> {
    /// The number `text` spells, when it is exactly one JSON number.
    pub fn parse(text: &'a str) -> Option<Number<'a>> {
        let mut r = Reader::new(text);
        match r.number() {
            Ok(JsonValue::Num(n)) if r.i == text.len() => Some(n),
            _ => None,
        }
    }

    /// The text, as in the input.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The digits and the fraction's length, when the number is plain.
    #[inline]
    fn plain(&self) -> Option<(u64, usize)> {
        let frac = self.packed >> DIGITS;
        (frac != NOT_PLAIN).then_some((self.packed & ((1 << DIGITS) - 1), frac as usize))
    }

    fn negative(&self) -> bool {
        self.text.starts_with('-')
    }

    /// The value of a plain integer (at most 18 digits); `None` for any
    /// other number (parse its [`Number::text`]).
    #[inline]
    pub fn int(&self) -> Option<i64> {
        match self.plain()? {
            (m, 0) => Some(if self.negative() {
                -(m as i64)
            } else {
                m as i64
            }),
            _ => None,
        }
    }

    /// The value of a plain decimal whose digits, read as one integer, are
    /// at most 2^53: that integer and the power of ten are both exact, so
    /// one IEEE division is the correctly rounded value, as `str::parse`
    /// computes it (Clinger's fast path). `None` for any other number.
    #[inline]
    pub fn float(&self) -> Option<f64> {
        let (m, frac) = self.plain()?;
        if m > 1 << 53 {
            return None;
        }
        let v = m as f64 / POW10[frac];
        Some(if self.negative() { -v } else { v })
    }
}

impl std::fmt::Display for Number<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text)
    }
}

impl<'a> Reader<'a> {
    /// The digits from here on, appended to `m` (wrapping: the caller
    /// counts them and drops a value of more than [`MAX_DIGITS`]).
    #[inline]
    fn digits_onto(&mut self, mut m: u64) -> u64 {
        let mut i = self.i;
        // One compare a byte: below '0' wraps to more than 9.
        while let Some(d) = self
            .b
            .get(i)
            .map(|c| c.wrapping_sub(b'0'))
            .filter(|&d| d <= 9)
        {
            m = m.wrapping_mul(10).wrapping_add(d as u64);
            i += 1;
        }
        self.i = i;
        m
    }

    pub(super) fn number(&mut self) -> R<JsonValue<'a>> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        let int_start = self.i;
        let mut m = 0;
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => m = self.digits_onto(0),
            _ => return Err(self.err("a digit")),
        }
        let mut digits = self.i - int_start;
        let mut frac = 0;
        if self.peek() == Some(b'.') {
            self.i += 1;
            let frac_start = self.i;
            m = self.digits_onto(m);
            frac = self.i - frac_start;
            if frac == 0 {
                return Err(self.err("a digit after '.'"));
            }
            digits += frac;
        }
        let mut plain = digits <= MAX_DIGITS && (frac as u64) < NOT_PLAIN;
        if let Some(b'e' | b'E') = self.peek() {
            plain = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            let exp_start = self.i;
            self.digits_onto(0);
            if self.i == exp_start {
                return Err(self.err("a digit in the exponent"));
            }
        }
        let packed = if plain {
            m | (frac as u64) << DIGITS
        } else {
            NOT_PLAIN << DIGITS
        };
        Ok(JsonValue::Num(Number {
            text: &self.s[start..self.i],
            packed,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn num(t: &str) -> Number<'_> {
        Number::parse(t).unwrap_or_else(|| panic!("{t} is not a JSON number"))
    }

    #[test]
    fn plain_numbers_read_as_str_parse_reads_them() {
        for t in [
            "0",
            "-0",
            "7",
            "-42",
            "999999999999999999",
            "151.23",
            "-0.0",
            "0.1",
            "0.001",
            "2200.5",
            "1764531000001",
        ] {
            let n = num(t);
            assert!(n.float().is_some() || n.int().is_some(), "{t} is plain");
            if let Some(v) = n.float() {
                assert_eq!(v.to_bits(), t.parse::<f64>().unwrap().to_bits(), "{t}");
            }
            if let Some(i) = n.int() {
                assert_eq!(i, t.parse::<i64>().unwrap(), "{t}");
            }
        }
        assert_eq!(num("-42").int(), Some(-42));
        assert_eq!(
            num("999999999999999999").int(),
            Some(999_999_999_999_999_999)
        );
        assert_eq!(num("1764531000001").int(), Some(1_764_531_000_001));
        assert_eq!(num("151.23").int(), None, "a fraction is not an integer");
        assert_eq!(
            num("1000000000000000000").int(),
            None,
            "19 digits go to str::parse"
        );
        assert_eq!(num("1e5").float(), None, "exponents go to str::parse");
        assert_eq!(num("1e5").int(), None);
        assert_eq!(
            num("9007199254740993").float(),
            None,
            "past 2^53 goes to str::parse"
        );
        assert_eq!(num("0.123456789012345").float(), None, "15 fraction digits");
        assert_eq!(num("12.5").text(), "12.5");
    }

    #[test]
    fn the_grammar_is_checked_as_before() {
        for bad in [
            "-", "01", "1.", ".5", "1e", "1e+", "+1", "--1", "1.e5", "0x1",
        ] {
            assert_eq!(Number::parse(bad), None, "{bad}");
        }
        for good in [
            "0", "-0", "1e5", "1E+5", "1e-05", "-12.50e3", "10", "100.001",
        ] {
            assert!(Number::parse(good).is_some(), "{good}");
        }
    }

    proptest! {
        #[test]
        fn numbers_match_str_parse_to_the_bit(
            neg in any::<bool>(),
            int_part in "0|[1-9][0-9]{0,19}",
            frac in proptest::option::of("[0-9]{1,16}"),
            exp in proptest::option::of("[eE][+-]?[0-9]{1,2}"),
        ) {
            let t = format!(
                "{}{int_part}{}{}",
                if neg { "-" } else { "" },
                frac.map(|f| format!(".{f}")).unwrap_or_default(),
                exp.unwrap_or_default(),
            );
            let n = Number::parse(&t);
            prop_assert!(n.is_some(), "{}", t);
            let n = n.unwrap_or(Number { text: "", packed: 0 });
            prop_assert_eq!(n.text(), t.as_str());
            if let Some(v) = n.float() {
                prop_assert_eq!(v.to_bits(), t.parse::<f64>().unwrap().to_bits(), "{}", t);
            }
            if let Some(v) = n.int() {
                prop_assert_eq!(v, t.parse::<i64>().unwrap(), "{}", t);
            }
        }
    }
}
