use super::*;
use proptest::prelude::*;

fn fields(line: &str, delimiter: u8) -> Vec<String> {
    let mut out = Vec::new();
    split(line, delimiter, &mut out).unwrap();
    out.into_iter().map(Cow::into_owned).collect()
}

fn error(line: &str) -> FormatError {
    split(line, b',', &mut Vec::new()).unwrap_err()
}

#[test]
fn plain_fields_are_split_on_the_delimiter_and_borrowed() {
    let mut out = Vec::new();
    split("2026-11-29T19:30:00Z,slm-1,84.3", b',', &mut out).unwrap();
    assert_eq!(out, ["2026-11-29T19:30:00Z", "slm-1", "84.3"]);
    assert!(out.iter().all(|f| matches!(f, Cow::Borrowed(_))));
}

#[test]
fn empty_fields_are_kept() {
    assert_eq!(fields(",a,,", b','), ["", "a", "", ""]);
    assert_eq!(fields("", b','), [""]);
}

#[test]
fn quoted_fields_hold_the_delimiter_and_doubled_quotes() {
    let line = r#""Smith, J.","say ""hi""","",x"#;
    assert_eq!(fields(line, b','), ["Smith, J.", "say \"hi\"", "", "x"]);
    let mut out = Vec::new();
    split(line, b',', &mut out).unwrap();
    assert!(matches!(out[0], Cow::Borrowed(_)));
    assert!(matches!(out[1], Cow::Owned(_)));
}

#[test]
fn unquoted_fields_keep_their_spaces() {
    assert_eq!(fields(" a , b ", b','), [" a ", " b "]);
}

#[test]
fn a_trailing_carriage_return_is_dropped() {
    assert_eq!(fields("a,b\r", b','), ["a", "b"]);
    assert_eq!(fields("a,\"b\"\r\n", b','), ["a", "b"]);
}

#[test]
fn other_delimiters_work() {
    assert_eq!(fields("a;b;\"c;d\"", b';'), ["a", "b", "c;d"]);
    assert_eq!(fields("a\tb c", b'\t'), ["a", "b c"]);
}

#[test]
fn multibyte_text_is_kept_whole() {
    assert_eq!(
        fields("Zoë,\"Müller, Ä\",84.3", b','),
        ["Zoë", "Müller, Ä", "84.3"]
    );
}

#[test]
fn an_unterminated_quote_is_an_error_at_the_opening_quote() {
    let e = error("a,\"b,c");
    assert_eq!(e.at, 2);
    assert_eq!(e.what, "a closing quote for this quoted field");
}

#[test]
fn a_quote_inside_an_unquoted_field_is_an_error() {
    assert_eq!(error("a,b\"c").at, 3);
    assert_eq!(error(" \"a\"").at, 1);
}

#[test]
fn text_after_a_closing_quote_is_an_error() {
    let e = error("\"a\" ,b");
    assert_eq!(e.at, 3);
    assert!(e.what.starts_with("the delimiter"));
}

#[test]
fn a_quote_or_non_ascii_delimiter_is_refused() {
    assert!(split("a", b'"', &mut Vec::new()).is_err());
    assert!(split("a\u{e9}", 0xC3, &mut Vec::new()).is_err());
}

#[test]
fn the_output_vector_is_cleared_and_reused() {
    let mut out = Vec::new();
    split("a,b,c", b',', &mut out).unwrap();
    split("d", b',', &mut out).unwrap();
    assert_eq!(out, ["d"]);
}

#[test]
fn render_quotes_only_when_needed() {
    let mut s = String::new();
    render(&["a", "b,c", "say \"hi\"", "", "x\ny"], b',', &mut s);
    assert_eq!(s, "a,\"b,c\",\"say \"\"hi\"\"\",,\"x\ny\"");
}

proptest! {
    #[test]
    fn any_line_and_delimiter_never_panic(line in "\\PC*", d in any::<u8>()) {
        let _ = split(&line, d, &mut Vec::new());
    }

    #[test]
    fn render_then_split_gives_the_fields_back(
        input in proptest::collection::vec("[a-c,;\"\r\n é]{0,6}", 1..6),
        semicolon in any::<bool>(),
    ) {
        let d = if semicolon { b';' } else { b',' };
        let refs: Vec<&str> = input.iter().map(String::as_str).collect();
        let mut line = String::new();
        render(&refs, d, &mut line);
        prop_assert_eq!(fields(&line, d), input);
    }
}
