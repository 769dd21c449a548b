use super::super::{parse_root, Number, Root, MAX_DEPTH};
use super::*;
use proptest::prelude::*;
use std::borrow::Cow;

/// The value `pointer` names in `doc`.
fn at<'a>(doc: &'a str, pointer: &str) -> Option<JsonValue<'a>> {
    let root = parse_root(doc).unwrap();
    Pointer::parse(pointer).unwrap().resolve(&root).unwrap()
}

fn num(t: &str) -> Option<JsonValue<'_>> {
    Some(JsonValue::Num(Number::parse(t)?))
}

fn text(s: &str) -> Option<JsonValue<'_>> {
    Some(JsonValue::Str(Cow::Borrowed(s)))
}

const BRIDGE: &str = r#"{"id":"C7:1A:9F","hr":{"bpm":151},"readings":[{"v":1.5},{"v":2}]}"#;

#[test]
fn every_pointer_of_the_rfc_6901_example_resolves() {
    let doc = r#"{"foo":["bar","baz"],"":0,"a/b":1,"c%d":2,"e^f":3,"g|h":4,
        "i\\j":5,"k\"l":6," ":7,"m~n":8}"#;
    assert_eq!(at(doc, ""), Some(JsonValue::Object(doc)));
    assert_eq!(at(doc, "/foo"), Some(JsonValue::Array(r#"["bar","baz"]"#)));
    assert_eq!(at(doc, "/foo/0"), text("bar"));
    assert_eq!(at(doc, "/foo/1"), text("baz"));
    for (pointer, n) in [
        ("/", "0"),
        ("/a~1b", "1"),
        ("/c%d", "2"),
        ("/e^f", "3"),
        ("/g|h", "4"),
        ("/i\\j", "5"),
        ("/k\"l", "6"),
        ("/ ", "7"),
        ("/m~0n", "8"),
    ] {
        assert_eq!(at(doc, pointer), num(n), "{pointer}");
    }
}

#[test]
fn the_heart_rate_bridge_fields_resolve() {
    assert_eq!(at(BRIDGE, "/id"), text("C7:1A:9F"));
    assert_eq!(at(BRIDGE, "/hr/bpm"), num("151"));
    assert_eq!(at(BRIDGE, "/readings/0/v"), num("1.5"));
    assert_eq!(at(BRIDGE, "/readings/1/v"), num("2"));
    assert_eq!(at(BRIDGE, "/hr"), Some(JsonValue::Object(r#"{"bpm":151}"#)));
}

#[test]
fn a_top_level_array_resolves_by_index() {
    let doc = r#" [ {"hr":{"bpm":151}} , 7 ] "#;
    assert_eq!(at(doc, "/0/hr/bpm"), num("151"));
    assert_eq!(at(doc, "/1"), num("7"));
    assert_eq!(
        at(doc, ""),
        Some(JsonValue::Array(r#"[ {"hr":{"bpm":151}} , 7 ]"#))
    );
    assert_eq!(at("42", ""), num("42"));
    assert_eq!(at("42", "/0"), None);
}

#[test]
fn paths_that_do_not_exist_are_none() {
    for pointer in [
        "/nope",
        "/hr/nope",
        "/hr/bpm/0",
        "/id/0",
        "/readings/2",
        "/readings/-",
        "/readings/01",
        "/readings/+1",
        "/readings/x",
        "/readings/0/v/x",
        "/readings/18446744073709551616",
        "/Hr/bpm",
    ] {
        assert_eq!(at(BRIDGE, pointer), None, "{pointer}");
    }
    assert_eq!(at(r#"{"o":{},"a":[]}"#, "/o/x"), None);
    assert_eq!(at(r#"{"o":{},"a":[]}"#, "/a/0"), None);
    assert_eq!(at(r#"{"o":{"":1}}"#, "/o/"), num("1"));
}

#[test]
fn index_like_tokens_still_name_object_keys() {
    let doc = r#"{"o":{"01":1,"-":2,"0":3}}"#;
    assert_eq!(at(doc, "/o/01"), num("1"));
    assert_eq!(at(doc, "/o/-"), num("2"));
    assert_eq!(at(doc, "/o/0"), num("3"));
}

#[test]
fn the_last_of_repeated_keys_wins_at_every_level() {
    let doc = r#"{"a":1,"a":2,"o":{"b":1,"b":{"c":3},"d":0}}"#;
    assert_eq!(at(doc, "/a"), num("2"));
    assert_eq!(at(doc, "/o/b/c"), num("3"));
}

#[test]
fn escaped_keys_and_strings_in_nested_objects_are_decoded() {
    let doc = r#"{"o":{"skip":"x\"y\u00e9","a\/b":1,"k\u0041":"v\n\ud83d\ude00"}}"#;
    assert_eq!(at(doc, "/o/a~1b"), num("1"));
    assert_eq!(at(doc, "/o/kA"), text("v\n😀"));
    assert_eq!(at(doc, "/o/skip"), text("x\"yé"));
}

#[test]
fn whitespace_inside_nested_values_is_skipped() {
    let doc = "{ \"hr\" : {\n\t\"bpm\" : 151 ,\r\n \"x\":[ 1 , [ ] ] } }";
    assert_eq!(at(doc, "/hr/bpm"), num("151"));
    assert_eq!(at(doc, "/hr/x/1"), Some(JsonValue::Array("[ ]")));
}

#[test]
fn the_deepest_accepted_leaf_is_reachable() {
    let doc = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert_eq!(at(&doc, &"/0".repeat(MAX_DEPTH)), num("1"));
    let err = Pointer::parse(&"/0".repeat(MAX_DEPTH + 1)).unwrap_err();
    assert!(err.contains("at most 64 deep"), "{err}");
}

#[test]
fn pointer_tokens_are_unescaped_tilde_one_before_tilde_zero() {
    let p = Pointer::parse("/~01/~10").unwrap();
    assert_eq!(p.segments[0].key, "~1");
    assert_eq!(p.segments[1].key, "/0");
    assert_eq!(at(r#"{"~1":{"/0":5}}"#, "/~01/~10"), num("5"));
}

#[test]
fn malformed_pointers_are_refused_with_the_reason() {
    let err = Pointer::parse("hr/bpm").unwrap_err();
    assert!(err.contains("must start with '/'"), "{err}");
    for bad in ["/a~2", "/a~", "/~/x", "/ok/~a"] {
        let err = Pointer::parse(bad).unwrap_err();
        assert!(err.contains("bad escape"), "{bad}: {err}");
        assert!(err.contains("'~' must be followed by 0"), "{bad}: {err}");
    }
}

#[test]
fn a_pointer_gives_back_its_text_for_reject_details() {
    let p = Pointer::parse("/hr/bpm").unwrap();
    assert_eq!(p.describe(), "/hr/bpm");
    assert_eq!(
        format!("field {p} not a number"),
        "field /hr/bpm not a number"
    );
    assert_eq!(Pointer::parse("").unwrap().to_string(), "");
}

#[test]
fn a_root_not_made_by_parse_root_gives_an_error_not_a_panic() {
    let p = Pointer::parse("/a/0").unwrap();
    for bad in [
        r#"{"a":"#,
        r#"{"a":[1"#,
        "{",
        "[",
        r#"{"a":[1]} x"#,
        "nope",
        "",
    ] {
        let root = Root::Value(JsonValue::Object(bad));
        assert!(p.resolve(&root).is_err(), "{bad}");
    }
}

/// Generated JSON for the properties.
#[derive(Debug, Clone)]
enum Node {
    Num(i64),
    Text(String),
    Bool(bool),
    Null,
    Obj(Vec<(String, Node)>),
    Arr(Vec<Node>),
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        any::<i64>().prop_map(Node::Num),
        "[a-z~/\"\\\\é😀\n ]{0,6}".prop_map(Node::Text),
        any::<bool>().prop_map(Node::Bool),
        Just(Node::Null),
    ];
    leaf.prop_recursive(6, 64, 4, |inner| {
        prop_oneof![
            prop::collection::btree_map("[a0-9~/\"\\\\é -]{0,3}", inner.clone(), 0..4)
                .prop_map(|m| Node::Obj(m.into_iter().collect())),
            prop::collection::vec(inner, 0..4).prop_map(Node::Arr),
        ]
    })
}

fn render_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            'é' => out.push_str("\\u00e9"),
            '😀' => out.push_str("\\ud83d\\ude00"),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn render(n: &Node, sp: &str, out: &mut String) {
    match n {
        Node::Num(x) => out.push_str(&x.to_string()),
        Node::Text(s) => render_str(s, out),
        Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Node::Null => out.push_str("null"),
        Node::Obj(members) => {
            out.push('{');
            for (i, (k, v)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(sp);
                render_str(k, out);
                out.push(':');
                out.push_str(sp);
                render(v, sp, out);
            }
            out.push('}');
        }
        Node::Arr(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(sp);
                render(v, sp, out);
            }
            out.push(']');
        }
    }
}

/// Every node of the tree with its pointer.
fn walk<'n>(n: &'n Node, pointer: String, out: &mut Vec<(String, &'n Node)>) {
    match n {
        Node::Obj(members) => {
            for (k, v) in members {
                let token = k.replace('~', "~0").replace('/', "~1");
                walk(v, format!("{pointer}/{token}"), out);
            }
        }
        Node::Arr(items) => {
            for (i, v) in items.iter().enumerate() {
                walk(v, format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push((pointer, n));
}

/// Whether `found` is what `expected` renders to.
fn same(found: &JsonValue<'_>, expected: &Node, sp: &str) -> bool {
    let mut text = String::new();
    render(expected, sp, &mut text);
    match (found, expected) {
        (JsonValue::Num(t), Node::Num(x)) => t.text() == x.to_string(),
        (JsonValue::Str(s), Node::Text(t)) => s == t,
        (JsonValue::Bool(a), Node::Bool(b)) => a == b,
        (JsonValue::Null, Node::Null) => true,
        (JsonValue::Object(span), Node::Obj(_)) | (JsonValue::Array(span), Node::Arr(_)) => {
            *span == text
        }
        _ => false,
    }
}

proptest! {
    #[test]
    fn every_node_of_generated_json_is_found_by_its_pointer(n in node(), spaced in any::<bool>()) {
        let sp = if spaced { " " } else { "" };
        let mut doc = String::new();
        render(&n, sp, &mut doc);
        let root = parse_root(&doc).unwrap();
        let mut nodes = Vec::new();
        walk(&n, String::new(), &mut nodes);
        for (pointer, expected) in nodes {
            let found = Pointer::parse(&pointer).unwrap().resolve(&root).unwrap();
            let found = found.unwrap_or_else(|| panic!("{pointer} not found in {doc}"));
            prop_assert!(same(&found, expected, sp), "{pointer} in {doc}: {found:?}");
        }
    }

    #[test]
    fn resolving_arbitrary_text_and_pointers_never_panics(
        doc in "[\\[\\]{}\":,0-9a-z~/\\\\ .eE+-]{0,80}",
        pointer in "(/[a-z0-9~-]{0,3}){0,4}",
        any_text in any::<String>(),
    ) {
        for p in [Pointer::parse(&pointer), Pointer::parse(&any_text)].into_iter().flatten() {
            if let Ok(root) = parse_root(&doc) {
                let _ = p.resolve(&root);
            }
            for text in [doc.as_str(), any_text.as_str()] {
                let _ = p.resolve(&Root::Value(JsonValue::Object(text)));
                let _ = p.resolve(&Root::Value(JsonValue::Array(text)));
            }
        }
    }

    #[test]
    fn truncated_nested_text_never_panics(n in node(), cut in any::<prop::sample::Index>()) {
        let mut doc = String::new();
        render(&n, "", &mut doc);
        let cuts: Vec<usize> = (0..=doc.len()).filter(|&i| doc.is_char_boundary(i)).collect();
        let text = &doc[..cuts[cut.index(cuts.len())]];
        let mut nodes = Vec::new();
        walk(&n, String::new(), &mut nodes);
        for (pointer, _) in nodes {
            let p = Pointer::parse(&pointer).unwrap();
            let _ = p.resolve(&Root::Value(JsonValue::Object(text)));
            let _ = p.resolve(&Root::Value(JsonValue::Array(text)));
        }
    }
}
