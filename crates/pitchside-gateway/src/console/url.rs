//! Percent-decoding for the console's paths and queries (an alert id holds
//! `/`, so the page sends it as `%2F`).

/// `%XX` escapes decoded; `None` when they are broken or the result is not UTF-8.
pub fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .filter(|h| h.iter().all(u8::is_ascii_hexdigit))?;
            // Two hex digits: valid UTF-8 and a byte.
            out.push(u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The value of `name` in a query string (`a=1&token=…`), percent-decoded.
pub fn query_param(query: &str, name: &str) -> Option<String> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .and_then(|(_, v)| percent_decode(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alert_ids_are_percent_decoded() {
        assert_eq!(
            percent_decode("demo%2Fwearable%2Fb-7").as_deref(),
            Some("demo/wearable/b-7")
        );
        assert_eq!(percent_decode("a%2"), None);
        assert_eq!(percent_decode("%ff"), None);
        assert_eq!(percent_decode("%+f"), None);
    }

    #[test]
    fn query_token_is_found_and_decoded() {
        assert_eq!(
            query_param("x=1&token=a%2Bb", "token").as_deref(),
            Some("a+b")
        );
        assert_eq!(query_param("x=1", "token"), None);
    }
}
