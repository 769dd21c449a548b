//! The decoder's unknown-field accounting, and resolving a JSON Pointer on a
//! parsed document, cost no allocation in steady state: counted with a
//! counting global allocator, not asserted in a comment.

use pitchside::pipeline::decode::json::{parse_root, JsonValue, Number, Pointer};
use pitchside::pipeline::decode::unknown::UnknownFields;
use pitchside::pipeline::decode::{Decoded, Decoder};
#[path = "common/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::allocations;

#[test]
fn a_known_unknown_field_costs_no_allocation_beyond_a_plain_event() {
    let d = Decoder::new(4096, vec![], None);
    let mut u = UnknownFields::default();
    let plain: &[u8] =
        br#"{"sensor":"wearable","device_id":"w-1","event_time":1000,"player_id":7,"heart_rate":80}"#;
    let extra: &[u8] = br#"{"sensor":"wearable","device_id":"w-1","event_time":1000,"player_id":7,"heart_rate":80,"accel":1.5}"#;
    let decode = |line: &[u8], u: &mut UnknownFields| {
        let r = d.decode_bytes_with(line, None, 0, &mut |k, _, name| {
            u.note(k, name);
        });
        assert!(matches!(r, Decoded::Event(_)));
    };
    decode(extra, &mut u); // the first sighting keeps the name: one allocation, once
    let a_plain = allocations(|| decode(plain, &mut u));
    let a_extra = allocations(|| decode(extra, &mut u));
    assert_eq!(a_extra, a_plain, "counting a known name allocates nothing");
    let a_plain_noted = allocations(|| decode(plain, &mut u));
    let a_plain_bare = allocations(|| {
        assert!(matches!(d.decode_bytes(plain, None, 0), Decoded::Event(_)));
    });
    assert_eq!(
        a_plain_noted, a_plain_bare,
        "the field scan allocates nothing"
    );
    assert_eq!(u.iter().next().map(|(_, _, n)| n), Some(2));
}

#[test]
fn resolving_nested_pointers_allocates_nothing() {
    // The skipped members have escapes: passing over them copies nothing.
    let doc = r#"{"id":"C7:1A:9F","note":"a\"b","hr":{"src":"strap\u00e9","bpm":151},
        "readings":[{"tag":"x\ny","v":1.5}]}"#;
    let root = parse_root(doc).unwrap();
    let bpm = Pointer::parse("/hr/bpm").unwrap();
    let v = Pointer::parse("/readings/0/v").unwrap();
    let missing = Pointer::parse("/hr/nope").unwrap();
    let mut found = Vec::with_capacity(3);
    let n = allocations(|| {
        found.push(bpm.resolve(&root));
        found.push(v.resolve(&root));
        found.push(missing.resolve(&root));
    });
    assert_eq!(n, 0, "resolving allocated");
    assert_eq!(
        found[0],
        Ok(Some(JsonValue::Num(Number::parse("151").unwrap())))
    );
    assert_eq!(
        found[1],
        Ok(Some(JsonValue::Num(Number::parse("1.5").unwrap())))
    );
    assert_eq!(found[2], Ok(None));
    // The counter does see the one case that must copy: an escaped string found.
    let note = Pointer::parse("/hr/src").unwrap();
    assert!(allocations(|| found.push(note.resolve(&root))) > 0);
}
