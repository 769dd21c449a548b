use super::*;
use proptest::prelude::*;

fn err(line: &str) -> FormatError {
    parse(line).unwrap_err()
}

fn s(text: &str) -> FieldValue<'_> {
    FieldValue::Str(Cow::Borrowed(text))
}

#[test]
fn a_telegraf_line_with_every_kind_of_value_is_read() {
    let line = r#"cpu,host=a\ b,region=us-west usage=0.5,count=3i,up=true,msg="a \"b\"" 1700000000000000000"#;
    let p = parse(line).unwrap();
    assert_eq!(p.measurement, "cpu");
    assert_eq!(
        p.tags,
        [
            ("host".into(), "a b".into()),
            ("region".into(), "us-west".into())
        ]
    );
    let want = [
        ("usage", FieldValue::Float(0.5)),
        ("count", FieldValue::Int(3)),
        ("up", FieldValue::Bool(true)),
        ("msg", s("a \"b\"")),
    ];
    assert_eq!(p.fields.len(), want.len());
    for ((k, v), (wk, wv)) in p.fields.iter().zip(want) {
        assert_eq!((k.as_ref(), v), (wk, &wv));
    }
    assert_eq!(p.timestamp, Some(1_700_000_000_000_000_000));
}

#[test]
fn names_without_escapes_are_borrowed() {
    let p = parse("slm,dev=slm-1 laeq=84.3,note=\"ok\"").unwrap();
    assert!(matches!(p.measurement, Cow::Borrowed(_)));
    assert!(matches!(p.tags[0].1, Cow::Borrowed(_)));
    assert!(matches!(
        p.fields[1].1,
        FieldValue::Str(Cow::Borrowed("ok"))
    ));
    assert_eq!(p.timestamp, None);
}

