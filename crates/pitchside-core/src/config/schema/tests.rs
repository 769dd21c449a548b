use super::hints::{distance, exact_size};
use super::keys::{Key, Ty};
use super::*;
use crate::config::ConfigFile;

/// A document with a value of the right type for every key.
fn sample(keys: &'static [Key]) -> Table {
    let mut t = Table::new();
    for key in Key::each(keys) {
        let v = match key.ty {
            Ty::Text => Value::String("x".into()),
            Ty::Choice(names, _) => Value::String(names[0].into()),
            Ty::Flatten(_) => unreachable!("Key::each writes them out"),
            Ty::Duration => Value::String("1s".into()),
            Ty::Size => Value::String("1MiB".into()),
            Ty::BytesOrSize => Value::Integer(4096),
            Ty::Whole(_) | Ty::Int => Value::Integer(1),
            Ty::Number => Value::Float(1.5),
            Ty::Bool => Value::Boolean(true),
            Ty::Table(inner) => Value::Table(sample(inner)),
            Ty::Tables(inner) => Value::Array(vec![Value::Table(sample(inner))]),
            Ty::TextList => Value::Array(vec![Value::String("x".into())]),
            Ty::NumberList => Value::Array(vec![Value::Float(1.5)]),
            Ty::IntList => Value::Array(vec![Value::Integer(7)]),
            Ty::Scalar => Value::Integer(1),
            // One entry key only: a map entry takes exactly one source.
            Ty::TextOrTable(_) => Value::String("x".into()),
            Ty::Named(inner) => {
                let mut named = Table::new();
                named.insert("m".into(), Value::Table(sample(inner)));
                Value::Table(named)
            }
        };
        t.insert(key.name.into(), v);
    }
    t
}

/// The serde structs and the keys come from one declaration, so every
/// field is a key; what can still disagree is a schema type written in the
/// declaration (`[Duration]`) and the Rust type next to it.
#[test]
fn every_key_of_the_schema_is_accepted_by_serde_with_its_type() {
    let mut doc = sample(ROOT);
    let checked = check(&mut doc);
    assert!(checked.problems.is_empty(), "{:#?}", checked.problems);
    let parsed: Result<ConfigFile, _> = Value::Table(doc.clone()).try_into();
    let file = parsed.unwrap();
    // And what serde makes of it is what was written: no key is lost.
    let back: Table = toml::from_str(&toml::to_string(&file).unwrap()).unwrap();
    assert_eq!(back, doc);
}

#[test]
fn close_misspellings_get_a_suggestion() {
    assert_eq!(distance("windw", "window"), 1);
    assert_eq!(distance("treshold", "threshold"), 1);
    assert_eq!(distance("thresohld", "threshold"), 1);
    let mut doc: Table = toml::from_str("[detector]\ntreshold = 3\n").unwrap();
    let p = check(&mut doc).problems;
    assert!(p[0].contains("did you mean threshold?"), "{p:?}");
}

#[test]
fn sizes_in_bytes_are_shown_in_the_largest_exact_unit() {
    assert_eq!(exact_size(268_435_456), "256MiB");
    assert_eq!(exact_size(1 << 30), "1GiB");
    assert_eq!(exact_size(2048), "2KiB");
    assert_eq!(exact_size(1536), "1536B");
    assert_eq!(exact_size(1000), "1000B");
}

#[test]
fn a_required_key_that_is_missing_or_wrong_is_reported_once_and_its_stand_in_never_validated() {
    // Serde fills the removed `venue.id` from the section's Default (""),
    // which `validate` would refuse with a second, misleading problem.
    let text = "[venue]\nid = 5\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/o\"\nspool_dir = \"/tmp/s\"\n";
    match crate::config::parse_validated(text, "test") {
        Err(crate::config::ConfigError::Invalid { problems }) => assert_eq!(
            problems,
            ["venue.id: must be text in quotes, but it is the number 5; write id = \"5\""]
        ),
        other => panic!("{other:?}"),
    }
}
