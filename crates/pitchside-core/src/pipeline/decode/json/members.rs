//! The top-level object's members, read one at a time: the event decoder
//! keeps only the fields it knows ([`for_each_member`], with a table of
//! known keys that skips scanning them), [`super::parse_root`] all of them.

use super::{JsonValue, Member, Reader, R};
use std::borrow::Cow;

/// A top-level key as [`for_each_member`] hands it over.
#[derive(Debug, Clone, PartialEq)]
pub enum Key<'a> {
    /// A key the caller's `known` recognised: the index it gave.
    Known(usize),
    /// Any other key, unescaped.
    Name(Cow<'a, str>),
}

/// Reads a document, handing each top-level field to `each` in order (a
/// repeated key is handed over twice) when it is an object: `Ok(None)`;
/// else `Ok(Some(type name))`. Nothing is collected: the caller keeps what
/// it needs. `known` sees the text after each key's opening quote; when it
/// starts with a key the caller knows and that key's closing quote, it
/// gives (index, bytes up to and including the quote) and the key is
/// handed over as [`Key::Known`] without being scanned as a string.
#[inline]
pub fn for_each_member<'a>(
    s: &'a str,
    known: impl Fn(&[u8]) -> Option<(usize, usize)>,
    each: impl FnMut(Key<'a>, JsonValue<'a>),
) -> R<Option<&'static str>> {
    let mut r = Reader::new(s);
    r.ws();
    let other = if r.peek() == Some(b'{') {
        r.members(known, each)?;
        None
    } else {
        Some(r.value(0)?.type_name())
    };
    r.ws();
    if r.i != r.b.len() {
        return Err(r.err("end of input after the JSON value"));
    }
    Ok(other)
}

impl<'a> Reader<'a> {
    pub(super) fn top_object(&mut self) -> R<Vec<Member<'a>>> {
        let mut fields = Vec::with_capacity(12);
        self.members(
            |_| None,
            |k, v| {
                if let Key::Name(k) = k {
                    fields.push((k, v));
                }
            },
        )?;
        Ok(fields)
    }

    /// The top-level object's fields, each handed to `each` (see
    /// [`for_each_member`] for `known`).
    #[inline]
    fn members(
        &mut self,
        known: impl Fn(&[u8]) -> Option<(usize, usize)>,
        mut each: impl FnMut(Key<'a>, JsonValue<'a>),
    ) -> R<()> {
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            let quoted = self.peek() == Some(b'"');
            let key = match self.b.get(self.i + 1..).filter(|_| quoted).and_then(&known) {
                Some((k, len)) => {
                    self.i += 1 + len;
                    Key::Known(k)
                }
                None => Key::Name(self.string()?),
            };
            self.ws();
            self.eat(b':', "':' after an object key")?;
            self.ws();
            let v = self.value(1)?;
            each(key, v);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(self.err("',' or '}' in an object")),
            }
        }
    }
}
