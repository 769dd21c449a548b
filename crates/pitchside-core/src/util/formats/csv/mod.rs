//! CSV as RFC 4180 writes it, one record a line: fields split on a
//! one-byte delimiter, a field in double quotes may hold the delimiter, and
//! `""` inside quotes is one quote. Unquoted fields are taken verbatim
//! (spaces kept); a quote inside an unquoted field, or anything but the
//! delimiter after a closing quote, is an error.

use super::{without_eol, FormatError};
use std::borrow::Cow;

/// Splits one CSV record into `out` (cleared first).
///
/// Quoted fields may hold the delimiter and `""` escapes; fields may be
/// empty; one trailing `\r` (or `\r\n`) is dropped. An empty line is one
/// empty field. A field borrows from `line` unless it holds `""`. The
/// delimiter must be an ASCII byte other than `"`, `\r` and `\n`.
pub fn split<'a>(
    line: &'a str,
    delimiter: u8,
    out: &mut Vec<Cow<'a, str>>,
) -> Result<(), FormatError> {
    out.clear();
    if !delimiter.is_ascii() || matches!(delimiter, b'"' | b'\r' | b'\n') {
        return Err(FormatError::new(
            0,
            "an ASCII delimiter other than a quote or a line break",
        ));
    }
    let line = without_eol(line);
    let b = line.as_bytes();
    let mut i = 0;
    loop {
        let end = if b.get(i) == Some(&b'"') {
            let (field, end) = quoted(line, i)?;
            out.push(field);
            end
        } else {
            let end = b[i..]
                .iter()
                .position(|&c| c == delimiter)
                .map_or(b.len(), |p| i + p);
            if let Some(q) = b[i..end].iter().position(|&c| c == b'"') {
                return Err(FormatError::new(
                    i + q,
                    "no quote inside an unquoted field (quote the whole field and write a quote as \"\")",
                ));
            }
            out.push(Cow::Borrowed(&line[i..end]));
            end
        };
        match b.get(end) {
            None => return Ok(()),
            Some(&c) if c == delimiter => i = end + 1,
            Some(_) => {
                return Err(FormatError::new(
                    end,
                    "the delimiter or the end of the line after a closing quote",
                ))
            }
        }
    }
}

/// The quoted field whose opening quote is at `open`, and the offset just
/// after its closing quote.
fn quoted(line: &str, open: usize) -> Result<(Cow<'_, str>, usize), FormatError> {
    let b = line.as_bytes();
    let start = open + 1;
    let mut owned: Option<String> = None;
    let mut piece = start; // start of the text not yet copied into `owned`
    let mut i = start;
    loop {
        match b.get(i) {
            None => {
                return Err(FormatError::new(
                    open,
                    "a closing quote for this quoted field",
                ))
            }
            Some(b'"') if b.get(i + 1) == Some(&b'"') => {
                // `""`: keep the text up to and including the first quote.
                owned
                    .get_or_insert_with(String::new)
                    .push_str(&line[piece..=i]);
                i += 2;
                piece = i;
            }
            Some(b'"') => {
                let field = match owned {
                    None => Cow::Borrowed(&line[start..i]),
                    Some(mut s) => {
                        s.push_str(&line[piece..i]);
                        Cow::Owned(s)
                    }
                };
                return Ok((field, i + 1));
            }
            Some(_) => i += 1,
        }
    }
}

/// Writes one record of `fields` separated by `delimiter` (an ASCII byte),
/// quoting a field only when it holds the delimiter, a quote, `\r` or `\n`,
/// and doubling its quotes. No line break is written.
pub fn render(fields: &[&str], delimiter: u8, out: &mut String) {
    for (n, field) in fields.iter().enumerate() {
        if n > 0 {
            out.push(char::from(delimiter));
        }
        let needs_quotes = field
            .bytes()
            .any(|c| c == delimiter || matches!(c, b'"' | b'\r' | b'\n'));
        if needs_quotes {
            out.push('"');
            for part in field.split_inclusive('"') {
                out.push_str(part);
                if part.ends_with('"') {
                    out.push('"');
                }
            }
            out.push('"');
        } else {
            out.push_str(field);
        }
    }
}

#[cfg(test)]
mod tests;
