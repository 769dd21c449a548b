//! Fast paths for the numbers events carry: short integers and plain
//! decimals (`151.23`), read without the general parsers' setup. Each gives
//! exactly what `str::parse` gives, or `None` to leave the text to it.

/// Powers of ten that are exact in an `f64`.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// `[-]digits` of at most 18 digits (so no overflow is possible).
#[inline]
pub(super) fn int(text: &str) -> Option<i64> {
    let (neg, digits) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        d => (false, d),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as i64;
    }
    Some(if neg { -v } else { v })
}

/// `[-]digits[.digits]` whose digits, read as one integer, are at most
/// 2^53 and whose fraction has at most 22 digits: that integer and the
/// power of ten are both exact, so one IEEE division is the correctly
/// rounded value, as `str::parse` computes it (Clinger's fast path).
#[inline]
pub(super) fn float(text: &str) -> Option<f64> {
    let (neg, b) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        d => (false, d),
    };
    let (mut m, mut digits, mut frac, mut dot) = (0u64, 0u32, 0usize, false);
    for &c in b {
        match c {
            b'0'..=b'9' if digits < 19 => {
                m = m * 10 + (c - b'0') as u64;
                digits += 1;
                frac += dot as usize;
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
    }
    if digits == 0 || m > 1 << 53 || frac >= POW10.len() {
        return None;
    }
    let v = m as f64 / POW10[frac];
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
            "2200.5",
        ] {
            if let Some(v) = float(t) {
                assert_eq!(v.to_bits(), t.parse::<f64>().unwrap().to_bits(), "{t}");
            }
        }
        assert_eq!(int("-42"), Some(-42));
        assert_eq!(
            int("1000000000000000000"),
            None,
            "19 digits go to str::parse"
        );
        assert_eq!(float("1e5"), None, "exponents go to str::parse");
        assert_eq!(
            float("9007199254740993"),
            None,
            "past 2^53 goes to str::parse"
        );
    }

    proptest! {
        #[test]
        fn decimals_match_str_parse_to_the_bit(
            neg in any::<bool>(), int_part in "[0-9]{1,12}", frac in proptest::option::of("[0-9]{0,12}"),
        ) {
            let t = format!("{}{int_part}{}", if neg { "-" } else { "" }, frac.map(|f| format!(".{f}")).unwrap_or_default());
            if let Some(v) = float(&t) {
                prop_assert_eq!(v.to_bits(), t.parse::<f64>().unwrap().to_bits(), "{}", t);
            }
            if let Some(v) = int(&t) {
                prop_assert_eq!(v, t.parse::<i64>().unwrap(), "{}", t);
            }
        }
    }
}
