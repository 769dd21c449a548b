use super::*;
use crate::sinks::alerts::message::tests::{origin, zscore};
use crate::sinks::alerts::AlertSender;

fn settings(capacity: usize, when_full: WhenFull) -> AlertSettings {
    AlertSettings {
        prefix: "alerts".into(),
        capacity,
        when_full,
    }
}

fn session(capacity: usize, when_full: WhenFull, max_inflight: usize) -> Session {
    let stats = Arc::new(AlertStats::default());
    let cfg = settings(capacity, when_full);
    Session::new("b:1883".into(), cfg, origin(), max_inflight, stats)
}

fn queue(s: &mut Session, topics: &[&str]) {
    for t in topics {
        let m = Message {
            topic: t.to_string(),
            payload: vec![],
        };
        s.enqueue(m, 0);
    }
}

fn published(s: &mut Session) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(m) = s.next_publish() {
        out.push(m.topic.clone());
    }
    out
}

/// Connected with a window of two: "a" and "b" handed out, "c" queued.
fn two_in_flight() -> Session {
    let mut s = session(10, WhenFull::DropOldest, 2);
    s.on_event(Input::Connected);
    queue(&mut s, &["a", "b", "c"]);
    assert_eq!(published(&mut s), ["a", "b"]);
    s
}

fn lost(s: &mut Session) -> Option<Action> {
    s.on_event(Input::Lost {
        severity: Severity::Transient,
        message: "MQTT broker b:1883 unreachable".into(),
    })
}

#[test]
fn nothing_goes_out_before_the_broker_accepts_the_connection() {
    let mut s = session(10, WhenFull::DropOldest, 8);
    queue(&mut s, &["a", "b"]);
    assert!(published(&mut s).is_empty());
    s.on_event(Input::Connected);
    assert_eq!(published(&mut s), ["a", "b"]);
}

#[test]
fn at_most_max_inflight_alerts_wait_for_an_ack_and_an_ack_makes_room() {
    let mut s = two_in_flight();
    s.on_event(Input::PublishSent(1));
    s.on_event(Input::PublishSent(2));
    s.on_event(Input::PubAck(2));
    assert_eq!(published(&mut s), ["c"]);
    assert_eq!(AlertStats::get(&s.stats.published), 1);
    assert_eq!(s.unsent(), 2);
    s.on_event(Input::PubAck(9));
    assert_eq!(AlertStats::get(&s.stats.published), 1, "an unknown ack");
}

#[test]
fn a_reconnect_sends_the_unacknowledged_window_again_before_the_queue() {
    let mut s = two_in_flight();
    s.on_event(Input::PublishSent(1));
    assert!(matches!(lost(&mut s), Some(Action::Wait(_))));
    assert_eq!(AlertStats::get(&s.stats.disconnects), 1);
    queue(&mut s, &["d"]);
    assert!(published(&mut s).is_empty(), "nothing goes out while away");
    s.on_event(Input::Connected);
    s.on_event(Input::PubAck(1));
    assert_eq!(
        AlertStats::get(&s.stats.published),
        0,
        "an ack of the old connection"
    );
    assert_eq!(published(&mut s), ["a", "b"]);
    s.on_event(Input::PublishSent(7));
    s.on_event(Input::PubAck(7));
    assert_eq!(published(&mut s), ["c"]);
    assert_eq!(AlertStats::get(&s.stats.queued), 3);
}

#[test]
fn a_publish_rumqttc_refuses_is_handed_again_next_time() {
    let mut s = session(10, WhenFull::DropOldest, 8);
    s.on_event(Input::Connected);
    queue(&mut s, &["a", "b"]);
    assert_eq!(s.next_publish().map(|m| m.topic.clone()), Some("a".into()));
    s.publish_refused();
    assert_eq!(published(&mut s), ["a", "b"]);
}

#[test]
fn full_queue_drops_the_oldest_or_the_newest_as_configured_and_counts() {
    for (when_full, kept) in [
        (WhenFull::DropOldest, ["b", "c"]),
        (WhenFull::DropNewest, ["a", "b"]),
    ] {
        let mut s = session(2, when_full, 8);
        queue(&mut s, &["a", "b", "c"]);
        assert_eq!(AlertStats::get(&s.stats.dropped), 1);
        s.on_event(Input::Connected);
        assert_eq!(published(&mut s), kept);
    }
}

#[test]
fn a_reload_drops_what_no_longer_fits_by_the_new_rule_and_renames_the_topics() {
    let mut s = session(5, WhenFull::DropNewest, 8);
    queue(&mut s, &["a", "b", "c", "d", "e"]);
    let mut new = settings(3, WhenFull::DropOldest);
    new.prefix = "site/alerts".into();
    s.reconfigure(new.clone());
    assert_eq!(AlertStats::get(&s.stats.dropped), 2);
    assert_eq!(s.settings(), &new);
    s.on_event(Input::Alert(Box::new(zscore()), 0));
    assert_eq!(AlertStats::get(&s.stats.dropped), 3);
    s.on_event(Input::Connected);
    let out = published(&mut s);
    assert_eq!(out[..2], ["d", "e"]);
    assert!(out[2].starts_with("site/alerts/"), "{out:?}");
}

#[test]
fn errors_back_off_and_only_losing_a_live_connection_counts_a_disconnect() {
    let mut s = session(10, WhenFull::DropOldest, 8);
    for _ in 0..3 {
        assert!(matches!(lost(&mut s), Some(Action::Wait(_))));
    }
    assert_eq!(AlertStats::get(&s.stats.disconnects), 0);
    s.on_event(Input::Connected);
    let Some(Action::Wait(d)) = lost(&mut s) else {
        panic!("no wait")
    };
    assert!(
        d <= Duration::from_millis(625),
        "backoff starts over: {d:?}"
    );
    assert_eq!(AlertStats::get(&s.stats.disconnects), 1);
}

#[test]
fn alerts_the_full_channel_cannot_take_are_dropped_and_counted() {
    let (tx, _rx) = tokio::sync::mpsc::channel(1);
    let stats = Arc::new(AlertStats::default());
    let sender = AlertSender {
        tx,
        stats: stats.clone(),
    };
    sender.offer(vec![zscore(), zscore(), zscore()]);
    assert_eq!(AlertStats::get(&stats.dropped), 2);
}