#[test]
fn escapes_follow_each_part_of_the_line() {
    // The reference decoder's "escaped-values" case, on one line.
    let p = parse(r#" comma\,1,equals\==e\,x,two=val2 field\=x="fir\" st\\"  1602841605822791506"#)
        .unwrap();
    assert_eq!(p.measurement, "comma,1");
    assert_eq!(p.tags[0], ("equals=".into(), "e,x".into()));
    assert_eq!(p.fields[0], ("field=x".into(), s("fir\" st\\")));
    // The measurement does not escape '=', and a backslash before another byte stays.
    let p = parse(r#"a\=b\x,t=c\d v="\n\\""#).unwrap();
    assert_eq!(p.measurement, r"a\=b\x");
    assert_eq!(p.tags[0].1, r"c\d");
    assert_eq!(p.fields[0].1, s(r"\n\"));
    // `\\,` is a kept backslash and an escaped comma.
    assert_eq!(parse(r"m\\,x v=1").unwrap().measurement, r"m\,x");
}

#[test]
fn numbers_take_suffixes_and_exponents() {
    let p = parse("m a=1,b=-2.5,c=.5,d=1.,e=1e3,f=-1.5E-3,g=-9223372036854775808i,h=18446744073709551615u,i=0i").unwrap();
    let v: Vec<_> = p.fields.into_iter().map(|(_, v)| v).collect();
    use FieldValue::*;
    assert_eq!(
        v,
        [
            Float(1.0),
            Float(-2.5),
            Float(0.5),
            Float(1.0),
            Float(1e3),
            Float(-1.5e-3),
            Int(i64::MIN),
            UInt(u64::MAX),
            Int(0)
        ]
    );
}

#[test]
fn booleans_take_the_ten_spellings() {
    for (text, want) in [
        ("t", true),
        ("T", true),
        ("true", true),
        ("True", true),
        ("TRUE", true),
    ] {
        assert_eq!(
            parse(&format!("m b={text}")).unwrap().fields[0].1,
            FieldValue::Bool(want)
        );
    }
    for text in ["f", "F", "false", "False", "FALSE"] {
        assert_eq!(
            parse(&format!("m b={text}")).unwrap().fields[0].1,
            FieldValue::Bool(false)
        );
    }
    assert!(err("m b=tRUE").what.starts_with("a boolean"));
    assert!(err("m b=yes").what.starts_with("a field value"));
}

#[test]
fn nan_inf_and_bad_numbers_are_errors() {
    for line in [
        "m v=nan",
        "m v=NaN",
        "m v=inf",
        "m v=-inf",
        "m v=1e999",
        "m v=1.2.3",
        "m v=1e",
        "m v=.",
        "m v=0x10",
        "m v=1_000",
    ] {
        assert_eq!(err(line).at, 4, "{line}");
    }
}

#[test]
fn overflowing_integers_are_errors() {
    assert!(err("m v=9223372036854775808i")
        .what
        .starts_with("an integer from"));
    assert!(err("m v=18446744073709551616u")
        .what
        .starts_with("an unsigned integer up to"));
    assert!(err("m v=-1u").what.starts_with("an unsigned integer:"));
    assert!(err("m v=1.5i").what.starts_with("an integer:"));
    assert!(err("m v=1 9223372036854775808")
        .what
        .starts_with("a timestamp"));
}

#[test]
fn timestamps_may_be_negative_and_spaces_may_repeat() {
    let p = parse("  m,t=1   v=1   -5  \r\n").unwrap();
    assert_eq!(p.timestamp, Some(-5));
    assert_eq!(parse("m v=1 ").unwrap().timestamp, None);
    assert_eq!(err("m v=1 12a").at, 6);
    assert_eq!(
        err("m v=1 1 2").what,
        "the end of the line after the timestamp"
    );
}

#[test]
fn comments_and_blank_lines_are_not_points() {
    assert_eq!(
        err("# a comment").what,
        "a point (comment lines are not points)"
    );
    assert_eq!(err("   #x v=1").at, 3);
    assert_eq!(err("").what, "a point (the line is blank)");
}

#[test]
fn missing_parts_are_named() {
    assert_eq!(
        err("m").what,
        "a space and the fields (a point has at least one field)"
    );
    assert_eq!(err("m ").what, "a field key");
    assert_eq!(err(",t=1 v=1").what, "a measurement name");
    assert_eq!(err("m, t=1 v=1").what, "a tag key after ','");
    assert_eq!(err("m,t v=1").what, "'=' after the tag key");
    assert_eq!(
        err("m,t= v=1").what,
        "a tag value (leave out a tag that has none)"
    );
    assert_eq!(err("m v").what, "'=' after the field key");
    assert_eq!(err("m v=").what, "a field value after '='");
    assert_eq!(err("m v=1,").what, "a field key");
    assert_eq!(err("m v=\"abc").at, 4);
    assert_eq!(err("m v=\"abc\"x").at, 9);
}

#[test]
fn control_characters_in_names_are_errors() {
    assert_eq!(err("m foo\u{1}=bar").at, 5);
    assert_eq!(err("m,foo\u{3}=bar x=1").at, 5);
    assert_eq!(err("m,t=v\u{7f} x=1").at, 5);
}

#[test]
fn unicode_names_and_strings_are_kept() {
    let p = parse("TestBuckét,tág=∑¹ FieldOné=\"Häppy ☺\"").unwrap();
    assert_eq!(p.measurement, "TestBuckét");
    assert_eq!(p.tags[0].1, "∑¹");
    assert_eq!(p.fields[0], ("FieldOné".into(), s("Häppy ☺")));
}

#[test]
fn render_writes_the_escapes_and_leaves_out_what_cannot_be_written() {
    let p = Point {
        measurement: "c p,u=".into(),
        tags: vec![("h st".into(), "a,b=c".into()), ("empty".into(), "".into())],
        fields: vec![
            ("f=1".into(), s("say \"hi\" \\")),
            ("big".into(), FieldValue::Float(1e300)),
            ("n".into(), FieldValue::Int(-3)),
            ("u".into(), FieldValue::UInt(4)),
            ("b".into(), FieldValue::Bool(false)),
        ],
        timestamp: Some(7),
    };
    let mut out = String::new();
    render(&p, &mut out);
    assert_eq!(
        out,
        r#"c\ p\,u=,h\ st=a\,b\=c f\=1="say \"hi\" \\",big=1e300,n=-3i,u=4u,b=false 7"#
    );
    assert_eq!(parse(&out).unwrap().measurement, "c p,u=");
}

fn name() -> impl Strategy<Value = String> {
    "[a-z ,=\\\\\"é#]{0,5}[a-zé]"
}

fn field_value() -> impl Strategy<Value = FieldValue<'static>> {
    prop_oneof![
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(FieldValue::Float),
        any::<i64>().prop_map(FieldValue::Int),
        any::<u64>().prop_map(FieldValue::UInt),
        any::<bool>().prop_map(FieldValue::Bool),
        "[a-z ,=\\\\\"é\t]{0,8}".prop_map(|t| FieldValue::Str(t.into())),
    ]
}

proptest! {
    #[test]
    fn any_line_never_panics(line in "\\PC*") {
        let _ = parse(&line);
    }

    #[test]
    fn any_line_protocol_soup_never_panics(line in "[a-c ,=\\\\\"#.\\-0-9eiutf]{0,30}") {
        let _ = parse(&line);
    }

    #[test]
    fn render_then_parse_gives_the_point_back(
        measurement in "[a-z][a-z ,=\\\\\"é#]{0,5}[a-z]",
        tags in proptest::collection::vec((name(), name()), 0..3),
        fields in proptest::collection::vec((name(), field_value()), 1..4),
        timestamp in proptest::option::of(any::<i64>()),
    ) {
        let p = Point {
            measurement: measurement.into(),
            tags: tags.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
            fields: fields.into_iter().map(|(k, v)| (k.into(), v)).collect(),
            timestamp,
        };
        let mut line = String::new();
        render(&p, &mut line);
        prop_assert_eq!(parse(&line).unwrap(), p);
    }
}
