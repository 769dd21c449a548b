//! A small, strict JSON reader for one flat event object.
//!
//! It reads the top-level object's fields and keeps their values as
//! [`JsonValue`]s without building a tree: nested objects and arrays are
//! checked for well-formedness and kept as their raw text, which a
//! [`Pointer`] (RFC 6901, in `pointer`) re-reads lazily. Unlike `serde_json` it recognises
//! the non-standard tokens `NaN`, `Infinity` and `-Infinity` that some
//! producers (Python's `json.dumps`) emit, so the decoder can reject them with
//! the precise reason `non_finite` instead of `invalid_json`. It never panics
//! and never recurses deeper than [`MAX_DEPTH`].

mod escape;
mod members;
mod number;
pub mod pointer;
mod scan;

pub use members::{for_each_member, Key};
pub use number::Number;
pub use pointer::Pointer;
use scan::Run;

use std::borrow::Cow;

/// Deepest nesting accepted; deeper input is invalid JSON.
pub const MAX_DEPTH: usize = crate::util::json_pointer::MAX_DEPTH;

/// A top-level field value.
///
/// `repr(u8)` gives it a plain tag byte: without it the tag hides in the
/// unused capacities of the `Cow`'s `String` (24 bytes instead of 32), and
/// every `match` on a value decodes that niche, which cost the decoder 180
/// instructions a line (callgrind, venue mix).
#[derive(Debug, Clone, PartialEq)]
#[repr(u8)]
pub enum JsonValue<'a> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A string, unescaped.
    Str(Cow<'a, str>),
    /// A number: its JSON text (grammar already checked) and, when plain,
    /// its value read in the same pass.
    Num(Number<'a>),
    /// `NaN`, `Infinity` or `-Infinity`.
    NonFinite(&'a str),
    /// An object: its raw text from `{` to `}`, already checked.
    Object(&'a str),
    /// An array: its raw text from `[` to `]`, already checked.
    Array(&'a str),
}

impl JsonValue<'_> {
    /// A short name of the value's type, for reject details.
    pub fn type_name(&self) -> &'static str {
        match self {
            JsonValue::Null => "null",
            JsonValue::Bool(_) => "a boolean",
            JsonValue::Str(_) => "a string",
            JsonValue::Num(_) => "a number",
            JsonValue::NonFinite(_) => "a non-finite number",
            JsonValue::Object(_) => "an object",
            JsonValue::Array(_) => "an array",
        }
    }
}

/// What the top level of the document was.
#[derive(Debug)]
pub enum Document<'a> {
    /// An object: its fields in order (a repeated key appears twice; the last wins).
    Object(Vec<(Cow<'a, str>, JsonValue<'a>)>),
    /// Valid JSON that is not an object; the type name.
    NotObject(&'static str),
}

/// A whole document, for [`Pointer`] lookups: the top-level object's fields
/// (read once, as [`parse`] does) or, for any other top level (a device may
/// publish `[{...}]`), the value itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Root<'a> {
    /// A top-level object.
    Object {
        /// Its fields in order (a repeated key appears twice; the last wins).
        fields: Vec<(Cow<'a, str>, JsonValue<'a>)>,
        /// Its raw text from `{` to `}`.
        text: &'a str,
    },
    /// Any other top-level value: an array or a scalar.
    Value(JsonValue<'a>),
}

impl<'a> Root<'a> {
    /// The top-level fields, when the top level is an object.
    pub fn fields(&self) -> Option<&[(Cow<'a, str>, JsonValue<'a>)]> {
        match self {
            Root::Object { fields, .. } => Some(fields),
            Root::Value(_) => None,
        }
    }
}

/// Where and why the text is not JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// Byte offset.
    pub at: usize,
    /// What was expected.
    pub what: &'static str,
}

struct Reader<'a> {
    s: &'a str,
    b: &'a [u8],
    i: usize,
}

type R<T> = Result<T, SyntaxError>;

/// Parses a whole document.
pub fn parse(s: &str) -> Result<Document<'_>, SyntaxError> {
    Ok(match parse_root(s)? {
        Root::Object { fields, .. } => Document::Object(fields),
        Root::Value(v) => Document::NotObject(v.type_name()),
    })
}

/// One top-level field: its name and value.
pub type Member<'a> = (Cow<'a, str>, JsonValue<'a>);

