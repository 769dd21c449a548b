//! The body of `POST /api/alerts/{alert_id}/ack`, checked.

/// Longest name in an ack, in characters.
pub const MAX_BY: usize = 64;
/// Longest note in an ack, in characters.
pub const MAX_NOTE: usize = 500;

/// `{"by": "...", "note": "..."}` checked: `by` 1–64 characters, `note` at
/// most 500 (empty means none).
pub fn parse_ack(body: &[u8]) -> Result<(String, Option<String>), String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct AckBody {
        by: String,
        #[serde(default)]
        note: Option<String>,
    }
    let b: AckBody = serde_json::from_slice(body)
        .map_err(|e| format!("body must be {{\"by\": \"name\", \"note\": \"...\"}}: {e}"))?;
    let by = b.by.trim().to_string();
    if by.is_empty() || by.chars().count() > MAX_BY {
        return Err(format!("by: 1-{MAX_BY} characters"));
    }
    let note = b
        .note
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty());
    if note.as_ref().is_some_and(|n| n.chars().count() > MAX_NOTE) {
        return Err(format!("note: at most {MAX_NOTE} characters"));
    }
    Ok((by, note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ack_body_is_checked() {
        assert_eq!(
            parse_ack(br#"{"by":" Dr Khan ","note":"seen"}"#).unwrap(),
            ("Dr Khan".to_string(), Some("seen".to_string()))
        );
        assert_eq!(parse_ack(br#"{"by":"A","note":""}"#).unwrap().1, None);
        assert!(parse_ack(br#"{"by":"  "}"#).unwrap_err().starts_with("by:"));
        let long = format!(r#"{{"by":"{}"}}"#, "é".repeat(65));
        assert!(parse_ack(long.as_bytes()).is_err());
        let note = format!(r#"{{"by":"a","note":"{}"}}"#, "x".repeat(501));
        assert!(parse_ack(note.as_bytes()).unwrap_err().starts_with("note:"));
        assert!(parse_ack(br#"{"who":"a"}"#).is_err());
    }
}
