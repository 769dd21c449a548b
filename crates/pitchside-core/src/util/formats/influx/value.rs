//! Field values of line protocol: `"strings"` with `\"` and `\\` escapes,
//! booleans, and numbers with their `i` and `u` suffixes, checked against
//! the grammar and the 64-bit ranges.

use super::super::closing_quote;
use super::{FieldValue, FormatError};
use std::borrow::Cow;

/// The field value that starts at `i` (just after its `=`), and the offset
/// just after it.
pub(super) fn field_value(line: &str, i: usize) -> Result<(FieldValue<'_>, usize), FormatError> {
    let b = line.as_bytes();
    match b.get(i) {
        Some(b'"') => string(line, i),
        Some(b't' | b'T' | b'f' | b'F' | b'-' | b'.' | b'0'..=b'9') => {
            let end = b[i..]
                .iter()
                .position(|&c| c == b',' || c == b' ')
                .map_or(b.len(), |p| i + p);
            // `i` and `end` are at ASCII bytes or the end of the line.
            let token = &line[i..end];
            let value = match b.get(i) {
                Some(b't' | b'T' | b'f' | b'F') => boolean(token, i)?,
                _ => number(token, i)?,
            };
            Ok((value, end))
        }
        None | Some(b' ' | b',') => Err(FormatError::new(i, "a field value after '='")),
        Some(_) => Err(FormatError::new(
            i,
            "a field value: a number, a boolean or a \"string\" (nan and inf are not line protocol)",
        )),
    }
}

/// The string field whose opening quote is at `open`.
fn string(line: &str, open: usize) -> Result<(FieldValue<'_>, usize), FormatError> {
    let start = open + 1;
    let (i, escaped) = closing_quote(
        line.as_bytes(),
        open,
        |next| matches!(next, Some(b'"' | b'\\')),
        "a closing quote for this string field",
    )?;
    // `i` is the closing quote: an ASCII byte.
    let raw = &line[start..i];
    let text = if escaped {
        let mut out = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                // Scanned above: a backslash here is followed by `"` or `\`
                // when it is an escape, or kept as written otherwise.
                let rest = chars.as_str();
                if rest.starts_with(['"', '\\']) {
                    out.push(chars.next().unwrap_or('\\'));
                    continue;
                }
            }
            out.push(c);
        }
        Cow::Owned(out)
    } else {
        Cow::Borrowed(raw)
    };
    Ok((FieldValue::Str(text), i + 1))
}

/// A boolean token.
fn boolean(token: &str, at: usize) -> Result<FieldValue<'static>, FormatError> {
    match token {
        "t" | "T" | "true" | "True" | "TRUE" => Ok(FieldValue::Bool(true)),
        "f" | "F" | "false" | "False" | "FALSE" => Ok(FieldValue::Bool(false)),
        _ => Err(FormatError::new(
            at,
            "a boolean: t, T, true, True, TRUE, f, F, false, False or FALSE",
        )),
    }
}

/// A number token: `3i`, `4u` or a float.
fn number(token: &str, at: usize) -> Result<FieldValue<'static>, FormatError> {
    if let Some(digits) = token.strip_suffix('i') {
        let unsigned = digits.strip_prefix('-').unwrap_or(digits);
        if !all_digits(unsigned) {
            return Err(FormatError::new(
                at,
                "an integer: digits, an optional '-' before them, then 'i'",
            ));
        }
        let n = digits.parse().map_err(|_| {
            FormatError::new(
                at,
                "an integer from -9223372036854775808 to 9223372036854775807",
            )
        })?;
        return Ok(FieldValue::Int(n));
    }
    if let Some(digits) = token.strip_suffix('u') {
        if !all_digits(digits) {
            return Err(FormatError::new(
                at,
                "an unsigned integer: digits, then 'u'",
            ));
        }
        let n = digits
            .parse()
            .map_err(|_| FormatError::new(at, "an unsigned integer up to 18446744073709551615"))?;
        return Ok(FieldValue::UInt(n));
    }
    if !is_float(token) {
        return Err(FormatError::new(
            at,
            "a number such as 1, -2.5, 3e-4, 5i or 6u (nan and inf are not line protocol)",
        ));
    }
    match token.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(FieldValue::Float(x)),
        _ => Err(FormatError::new(at, "a float within the 64-bit range")),
    }
}

/// Whether `s` is one or more ASCII digits.
fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

/// Whether `s` is `-?(d+(.d*)?|.d+)([eE][+-]?d+)?`.
fn is_float(s: &str) -> bool {
    let b = s.strip_prefix('-').unwrap_or(s).as_bytes();
    let digits_from = |i: usize| b.iter().skip(i).take_while(|c| c.is_ascii_digit()).count();
    let whole = digits_from(0);
    let mut i = whole;
    let mut frac = 0;
    if b.get(i) == Some(&b'.') {
        frac = digits_from(i + 1);
        i += 1 + frac;
    }
    if whole + frac == 0 {
        return false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp = digits_from(i);
        if exp == 0 {
            return false;
        }
        i += exp;
    }
    i == b.len()
}
