//! Strings with escapes, the slow path of [`Reader::string`]: the text is
//! copied into an owned `String` with each escape decoded (`\n`, `\"`,
//! `\uXXXX` with surrogate pairs). [`Reader::skip_string`] checks the same
//! grammar without the copy.

use super::{Reader, R};
use std::borrow::Cow;

impl<'a> Reader<'a> {
    /// The rest of a string from `start` (its first character) whose first
    /// escape is at the current position.
    pub(super) fn escaped_string(&mut self, start: usize) -> R<Cow<'a, str>> {
        let mut out = String::from(self.since(start));
        self.rest_of_string(Some(&mut out))?;
        Ok(Cow::Owned(out))
    }

    /// The rest of a string up to and including its closing quote, decoded
    /// onto `out` when there is one (else only checked).
    pub(super) fn rest_of_string(&mut self, mut out: Option<&mut String>) -> R<()> {
        loop {
            match self.peek() {
                None => return Err(self.err("a closing quote")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self.escape()?;
                    if let Some(out) = out.as_deref_mut() {
                        out.push(c);
                    }
                }
                Some(c) if c < 0x20 => return Err(self.err("no control characters in a string")),
                Some(first) => {
                    // One UTF-8 character (input is valid UTF-8).
                    let start = self.i;
                    self.i = (self.i + utf8_len(first)).min(self.b.len());
                    if let Some(out) = out.as_deref_mut() {
                        out.push_str(self.since(start));
                    }
                }
            }
        }
    }

    /// One escape after its backslash, decoded.
    fn escape(&mut self) -> R<char> {
        let c = self.peek().ok_or_else(|| self.err("an escape"))?;
        self.i += 1;
        Ok(match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape()?,
            _ => return Err(self.err("a valid escape")),
        })
    }

    /// The character of a `\u` escape (after the `u`), joining a surrogate pair.
    fn unicode_escape(&mut self) -> R<char> {
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
        char::from_u32(code).ok_or_else(|| self.err("a valid unicode escape"))
    }

    /// Four hex digits, as a number.
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
}

/// The byte length of the UTF-8 character that starts with `first`.
fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}
