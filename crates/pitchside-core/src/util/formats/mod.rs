//! Pure line parsers for the device formats of SPEC §9 that are not JSON:
//! `csv` (RFC 4180, one record a line), `logfmt` (as go-logfmt reads it) and
//! `influx` (InfluxDB line protocol). Each one borrows from the line when
//! there is nothing to unescape, never panics, and has a `render` that
//! writes the format back for the device simulator and the tests.

pub mod csv;
pub mod influx;
pub mod logfmt;

use std::fmt;

/// Where and why a line is not in its format.
#[derive(Debug, Clone, PartialEq)]
pub struct FormatError {
    /// Byte offset in the line where the parser stopped.
    pub at: usize,
    /// What the parser expected there, e.g. "a closing quote".
    pub what: &'static str,
}

impl FormatError {
    /// An error at byte `at`: `what` was expected.
    pub(crate) fn new(at: usize, what: &'static str) -> Self {
        FormatError { at, what }
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: expected {}", self.at, self.what)
    }
}

impl std::error::Error for FormatError {}

/// The closing quote of the quoted text opened at `open`: its offset, and
/// whether an escape was seen on the way. A backslash starts an escape when
/// `escapes` accepts the byte after it (`None` at the end of the line); an
/// escape is skipped whole, so an escaped quote does not close. `what` is the
/// error when the line ends first.
pub(crate) fn closing_quote(
    b: &[u8],
    open: usize,
    escapes: fn(Option<&u8>) -> bool,
    what: &'static str,
) -> Result<(usize, bool), FormatError> {
    let mut i = open + 1;
    let mut escaped = false;
    loop {
        match b.get(i) {
            None => return Err(FormatError::new(open, what)),
            Some(b'\\') if escapes(b.get(i + 1)) => {
                escaped = true;
                i += 2;
            }
            Some(b'"') => return Ok((i, escaped)),
            Some(_) => i += 1,
        }
    }
}

/// `line` without one trailing `\n`, `\r\n` or `\r`.
pub(crate) fn without_eol(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_says_where_and_what() {
        let e = FormatError::new(7, "a closing quote");
        assert_eq!(e.to_string(), "at byte 7: expected a closing quote");
    }

    #[test]
    fn line_endings_are_dropped_once() {
        assert_eq!(without_eol("a\r\n"), "a");
        assert_eq!(without_eol("a\r"), "a");
        assert_eq!(without_eol("a\n\n"), "a\n");
        assert_eq!(without_eol(""), "");
    }
}
