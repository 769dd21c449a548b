//! A small, strict JSON reader for one flat event object.
//!
//! It reads the top-level object's fields and keeps their values as
//! [`JsonValue`]s without building a tree: nested objects and arrays are
//! checked for well-formedness and skipped. Unlike `serde_json` it recognises
//! the non-standard tokens `NaN`, `Infinity` and `-Infinity` that some
//! producers (Python's `json.dumps`) emit, so the decoder can reject them with
//! the precise reason `non_finite` instead of `invalid_json`. It never panics
//! and never recurses deeper than [`MAX_DEPTH`].

use std::borrow::Cow;

/// Deepest nesting accepted; deeper input is invalid JSON.
pub const MAX_DEPTH: usize = 64;

/// A top-level field value.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonValue<'a> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A string, unescaped.
    Str(Cow<'a, str>),
    /// A number, as its JSON text (grammar already checked).
    Num(&'a str),
    /// `NaN`, `Infinity` or `-Infinity`.
    NonFinite(&'a str),
    /// An object (contents skipped).
    Object,
    /// An array (contents skipped).
    Array,
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
            JsonValue::Object => "an object",
            JsonValue::Array => "an array",
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
    let mut r = Reader {
        s,
        b: s.as_bytes(),
        i: 0,
    };
    r.ws();
    let doc = if r.peek() == Some(b'{') {
        Document::Object(r.top_object()?)
    } else {
        let v = r.value(0)?;
        Document::NotObject(v.type_name())
    };
    r.ws();
    if r.i != r.b.len() {
        return Err(r.err("end of input after the JSON value"));
    }
    Ok(doc)
}

impl<'a> Reader<'a> {
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

    fn top_object(&mut self) -> R<Vec<(Cow<'a, str>, JsonValue<'a>)>> {
        let mut fields = Vec::with_capacity(12);
        self.i += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Ok(fields);
        }
        loop {
            self.ws();
            let key = self.string()?;
            self.ws();
            self.eat(b':', "':' after an object key")?;
            self.ws();
            let v = self.value(1)?;
            fields.push((key, v));
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(fields);
                }
                _ => return Err(self.err("',' or '}' in an object")),
            }
        }
    }

    fn value(&mut self, depth: usize) -> R<JsonValue<'a>> {
        if depth > MAX_DEPTH {
            return Err(self.err("less deeply nested JSON"));
        }
        match self.peek() {
            Some(b'"') => Ok(JsonValue::Str(self.string()?)),
            Some(b'{') => {
                self.skip_container(b'}', depth)?;
                Ok(JsonValue::Object)
            }
            Some(b'[') => {
                self.skip_container(b']', depth)?;
                Ok(JsonValue::Array)
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

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> R<JsonValue<'a>> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("a digit")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.err("a digit after '.'"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("a digit in the exponent"));
            }
        }
        Ok(JsonValue::Num(&self.s[start..self.i]))
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
                self.string()?;
                self.ws();
                self.eat(b':', "':' after an object key")?;
                self.ws();
            }
            self.value(depth + 1)?;
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

    fn hex4(&mut self) -> R<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let c = self
                .peek()
                .ok_or_else(|| self.err("4 hex digits after \\u"))?;
            let d = (c as char)
                .to_digit(16)
                .ok_or_else(|| self.err("4 hex digits after \\u"))?;
            v = v * 16 + d;
            self.i += 1;
        }
        Ok(v)
    }

    fn string(&mut self) -> R<Cow<'a, str>> {
        self.eat(b'"', "a string")?;
        let start = self.i;
        // Fast path: no escapes.
        loop {
            match self.peek() {
                None => return Err(self.err("a closing quote")),
                Some(b'"') => {
                    let s = &self.s[start..self.i];
                    self.i += 1;
                    return Ok(Cow::Borrowed(s));
                }
                Some(b'\\') => break,
                Some(c) if c < 0x20 => return Err(self.err("no control characters in a string")),
                Some(_) => self.i += 1,
            }
        }
        let mut out = String::from(&self.s[start..self.i]);
        loop {
            match self.peek() {
                None => return Err(self.err("a closing quote")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(Cow::Owned(out));
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self.peek().ok_or_else(|| self.err("an escape"))?;
                    self.i += 1;
                    match c {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&hi) {
                                if !self.b[self.i..].starts_with(b"\\u") {
                                    return Err(self.err("a low surrogate after a high one"));
                                }
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return Err(self.err("a low surrogate after a high one"));
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else {
                                hi
                            };
                            let ch = char::from_u32(code)
                                .ok_or_else(|| self.err("a valid unicode escape"))?;
                            out.push(ch);
                        }
                        _ => return Err(self.err("a valid escape")),
                    }
                }
                Some(c) if c < 0x20 => return Err(self.err("no control characters in a string")),
                Some(_) => {
                    // Copy one UTF-8 character (input is valid UTF-8).
                    let ch_len = utf8_len(self.b[self.i]);
                    let end = (self.i + ch_len).min(self.b.len());
                    out.push_str(&self.s[self.i..end]);
                    self.i = end;
                }
            }
        }
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(s: &str) -> Vec<(String, JsonValue<'_>)> {
        match parse(s).unwrap() {
            Document::Object(f) => f.into_iter().map(|(k, v)| (k.into_owned(), v)).collect(),
            Document::NotObject(t) => panic!("not an object: {t}"),
        }
    }

    #[test]
    fn flat_object_fields_come_back_in_order() {
        let f = fields(r#"{"a":1,"b":"x","c":null,"d":true,"e":{"z":[1,2]},"f":[]}"#);
        assert_eq!(f[0], ("a".into(), JsonValue::Num("1")));
        assert_eq!(f[1], ("b".into(), JsonValue::Str("x".into())));
        assert_eq!(f[2].1, JsonValue::Null);
        assert_eq!(f[3].1, JsonValue::Bool(true));
        assert_eq!(f[4].1, JsonValue::Object);
        assert_eq!(f[5].1, JsonValue::Array);
    }

    #[test]
    fn escapes_and_surrogate_pairs_are_decoded() {
        let f = fields(r#"{"k\u0041":"a\"b\\c\ud83d\ude00é"}"#);
        assert_eq!(f[0].0, "kA");
        assert_eq!(f[0].1, JsonValue::Str("a\"b\\c😀é".into()));
    }

    #[test]
    fn non_finite_tokens_are_recognised() {
        let f = fields(r#"{"a":NaN,"b":Infinity,"c":-Infinity}"#);
        assert_eq!(f[0].1, JsonValue::NonFinite("NaN"));
        assert_eq!(f[2].1, JsonValue::NonFinite("-Infinity"));
    }

    #[test]
    fn malformed_documents_are_syntax_errors() {
        for s in [
            "",
            "{",
            "{\"a\":}",
            "{\"a\" 1}",
            "{\"a\":1,}",
            "{\"a\":01}",
            "{\"a\":1.}",
            "{\"a\":-}",
            "{\"a\":1e}",
            "{\"a\":\"\\x\"}",
            "{\"a\":\"\\ud800\"}",
            "{} x",
            "{\"a\":tru}",
            "[1,2",
            "{\"a\":\"\t\"}",
        ] {
            assert!(parse(s).is_err(), "{s:?} should not parse");
        }
    }

    #[test]
    fn non_objects_are_named() {
        assert!(matches!(
            parse("[1]").unwrap(),
            Document::NotObject("an array")
        ));
        assert!(matches!(
            parse(" 42 ").unwrap(),
            Document::NotObject("a number")
        ));
    }

    #[test]
    fn deep_nesting_is_refused_without_overflowing_the_stack() {
        let s = format!("{{\"a\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&s).is_err());
    }
}
