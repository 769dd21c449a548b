//! InfluxDB line protocol, one point a line, as the InfluxDB v2 reference
//! writes it: `measurement[,tag=value…] field=value[,field=value…] [time]`.
//!
//! The measurement escapes `,` and space; tag keys, tag values and field
//! keys escape `,`, `=` and space; a backslash before any other byte is kept
//! as written. String field values escape `"` and `\`. Names hold no control
//! characters; tag values are never empty; a point has at least one field.
//! Numbers are floats (`1`, `-2.5e3`), integers (`3i`), unsigned (`4u`);
//! booleans `t`/`T`/`true`/`True`/`TRUE` and the same for false. `nan` and
//! `inf` are not line protocol. Sections may be apart by more than one space.
//! `render` writes a [`Point`] back.

mod render;
mod value;

pub use render::render;

use super::{without_eol, FormatError};
use std::borrow::Cow;

/// A field's value.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldValue<'a> {
    /// A float, `1.5` (always finite).
    Float(f64),
    /// A signed integer, `3i`.
    Int(i64),
    /// An unsigned integer, `3u`.
    UInt(u64),
    /// A boolean, `t` or `false`.
    Bool(bool),
    /// A string, `"text"`, unescaped.
    Str(Cow<'a, str>),
}

/// One point of line protocol.
#[derive(Debug, Clone, PartialEq)]
pub struct Point<'a> {
    /// The measurement, unescaped.
    pub measurement: Cow<'a, str>,
    /// Tag keys and values in line order, unescaped.
    pub tags: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// Field keys and values in line order (at least one when parsed).
    pub fields: Vec<(Cow<'a, str>, FieldValue<'a>)>,
    /// The timestamp as written (an integer in the writer's precision), if any.
    pub timestamp: Option<i64>,
}

/// A kind of name, which decides the bytes that end it and may be escaped.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Part {
    /// The measurement: `,` and space.
    Measurement,
    /// A tag key, tag value or field key: `,`, `=` and space.
    Key,
}

impl Part {
    /// Whether unescaped `c` ends a name of this kind (and `\c` escapes it).
    fn ends_at(self, c: u8) -> bool {
        c == b',' || c == b' ' || (self == Part::Key && c == b'=')
    }
}

/// Parses one line of line protocol (one trailing `\r\n` or `\n` is
/// allowed). Names and strings borrow from `line` unless they hold escapes.
/// A comment line (`# …`) and a blank line are errors: neither is a point.
pub fn parse(line: &str) -> Result<Point<'_>, FormatError> {
    let line = without_eol(line);
    let b = line.as_bytes();
    let start = skip_spaces(b, 0);
    match b.get(start) {
        Some(b'#') => {
            return Err(FormatError::new(
                start,
                "a point (comment lines are not points)",
            ))
        }
        None => return Err(FormatError::new(start, "a point (the line is blank)")),
        Some(_) => {}
    }
    let (measurement, mut i) = name(line, start, Part::Measurement, "a measurement name")?;
    let mut tags = Vec::new();
    while b.get(i) == Some(&b',') {
        let (key, end) = name(line, i + 1, Part::Key, "a tag key after ','")?;
        let end = expect_equals(b, end, "'=' after the tag key")?;
        let (value, end) = name(
            line,
            end,
            Part::Key,
            "a tag value (leave out a tag that has none)",
        )?;
        tags.push((key, value));
        i = end;
    }
    if b.get(i) != Some(&b' ') {
        return Err(FormatError::new(
            i,
            "a space and the fields (a point has at least one field)",
        ));
    }
    let (fields, i) = fields(line, skip_spaces(b, i))?;
    let timestamp = timestamp(line, i)?;
    Ok(Point {
        measurement,
        tags,
        fields,
        timestamp,
    })
}

/// The fields of a point, in line order.
type Fields<'a> = Vec<(Cow<'a, str>, FieldValue<'a>)>;

/// The fields from `i` (a field key), and the offset after the last value.
fn fields(line: &str, mut i: usize) -> Result<(Fields<'_>, usize), FormatError> {
    let b = line.as_bytes();
    let mut fields = Vec::new();
    loop {
        let (key, end) = name(line, i, Part::Key, "a field key")?;
        let end = expect_equals(b, end, "'=' after the field key")?;
        let (value, end) = value::field_value(line, end)?;
        fields.push((key, value));
        match b.get(end) {
            Some(b',') => i = end + 1,
            None | Some(b' ') => return Ok((fields, end)),
            Some(_) => {
                return Err(FormatError::new(
                    end,
                    "',' and a field, a space, or the end of the line after a field value",
                ))
            }
        }
    }
}

/// The optional timestamp after the fields (`i` is just after the last
/// field value); nothing but spaces may follow it.
fn timestamp(line: &str, i: usize) -> Result<Option<i64>, FormatError> {
    let b = line.as_bytes();
    let start = skip_spaces(b, i);
    if start >= b.len() {
        return Ok(None);
    }
    let end = b[start..]
        .iter()
        .position(|&c| c == b' ')
        .map_or(b.len(), |p| start + p);
    let text = &line[start..end];
    let valid = text.bytes().all(|c| c == b'-' || c.is_ascii_digit());
    let time = text
        .parse::<i64>()
        .ok()
        .filter(|_| valid)
        .ok_or(FormatError::new(
            start,
            "a timestamp: a whole number that fits 64 bits",
        ))?;
    let after = skip_spaces(b, end);
    if after < b.len() {
        return Err(FormatError::new(
            after,
            "the end of the line after the timestamp",
        ));
    }
    Ok(Some(time))
}

/// The name of kind `part` that starts at `i`, unescaped, and the offset
/// just after it; `empty` is what is expected when there is none.
fn name<'a>(
    line: &'a str,
    i: usize,
    part: Part,
    empty: &'static str,
) -> Result<(Cow<'a, str>, usize), FormatError> {
    let b = line.as_bytes();
    let mut j = i;
    let mut escaped = false;
    while let Some(&c) = b.get(j) {
        if c == b'\\' && b.get(j + 1).is_some_and(|&n| part.ends_at(n)) {
            escaped = true;
            j += 2;
        } else if part.ends_at(c) {
            break;
        } else if c < 0x20 || c == 0x7f {
            return Err(FormatError::new(j, "no control characters in names"));
        } else {
            j += 1;
        }
    }
    if j == i {
        return Err(FormatError::new(i, empty));
    }
    // `i` and `j` are at ASCII bytes or the end: slicing is on char boundaries.
    let raw = &line[i..j];
    if !escaped {
        return Ok((Cow::Borrowed(raw), j));
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        let escapes_next = chars
            .peek()
            .is_some_and(|&n| n.is_ascii() && part.ends_at(n as u8));
        if !(c == '\\' && escapes_next) {
            out.push(c);
        }
    }
    Ok((Cow::Owned(out), j))
}

/// The offset after the `=` expected at `i`.
fn expect_equals(b: &[u8], i: usize, what: &'static str) -> Result<usize, FormatError> {
    match b.get(i) {
        Some(b'=') => Ok(i + 1),
        _ => Err(FormatError::new(i, what)),
    }
}

/// The first offset from `i` that is not a space.
fn skip_spaces(b: &[u8], i: usize) -> usize {
    let mut i = i;
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests;
