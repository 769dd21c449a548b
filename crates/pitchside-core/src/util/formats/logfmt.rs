//! logfmt as go-logfmt reads it: `key=value` pairs separated by white space
//! (any byte up to `' '`). A key is one or more bytes other than white space,
//! `=` and `"`; a key without `=` (`flag`) or with nothing after it (`k=`)
//! has the empty value. A quoted value takes JSON escapes (`\"`, `\\`, `\/`,
//! `\b`, `\f`, `\n`, `\r`, `\t`, `\uXXXX`) and go-logfmt's `\'`; an unquoted
//! value may not hold `=` or `"`.

mod unquote;

use super::FormatError;
use std::borrow::Cow;

/// Splits one logfmt line into `(key, value)` pairs in `out` (cleared
/// first), in order; a repeated key appears twice. A blank line gives no
/// pairs. Keys and values borrow from `line` unless a value has escapes.
pub fn parse<'a>(
    line: &'a str,
    out: &mut Vec<(Cow<'a, str>, Cow<'a, str>)>,
) -> Result<(), FormatError> {
    out.clear();
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        while b.get(i).is_some_and(|&c| c <= b' ') {
            i += 1;
        }
        if i >= b.len() {
            return Ok(());
        }
        let start = i;
        while b
            .get(i)
            .is_some_and(|&c| c > b' ' && c != b'=' && c != b'"')
        {
            i += 1;
        }
        let key = Cow::Borrowed(&line[start..i]);
        match b.get(i) {
            Some(b'"') => {
                return Err(FormatError::new(
                    i,
                    "a key before a quote (only values are quoted: key=\"…\")",
                ))
            }
            Some(b'=') if i == start => return Err(FormatError::new(i, "a key before '='")),
            Some(b'=') => {
                let (value, end) = value(line, i + 1)?;
                out.push((key, value));
                i = end;
            }
            _ => out.push((key, Cow::Borrowed(""))),
        }
    }
}

/// The value that starts at `i` (just after its `=`) and the offset after it.
fn value(line: &str, i: usize) -> Result<(Cow<'_, str>, usize), FormatError> {
    let b = line.as_bytes();
    if b.get(i) == Some(&b'"') {
        return unquote::quoted(line, i);
    }
    let mut end = i;
    while let Some(&c) = b.get(end) {
        match c {
            b'=' | b'"' => {
                return Err(FormatError::new(
                    end,
                    "white space before the next key, or a quoted value for text with '=' or '\"'",
                ))
            }
            c if c <= b' ' => break,
            _ => end += 1,
        }
    }
    Ok((Cow::Borrowed(&line[i..end]), end))
}

/// Writes `pairs` as one logfmt line (no line break), quoting a value only
/// when it is needed (white space, `=`, `"`, control characters) and
/// escaping it as go-logfmt does; an empty value is written as `key=`.
///
/// A key cannot be empty or hold white space, `=` or `"`: such bytes are
/// written as `_` (an empty key as `_`), so the line stays readable.
pub fn render(pairs: &[(&str, &str)], out: &mut String) {
    for (n, (key, value)) in pairs.iter().enumerate() {
        if n > 0 {
            out.push(' ');
        }
        if key.is_empty() {
            out.push('_');
        }
        for ch in key.chars() {
            let bad = ch <= ' ' || ch == '=' || ch == '"' || ch == '\u{7f}';
            out.push(if bad { '_' } else { ch });
        }
        out.push('=');
        if value
            .chars()
            .any(|c| c <= ' ' || c == '=' || c == '"' || c == '\u{7f}')
        {
            unquote::render_quoted(value, out);
        } else {
            out.push_str(value);
        }
    }
}

#[cfg(test)]
mod tests;
