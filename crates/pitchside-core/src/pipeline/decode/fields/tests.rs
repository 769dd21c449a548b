//! Tests of [`super::Fields`].

use super::{Fields, JsonValue, Key, Number, KNOWN, NUMBERS};

fn num(t: &str) -> Number<'_> {
    Number::parse(t).expect("a JSON number")
}

#[test]
fn the_slots_each_kind_owns_are_its_known_fields() {
    use crate::model::SensorKind;
    use crate::pipeline::decode::unknown::is_known_field;
    use std::borrow::Cow;
    let one = |name: &'static str, v: JsonValue<'static>| {
        let mut f = Fields::new();
        f.add(Key::Name(Cow::Borrowed(name)), v);
        f
    };
    for kind in SensorKind::ALL {
        for (i, name) in KNOWN.iter().enumerate() {
            let f = one(name, JsonValue::Num(num("1")));
            assert_eq!(
                f.may_have_unknown_numbers(kind),
                !is_known_field(kind, name),
                "{kind} {name} (slot {i})"
            );
        }
        assert!(one("accel", JsonValue::Num(num("1"))).may_have_unknown_numbers(kind));
        let text = one("accel", JsonValue::Str("x".into()));
        assert!(!text.may_have_unknown_numbers(kind));
    }
}

/// Past [`NUMBERS`] numeric fields, the names are read again from the
/// text: the same names in the same order, repeats included.
#[test]
fn numeric_names_come_in_document_order_past_the_kept_ones_too() {
    for extra in [0, 3, NUMBERS - 1, NUMBERS, NUMBERS + 5] {
        let mut doc = String::from(r#"{"sensor":"wearable","match_id":1,"heart_rate":1"#);
        let mut want = vec!["heart_rate".to_string()];
        for k in 0..extra {
            doc.push_str(&format!(r#","x{}":{k},"s":"t""#, k % 4));
            want.push(format!("x{}", k % 4));
        }
        doc.push_str(r#","decibels":2,"event_id":3}"#);
        want.push("decibels".into());
        let mut f = Fields::new();
        assert_eq!(f.read(&doc), Ok(None));
        let mut got = Vec::new();
        f.numbers(&doc, &mut |n| got.push(n.to_string()));
        assert_eq!(got, want, "{extra} extra fields");
    }
}
