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

use super::{JsonValue, Reader, Root, SyntaxError, R};
pub use crate::util::json_pointer::Pointer;

impl Pointer {
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
