//! Quoted logfmt values: the closing quote, the JSON-style escapes in them
//! (decoded as go-logfmt does, an unpaired surrogate becoming U+FFFD), and
//! writing a value in quotes.

use super::super::{closing_quote, FormatError};
use std::borrow::Cow;
use std::fmt::Write;

/// The quoted value whose opening quote is at `open`, and the offset just
/// after its closing quote. Borrowed when it has no escapes.
pub(super) fn quoted(line: &str, open: usize) -> Result<(Cow<'_, str>, usize), FormatError> {
    let start = open + 1;
    let (i, escaped) = closing_quote(
        line.as_bytes(),
        open,
        |_| true,
        "a closing quote for this quoted value",
    )?;
    // `i` is the closing quote, an ASCII byte, so the slices are on character boundaries.
    let raw = &line[start..i];
    let value = if escaped {
        Cow::Owned(unescape(raw).map_err(|at| {
            FormatError::new(
                start + at,
                "a valid escape: \\\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX",
            )
        })?)
    } else {
        Cow::Borrowed(raw)
    };
    Ok((value, i + 1))
}

/// `raw` with its escapes decoded; `Err(offset)` of a bad escape.
fn unescape(raw: &str) -> Result<String, usize> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(p) = rest.find('\\') {
        out.push_str(&rest[..p]);
        let at = raw.len() - rest.len() + p;
        let mut chars = rest[p + 1..].chars();
        let decoded = match chars.next() {
            Some(c @ ('"' | '\\' | '/' | '\'')) => c,
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => {
                let (c, len) = unicode(&rest[p + 2..]).ok_or(at)?;
                out.push(c);
                rest = &rest[p + 2 + len..];
                continue;
            }
            _ => return Err(at),
        };
        out.push(decoded);
        rest = chars.as_str();
    }
    out.push_str(rest);
    Ok(out)
}

/// The character of a `\u` escape from its hex digits at the start of `s`,
/// and how many bytes it used (4, or 10 for a surrogate pair).
fn unicode(s: &str) -> Option<(char, usize)> {
    let hi = hex4(s)?;
    if (0xD800..0xDC00).contains(&hi) {
        let lo = s
            .get(4..6)
            .filter(|t| *t == "\\u")
            .and_then(|_| hex4(s.get(6..)?));
        if let Some(lo) = lo.filter(|lo| (0xDC00..0xE000).contains(lo)) {
            let code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
            return Some((char::from_u32(code).unwrap_or('\u{FFFD}'), 10));
        }
    }
    Some((char::from_u32(hi).unwrap_or('\u{FFFD}'), 4))
}

/// Four hex digits at the start of `s`.
fn hex4(s: &str) -> Option<u32> {
    let digits = s.get(..4)?;
    if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// Writes `value` in quotes, escaping `\`, `"` and control characters.
pub(super) fn render_quoted(value: &str, out: &mut String) {
    out.push('"');
    for ch in value.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c < ' ' || c == '\u{7f}' => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
