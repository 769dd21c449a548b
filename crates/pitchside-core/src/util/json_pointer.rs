//! JSON Pointer (RFC 6901) as written in a config: `/hr/bpm`,
//! `/readings/0/v`. Parsed and checked here, when the config is read;
//! resolved against a document by the JSON reader
//! (`pipeline::decode::json::pointer`).

use std::fmt;

/// Deepest pointer accepted: documents nest at most this deep.
pub const MAX_DEPTH: usize = 64;

/// A parsed JSON Pointer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// The pointer as written, for messages.
    text: String,
    /// Its reference tokens, unescaped.
    pub(crate) segments: Vec<Segment>,
}

/// One reference token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    /// The token as an object key (`~0`, `~1` decoded).
    pub(crate) key: String,
    /// The token as an array index: decimal digits without leading zeros
    /// that fit a `usize`. `-` and anything else never match an element.
    pub(crate) index: Option<usize>,
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
