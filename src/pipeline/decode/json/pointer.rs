//! JSON Pointer (RFC 6901): a path such as `/hr/bpm` or `/readings/0/v`
//! from a mapped device format's configuration, resolved against a parsed
//! [`Root`].
//!
//! No tree is built. The first segment is looked up among the top-level
//! fields that [`parse_root`](super::parse_root) already read; each deeper
//! segment re-reads only the raw text of the object or array it descends
//! into ([`JsonValue::Object`], [`JsonValue::Array`]), skipping the members
//! it passes over without copying them. Resolving allocates nothing unless a
//! key on the way, or the value found, is a string with escapes.

use super::{JsonValue, Reader, Root, SyntaxError, MAX_DEPTH, R};
use std::fmt;

/// A parsed JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// The pointer as written, for messages.
    text: String,
    /// Its reference tokens, unescaped.
    segments: Vec<Segment>,
}

/// One reference token.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Segment {
    /// The token as an object key (`~0`, `~1` decoded).
    key: String,
    /// The token as an array index: decimal digits without leading zeros
    /// that fit a `usize`. `-` and anything else never match an element.
    index: Option<usize>,
}

impl Pointer {
    /// Parses pointer text from the configuration: `""` is the whole
    /// document, anything else starts with `/`; in a token `~0` stands for
    /// `~` and `~1` for `/`.
    pub fn parse(text: &str) -> Result<Pointer, String> {
        let segments = match text.strip_prefix('/') {
            None if text.is_empty() => Vec::new(),
            None => {
                return Err(format!(
                    "JSON pointer {text:?} must start with '/' (or be \"\" for the whole document)"
                ))
            }
            Some(rest) => rest
                .split('/')
                .map(|token| segment(text, token))
                .collect::<Result<_, _>>()?,
        };
        if segments.len() > MAX_DEPTH {
            return Err(format!(
                "JSON pointer {text:?} has {} levels; documents nest at most {MAX_DEPTH} deep",
                segments.len()
            ));
        }
        Ok(Pointer {
            text: text.to_owned(),
            segments,
        })
    }

    /// The pointer as written, for reject details (`field /hr/bpm ...`).
    pub fn describe(&self) -> &str {
        &self.text
    }

    /// The value the pointer names in `root`; `None` when there is no such
    /// value (a missing key, an index out of range, a step into a scalar).
    /// A repeated key resolves to its last occurrence. The error is only
    /// possible for a `root` not made by `parse_root` (its `at` is then an
    /// offset in the nested text being read).
    pub fn resolve<'a>(&self, root: &Root<'a>) -> Result<Option<JsonValue<'a>>, SyntaxError> {
        let (mut value, rest, mut depth) = match (root, self.segments.split_first()) {
            (Root::Object { text, .. }, None) => return Ok(Some(JsonValue::Object(text))),
            (Root::Object { fields, .. }, Some((first, rest))) => {
                let found = fields.iter().rev().find(|(k, _)| *k == first.key.as_str());
                match found {
                    Some((_, v)) => (v.clone(), rest, 1),
                    None => return Ok(None),
                }
            }
            (Root::Value(v), _) => (v.clone(), self.segments.as_slice(), 0),
        };
        for seg in rest {
            let next = match value {
                JsonValue::Object(text) => member(text, &seg.key, depth)?,
                JsonValue::Array(text) => match seg.index {
                    Some(n) => element(text, n, depth)?,
                    None => None,
                },
                _ => None,
            };
            match next {
                Some(v) => value = v,
                None => return Ok(None),
            }
            depth += 1;
        }
        Ok(Some(value))
    }
}

impl fmt::Display for Pointer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// One reference token of `pointer`, unescaped.
fn segment(pointer: &str, token: &str) -> Result<Segment, String> {
    let key = if token.contains('~') {
        unescape(pointer, token)?
    } else {
        token.to_owned()
    };
    let index = match key.as_bytes() {
        [b'0'] => Some(0),
        [b'1'..=b'9', rest @ ..] if rest.iter().all(u8::is_ascii_digit) => key.parse().ok(),
        _ => None,
    };
    Ok(Segment { key, index })
}

/// `~0` → `~`, `~1` → `/`; any other `~` is an error.
fn unescape(pointer: &str, token: &str) -> Result<String, String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => out.push('~'),
            Some('1') => out.push('/'),
            _ => {
                return Err(format!(
                    "JSON pointer {pointer:?} has a bad escape in {token:?}: \
                     '~' must be followed by 0 (for '~') or 1 (for '/')"
                ))
            }
        }
    }
    Ok(out)
}

/// The last member named `key` of the object whose text is `text`, itself
/// at `depth`.
fn member<'a>(text: &'a str, key: &str, depth: usize) -> R<Option<JsonValue<'a>>> {
    let mut r = Reader::new(text);
    r.ws();
    r.eat(b'{', "an object")?;
    r.ws();
    let mut found = None;
    if r.peek() == Some(b'}') {
        r.i += 1;
    } else {
        loop {
            r.ws();
            let is_key = r.string()?.as_ref() == key;
            r.ws();
            r.eat(b':', "':' after an object key")?;
            r.ws();
            if is_key {
                found = Some(r.value(depth + 1)?);
            } else {
                r.skip_value(depth + 1)?;
            }
            r.ws();
            match r.peek() {
                Some(b',') => r.i += 1,
                Some(b'}') => {
                    r.i += 1;
                    break;
                }
                _ => return Err(r.err("',' or '}' in an object")),
            }
        }
    }
    r.ws();
    if r.i != r.b.len() {
        return Err(r.err("end of the object"));
    }
    Ok(found)
}

/// Element `index` of the array whose text is `text`, itself at `depth`.
fn element<'a>(text: &'a str, index: usize, depth: usize) -> R<Option<JsonValue<'a>>> {
    let mut r = Reader::new(text);
    r.ws();
    r.eat(b'[', "an array")?;
    r.ws();
    if r.peek() == Some(b']') {
        return Ok(None);
    }
    // Each element takes at least one byte, so `n` stays below `text.len()`.
    let mut n = 0;
    loop {
        r.ws();
        if n == index {
            return r.value(depth + 1).map(Some);
        }
        r.skip_value(depth + 1)?;
        r.ws();
        match r.peek() {
            Some(b',') => r.i += 1,
            Some(b']') => return Ok(None),
            _ => return Err(r.err("',' or ']' in an array")),
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests;
