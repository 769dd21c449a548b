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
    assert_eq!(
        f[0],
        (
            "a".into(),
            JsonValue::Num(Number::parse("1").expect("a number"))
        )
    );
    assert_eq!(f[1], ("b".into(), JsonValue::Str("x".into())));
    assert_eq!(f[2].1, JsonValue::Null);
    assert_eq!(f[3].1, JsonValue::Bool(true));
    assert_eq!(f[4].1, JsonValue::Object(r#"{"z":[1,2]}"#));
    assert_eq!(f[5].1, JsonValue::Array("[]"));
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
        "{\"a\":{\"b\":\"\\x\"}}",
        "{\"a\":[\"\\ud800\"]}",
        "{\"a\":[\"\\u12\"]}",
        "{\"a\":{\"b\\q\":1}}",
        "{\"a\":[\"abc]}",
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

#[test]
fn nested_values_keep_their_text_and_the_depth_limit_holds_for_strings_too() {
    let inner = format!(
        "{}\"x\\n\"{}",
        "[".repeat(MAX_DEPTH - 1),
        "]".repeat(MAX_DEPTH - 1)
    );
    let ok = format!("{{\"a\":{inner}}}");
    assert_eq!(fields(&ok)[0].1, JsonValue::Array(&inner));
    let too_deep = format!("{{\"a\":[{inner}]}}");
    assert!(parse(&too_deep).is_err());
}

proptest::proptest! {
    /// The word-at-a-time scan stops exactly where a byte-by-byte one does.
    #[test]
    fn plain_prefix_stops_at_the_first_quote_backslash_or_control(
        b in proptest::collection::vec(
            proptest::prop_oneof![
                4 => 0x20u8..=0xff,
                1 => proptest::sample::select(vec![b'"', b'\\', 0u8, 0x1f, 0x7f, 0x80]),
            ],
            0..40,
        )
    ) {
        let naive = b.iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20).unwrap_or(b.len());
        // Exact within whole words; the tail (< 8 bytes) is left to the caller.
        proptest::prop_assert_eq!(super::scan::plain_prefix(&b), naive.min(b.len() / 8 * 8));
    }
}
