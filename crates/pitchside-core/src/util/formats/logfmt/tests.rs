use super::*;
use proptest::prelude::*;

fn pairs(line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    parse(line, &mut out).unwrap();
    out.into_iter()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

fn p(k: &str, v: &str) -> (String, String) {
    (k.to_string(), v.to_string())
}

fn error(line: &str) -> FormatError {
    parse(line, &mut Vec::new()).unwrap_err()
}

#[test]
fn a_sound_meter_line_is_read_and_borrowed() {
    let line = "ts=2026-11-29T19:30:00Z dev=slm-1 laeq=84.3";
    let mut out = Vec::new();
    parse(line, &mut out).unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(out[2], (Cow::Borrowed("laeq"), Cow::Borrowed("84.3")));
    assert!(out
        .iter()
        .all(|(k, v)| matches!(k, Cow::Borrowed(_)) && matches!(v, Cow::Borrowed(_))));
}

#[test]
fn go_logfmt_decoder_cases_read_the_same() {
    assert_eq!(
        pairs("a=1 b=\"bar\" ƒ=2h3s r=\"esc\\t\" d x=sf   "),
        [
            p("a", "1"),
            p("b", "bar"),
            p("ƒ", "2h3s"),
            p("r", "esc\t"),
            p("d", ""),
            p("x", "sf")
        ]
    );
    assert_eq!(pairs("y= d y=g"), [p("y", ""), p("d", ""), p("y", "g")]);
    assert_eq!(pairs("y=\"f\\n\"y=g"), [p("y", "f\n"), p("y", "g")]);
    assert_eq!(pairs("x= "), [p("x", "")]);
    assert_eq!(pairs("y="), [p("y", "")]);
    assert_eq!(pairs("y"), [p("y", "")]);
}

#[test]
fn a_blank_line_has_no_pairs() {
    assert!(pairs("").is_empty());
    assert!(pairs(" \t\r\n").is_empty());
}

#[test]
fn tabs_and_control_bytes_separate_pairs() {
    assert_eq!(pairs("a=1\tb=2\r\n"), [p("a", "1"), p("b", "2")]);
    assert_eq!(pairs("y=f  \x1e y=g"), [p("y", "f"), p("y", "g")]);
}

#[test]
fn quoted_values_hold_spaces_equals_and_escapes() {
    assert_eq!(
        pairs(r#"msg="a \"b\" = c\\d" path="\/x" e="""#),
        [p("msg", "a \"b\" = c\\d"), p("path", "/x"), p("e", "")]
    );
    assert_eq!(pairs(r#"q="it\'s""#), [p("q", "it's")]);
}

#[test]
fn unicode_escapes_join_surrogate_pairs_and_replace_lone_ones() {
    assert_eq!(pairs(r#"u="\u00e9\ud83d\ude00""#), [p("u", "é😀")]);
    assert_eq!(pairs(r#"u="\ud83dx""#), [p("u", "\u{FFFD}x")]);
    assert_eq!(pairs(r#"u="\ude00""#), [p("u", "\u{FFFD}")]);
}

#[test]
fn a_bad_escape_is_an_error_at_its_backslash() {
    assert_eq!(error(r#"k="ab\q""#).at, 5);
    assert_eq!(error(r#"k="\u12G4""#).at, 3);
    assert_eq!(error(r#"k="\u12""#).at, 3);
}

#[test]
fn an_unterminated_quote_is_an_error_at_the_opening_quote() {
    let e = error(r#"a=1 msg="half"#);
    assert_eq!(e.at, 8);
    assert_eq!(e.what, "a closing quote for this quoted value");
    assert_eq!(error(r#"k="ends in \""#).at, 2);
}

#[test]
fn a_missing_key_is_an_error() {
    assert_eq!(error("a=1\t=bar").at, 4);
    assert_eq!(error("=").at, 0);
}

#[test]
fn a_quote_in_a_key_is_an_error() {
    assert_eq!(error("\"k\"=1").at, 0);
    assert_eq!(error("ab\"c=1").at, 2);
}

#[test]
fn equals_or_quote_in_an_unquoted_value_is_an_error() {
    assert_eq!(error("a=b=c").at, 3);
    assert_eq!(error("a=b\"c").at, 3);
}

#[test]
fn render_quotes_only_when_needed_and_fixes_bad_keys() {
    let mut s = String::new();
    render(
        &[
            ("dev", "slm-1"),
            ("msg", "a \"b\"\n"),
            ("e", ""),
            ("bad key", "x=y"),
            ("", "1"),
        ],
        &mut s,
    );
    assert_eq!(s, r#"dev=slm-1 msg="a \"b\"\n" e= bad_key="x=y" _=1"#);
    let mut s = String::new();
    render(&[("c", "\u{1}\u{7f}")], &mut s);
    assert_eq!(s, r#"c="\u0001\u007f""#);
}

proptest! {
    #[test]
    fn any_line_never_panics(line in "\\PC*") {
        let _ = parse(&line, &mut Vec::new());
    }

    #[test]
    fn any_escape_soup_never_panics(line in "[a=\" \\\\u0-9dDeE]{0,24}") {
        let _ = parse(&line, &mut Vec::new());
    }

    #[test]
    fn render_then_parse_gives_the_pairs_back(
        input in proptest::collection::vec(("[a-zé._\\-]{1,6}", "[a-c =\"\\\\\n\t\u{1}é😀]{0,6}"), 0..5),
    ) {
        let refs: Vec<(&str, &str)> = input.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let mut line = String::new();
        render(&refs, &mut line);
        prop_assert_eq!(pairs(&line), input);
    }
}
