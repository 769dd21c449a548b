//! The console's access token (`console.token_file`): read once at start,
//! compared in constant time, never logged. A request carries it as
//! `Authorization: Bearer {token}` or in the `pitchside_token` cookie that
//! `GET /?token=` sets.

use crate::config::console::is_loopback;
use hyper::header::{HeaderMap, HeaderValue, AUTHORIZATION, COOKIE};
use std::path::Path;

/// Shortest token accepted.
pub const MIN_TOKEN_LEN: usize = 16;
/// The cookie that carries the token.
pub const COOKIE_NAME: &str = "pitchside_token";

/// The secret. Its `Debug` does not show it.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(…)")
    }
}

/// Why the token file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Unreadable.
    #[error("console.token_file {path}: {source} (create it with `openssl rand -hex 32 > {path}`, readable by pitchside only)")]
    Read {
        /// The file.
        path: String,
        /// OS error.
        source: std::io::Error,
    },
    /// Too short (or empty) once trimmed.
    #[error("console.token_file {path}: the token must be at least {MIN_TOKEN_LEN} characters (e.g. `openssl rand -hex 32 > {path}`)")]
    TooShort {
        /// The file.
        path: String,
    },
    /// Characters a header or cookie cannot carry.
    #[error("console.token_file {path}: the token may hold only printable ASCII without spaces, quotes, commas, semicolons or backslashes (e.g. `openssl rand -hex 32 > {path}`)")]
    BadChars {
        /// The file.
        path: String,
    },
}

impl Token {
    /// Reads the token from `path`, trimmed.
    pub fn read(path: &Path) -> Result<Token, TokenError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TokenError::Read {
            path: shown.clone(),
            source,
        })?;
        Token::new(text.trim(), &shown)
    }

    /// `text` as a token; `path` names it in errors.
    pub fn new(text: &str, path: &str) -> Result<Token, TokenError> {
        let path = path.to_string();
        if text.len() < MIN_TOKEN_LEN {
            return Err(TokenError::TooShort { path });
        }
        let ok = |b: u8| b.is_ascii_graphic() && !b"\",;\\".contains(&b);
        if !text.bytes().all(ok) {
            return Err(TokenError::BadChars { path });
        }
        Ok(Token(text.to_string()))
    }

    /// The token's text, for the cookie it sets.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `true` when `candidate` is the token. Takes the same time for every
    /// candidate of the token's length, whichever byte differs.
    pub fn matches(&self, candidate: &[u8]) -> bool {
        let secret = self.0.as_bytes();
        if candidate.len() != secret.len() {
            return false;
        }
        let diff = secret
            .iter()
            .zip(candidate)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(diff) == 0
    }

    /// `true` when the headers carry the token (bearer or cookie).
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let bearer = headers
            .get_all(AUTHORIZATION)
            .iter()
            .filter_map(|v| v.as_bytes().strip_prefix(b"Bearer "))
            .any(|t| self.matches(t));
        bearer
            || headers
                .get_all(COOKIE)
                .iter()
                .flat_map(|v| v.as_bytes().split(|&b| b == b';'))
                .filter_map(|c| c.trim_ascii().strip_prefix(COOKIE_NAME.as_bytes()))
                .filter_map(|c| c.strip_prefix(b"="))
                .any(|t| self.matches(t))
    }
}

/// Checks a request's `Host` for a console without a token: a loopback
/// name (`localhost`, `127.0.0.1`, `[::1]`) on any port (an `ssh -L`
/// tunnel may use any), or one of `allowed` (lower case). Anything else,
/// a missing `Host` included, is `Err` with the name seen: a hostile page
/// whose own name was made to point at 127.0.0.1 (DNS rebinding) sends its
/// own name.
pub fn host_allowed(host: Option<&HeaderValue>, allowed: &[String]) -> Result<(), String> {
    let seen = host.and_then(|h| h.to_str().ok()).unwrap_or("").trim();
    let name = match seen.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => seen
            .rsplit_once(':')
            .filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit()))
            .map_or(seen, |(name, _)| name),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    let ok = !name.is_empty() && (is_loopback(&name) || allowed.contains(&name));
    if ok {
        Ok(())
    } else {
        Err(seen.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_and_allowed_host_names_are_served_without_a_token() {
        let allowed = vec!["pitchside.venue.lan".to_string()];
        let check = |h: &str| host_allowed(Some(&HeaderValue::from_str(h).unwrap()), &allowed);
        for ok in [
            "localhost",
            "localhost:9000",
            "LOCALHOST:8080",
            "127.0.0.1:8080",
            "127.0.0.5",
            "[::1]:8080",
            "[::1]",
            "localhost.:80",
            "pitchside.venue.lan:8080",
            "Pitchside.Venue.Lan",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok}");
        }
        for bad in [
            "rebind.example:9000",
            "localhost.rebind.example",
            "127.0.0.1.nip.io:8080",
            "192.168.1.5:8080",
            "",
            ":8080",
        ] {
            assert_eq!(check(bad), Err(bad.to_string()), "{bad}");
        }
        assert_eq!(host_allowed(None, &allowed), Err(String::new()));
    }

    fn token() -> Token {
        Token::new("0123456789abcdef0123", "t").unwrap()
    }

    #[test]
    fn a_short_or_odd_token_is_refused_at_start() {
        assert!(matches!(
            Token::new("short", "t"),
            Err(TokenError::TooShort { .. })
        ));
        assert!(matches!(
            Token::new("0123456789abcdef;x", "t"),
            Err(TokenError::BadChars { .. })
        ));
        assert_eq!(format!("{:?}", token()), "Token(…)");
    }

    #[test]
    fn only_the_exact_token_matches() {
        let t = token();
        assert!(t.matches(b"0123456789abcdef0123"));
        assert!(!t.matches(b"0123456789abcdef012"));
        assert!(!t.matches(b"0123456789abcdef0124"));
        assert!(!t.matches(b""));
    }

    #[test]
    fn bearer_header_or_cookie_admits() {
        let t = token();
        let mut h = HeaderMap::new();
        assert!(!t.admits(&h));
        h.insert(
            AUTHORIZATION,
            HeaderValue::from_static("Bearer 0123456789abcdef0123"),
        );
        assert!(t.admits(&h));
        let mut h = HeaderMap::new();
        h.insert(
            COOKIE,
            HeaderValue::from_static("a=b; pitchside_token=0123456789abcdef0123"),
        );
        assert!(t.admits(&h));
        h.insert(COOKIE, HeaderValue::from_static("pitchside_token=nope"));
        assert!(!t.admits(&h));
    }
}