/// Parses a whole document whatever its top level, for [`Pointer::resolve`].
pub fn parse_root(s: &str) -> Result<Root<'_>, SyntaxError> {
    let mut r = Reader::new(s);
    r.ws();
    let root = if r.peek() == Some(b'{') {
        let start = r.i;
        let fields = r.top_object()?;
        Root::Object {
            fields,
            text: r.since(start),
        }
    } else {
        Root::Value(r.value(0)?)
    };
    r.ws();
    if r.i != r.b.len() {
        return Err(r.err("end of input after the JSON value"));
    }
    Ok(root)
}

impl<'a> Reader<'a> {
    fn new(s: &'a str) -> Reader<'a> {
        Reader {
            s,
            b: s.as_bytes(),
            i: 0,
        }
    }

    /// The text from `start` to the current position.
    fn since(&self, start: usize) -> &'a str {
        self.s.get(start..self.i).unwrap_or_default()
    }

    fn err(&self, what: &'static str) -> SyntaxError {
        SyntaxError { at: self.i, what }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8, what: &'static str) -> R<()> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.err(what))
        }
    }

    fn value(&mut self, depth: usize) -> R<JsonValue<'a>> {
        if depth > MAX_DEPTH {
            return Err(self.err("less deeply nested JSON"));
        }
        match self.peek() {
            // The common string straight into the value: through `string()`
            // and `?` the compiler copied the `Cow` twice on the stack with
            // wider loads than its stores, which waits for the stores.
            Some(b'"') => match self.quick_string() {
                Some(s) => Ok(JsonValue::Str(Cow::Borrowed(s))),
                None => Ok(JsonValue::Str(self.slow_string()?)),
            },
            Some(b'{') => {
                let start = self.i;
                self.skip_container(b'}', depth)?;
                Ok(JsonValue::Object(self.since(start)))
            }
            Some(b'[') => {
                let start = self.i;
                self.skip_container(b']', depth)?;
                Ok(JsonValue::Array(self.since(start)))
            }
            Some(b't') => self.word("true", JsonValue::Bool(true)),
            Some(b'f') => self.word("false", JsonValue::Bool(false)),
            Some(b'n') => self.word("null", JsonValue::Null),
            Some(b'N') => self.word("NaN", JsonValue::NonFinite("NaN")),
            Some(b'I') => self.word("Infinity", JsonValue::NonFinite("Infinity")),
            Some(b'-') if self.b.get(self.i + 1) == Some(&b'I') => {
                self.i += 1;
                self.word("Infinity", JsonValue::NonFinite("-Infinity"))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.err("a JSON value")),
        }
    }

    fn word(&mut self, w: &'static str, v: JsonValue<'a>) -> R<JsonValue<'a>> {
        if self.b[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(self.err("a JSON value"))
        }
    }

    fn skip_container(&mut self, close: u8, depth: usize) -> R<()> {
        let is_object = close == b'}';
        self.i += 1;
        self.ws();
        if self.peek() == Some(close) {
            self.i += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if is_object {
                self.skip_string()?;
                self.ws();
                self.eat(b':', "':' after an object key")?;
                self.ws();
            }
            self.skip_value(depth + 1)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {
                    self.i += 1;
                    return Ok(());
                }
                _ => return Err(self.err("',' or a closing bracket")),
            }
        }
    }

    /// Checks a value without keeping it: like [`Reader::value`], but a
    /// string with escapes is not copied.
    fn skip_value(&mut self, depth: usize) -> R<()> {
        if depth <= MAX_DEPTH && self.peek() == Some(b'"') {
            self.skip_string()
        } else {
            self.value(depth).map(drop)
        }
    }

    /// A string; borrowed from the input unless it has escapes. The common
    /// case is inlined; the rest is [`Reader::slow_string`].
    #[inline]
    fn string(&mut self) -> R<Cow<'a, str>> {
        match self.quick_string() {
            Some(s) => Ok(Cow::Borrowed(s)),
            None => self.slow_string(),
        }
    }

    /// A string that [`Reader::quick_string`] did not take: one with
    /// escapes, or not a string at all.
    #[cold]
    #[inline(never)]
    fn slow_string(&mut self) -> R<Cow<'a, str>> {
        match self.plain_run()? {
            Run::Whole(s) => Ok(Cow::Borrowed(s)),
            Run::Escape(start) => self.escaped_string(start),
        }
    }

    /// Checks a string without copying it, even when it has escapes.
    fn skip_string(&mut self) -> R<()> {
        if self.quick_string().is_some() {
            return Ok(());
        }
        match self.plain_run()? {
            Run::Whole(_) => Ok(()),
            Run::Escape(_) => self.rest_of_string(None),
        }
    }
}

#[cfg(test)]
mod tests;
