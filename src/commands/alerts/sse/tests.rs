use super::*;
use proptest::prelude::*;

fn parse(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut p = SseParser::new(1 << 20);
    chunks.iter().flat_map(|c| p.push(c)).collect()
}

fn ev(id: Option<&str>, event: &str, data: &str) -> SseEvent {
    SseEvent {
        id: id.map(str::to_string),
        event: event.into(),
        data: data.into(),
    }
}

#[test]
fn the_consoles_message_format_gives_id_type_and_data() {
    let got = parse(&[b"id: 7\nevent: alert\ndata: {\"kind\":\"anomaly\"}\n\n"]);
    assert_eq!(got, [ev(Some("7"), "alert", "{\"kind\":\"anomaly\"}")]);
}

#[test]
fn data_lines_join_with_newlines_and_comments_are_ignored() {
    let got = parse(&[b": ping\ndata: a\n: between\ndata:b\ndata\n\n"]);
    assert_eq!(got, [ev(None, "message", "a\nb\n")]);
}

#[test]
fn crlf_and_cr_line_ends_work_even_when_cut_between_cr_and_lf() {
    let got = parse(&[
        b"event: x\r",
        b"\ndata: 1\r\n\r",
        b"\nevent: y\rdata: 2\r\r",
    ]);
    assert_eq!(got, [ev(None, "x", "1"), ev(None, "y", "2")]);
}

#[test]
fn an_event_without_data_is_not_dispatched_and_its_type_does_not_leak() {
    let got = parse(&[b"event: state\n\ndata: d\n\n"]);
    assert_eq!(got, [ev(None, "message", "d")]);
}

#[test]
fn the_last_id_carries_over_and_retry_is_read() {
    let mut p = SseParser::new(1 << 20);
    let got = p.push(b"id: 1\ndata: a\n\ndata: b\n\nretry: 2500\nretry: x\n\n");
    assert_eq!(
        got,
        [ev(Some("1"), "message", "a"), ev(Some("1"), "message", "b")]
    );
    assert_eq!(p.retry_ms(), Some(2500));
}

#[test]
fn a_leading_byte_order_mark_is_dropped() {
    let got = parse(&[b"\xef\xbb", b"\xbfdata: x\n\n"]);
    assert_eq!(got, [ev(None, "message", "x")]);
}

#[test]
fn an_event_over_the_cap_is_skipped_and_counted_and_the_next_one_is_read() {
    let mut p = SseParser::new(16);
    let got = p.push(b"data: 0123456789abcdef\ndata: more\n\ndata: ok\n\n");
    assert_eq!(got, [ev(None, "message", "ok")]);
    assert_eq!(p.skipped(), 1);
}

#[test]
fn a_broken_stream_drops_the_half_event_on_reset() {
    let mut p = SseParser::new(1 << 20);
    assert!(p.push(b"id: 3\ndata: half").is_empty());
    p.reset();
    assert_eq!(
        p.push(b"data: whole\n\n"),
        [ev(Some("3"), "message", "whole")]
    );
}

/// An event as a test writes it: its fields and one line end for all its lines.
#[derive(Debug, Clone)]
struct Written {
    id: Option<String>,
    event: Option<String>,
    data: Vec<String>,
    comment: bool,
    end: &'static str,
}

fn written() -> impl Strategy<Value = Written> {
    let text = "[a-z0-9{}\":, é✓]{0,10}";
    (
        prop::option::of("[0-9]{1,4}"),
        prop::option::of(prop::sample::select(vec![
            "alert", "fatigue", "device", "ack", "state",
        ])),
        prop::collection::vec(text, 1..4),
        any::<bool>(),
        prop::sample::select(vec!["\n", "\r", "\r\n"]),
    )
        .prop_map(|(id, event, data, comment, end)| Written {
            id,
            event: event.map(str::to_string),
            data,
            comment,
            end,
        })
}

/// The stream bytes of `events` and the events a reader must get from them.
fn stream(events: &[Written]) -> (Vec<u8>, Vec<SseEvent>) {
    let (mut bytes, mut want, mut last_id) = (String::new(), Vec::new(), None);
    for w in events {
        let mut lines = Vec::new();
        if w.comment {
            lines.push(": keep-alive".to_string());
        }
        if let Some(id) = &w.id {
            lines.push(format!("id: {id}"));
            last_id = Some(id.clone());
        }
        if let Some(e) = &w.event {
            lines.push(format!("event:{e}"));
        }
        lines.extend(w.data.iter().map(|d| format!("data: {d}")));
        for l in lines {
            bytes.push_str(&l);
            bytes.push_str(w.end);
        }
        bytes.push_str(w.end);
        want.push(SseEvent {
            id: last_id.clone(),
            event: w.event.clone().unwrap_or_else(|| "message".into()),
            data: w.data.join("\n"),
        });
    }
    (bytes.into_bytes(), want)
}

proptest! {
    /// Cut anywhere (at every single position, and into many pieces), the
    /// stream gives the same events as in one piece, and they are the ones written.
    #[test]
    fn a_stream_cut_at_any_positions_gives_the_events_written(
        events in prop::collection::vec(written(), 1..6),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let (bytes, want) = stream(&events);
        prop_assert_eq!(&parse(&[&bytes]), &want);
        for at in 0..=bytes.len() {
            let (a, b) = bytes.split_at(at);
            prop_assert_eq!(&parse(&[a, b]), &want, "cut at {}", at);
        }
        let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
        at.sort();
        let mut pieces = Vec::new();
        let mut from = 0;
        for a in at {
            pieces.push(&bytes[from..a]);
            from = a;
        }
        pieces.push(&bytes[from..]);
        prop_assert_eq!(&parse(&pieces), &want);
    }
}
