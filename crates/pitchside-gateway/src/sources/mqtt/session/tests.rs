use super::*;

fn session(max_held: usize) -> (Session, Arc<SourceStats>) {
    let stats = Arc::new(SourceStats::default());
    let sub = |filter: &str, sensor| Subscription {
        filter: filter.to_string(),
        sensor,
        mapping: None,
    };
    let subs = vec![
        sub("venue/wearable/#", Some(SensorKind::Wearable)),
        sub("venue/+/raw", None),
    ];
    let s = Session::new(
        "b:1883".into(),
        Duration::from_secs(30),
        subs,
        max_held,
        64,
        stats.clone(),
    );
    (s, stats)
}

fn message(topic: &str, pkid: u16, room: bool) -> Input {
    let mut publish = Publish::new(topic, QoS::AtLeastOnce, vec![b'{', b'}']);
    publish.pkid = pkid;
    Input::Message {
        publish,
        received_at: 1_000,
        room,
    }
}

fn connected(present: bool) -> Input {
    Input::Connected {
        session_present: present,
    }
}

fn lost(severity: Severity) -> Input {
    Input::Lost {
        severity,
        message: "MQTT broker b:1883 unreachable".into(),
    }
}

#[test]
fn a_new_connection_subscribes_and_a_kept_session_does_not_again() {
    let (mut s, stats) = session(4);
    assert_eq!(stats.sources_down.load(Ordering::Relaxed), 1);
    let Some(Action::Subscribe(filters)) = s.on_event(connected(false)) else {
        panic!("no subscription")
    };
    let topics: Vec<&str> = filters.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(topics, ["venue/wearable/#", "venue/+/raw"]);
    assert_eq!(stats.sources_down.load(Ordering::Relaxed), 0);
    assert!(s
        .on_event(Input::SubAck(vec![SubscribeReasonCode::Failure]))
        .is_none());
    assert!(matches!(
        s.on_event(lost(Severity::Transient)),
        Some(Action::Wait(_))
    ));
    assert!(
        s.on_event(connected(true)).is_none(),
        "the broker kept them"
    );
    s.on_event(lost(Severity::Transient));
    assert!(matches!(
        s.on_event(connected(false)),
        Some(Action::Subscribe(_))
    ));
}

#[test]
fn connection_errors_back_off_and_only_losing_a_live_connection_counts() {
    let (mut s, stats) = session(4);
    for severity in [Severity::Operator, Severity::Operator, Severity::Transient] {
        assert!(matches!(s.on_event(lost(severity)), Some(Action::Wait(_))));
    }
    assert_eq!(stats.mqtt_disconnects.load(Ordering::Relaxed), 0);
    assert_eq!(s.silent_after(), None);
    s.on_event(connected(false));
    assert_eq!(s.silent_after(), Some(Duration::from_secs(60)));
    let Some(Action::Wait(d)) = s.on_event(lost(Severity::Transient)) else {
        panic!("no wait")
    };
    assert!(
        d <= Duration::from_millis(625),
        "backoff starts over: {d:?}"
    );
    assert_eq!(stats.mqtt_disconnects.load(Ordering::Relaxed), 1);
    assert_eq!(stats.sources_down.load(Ordering::Relaxed), 1);
}

#[test]
fn a_silent_broker_is_dropped_and_counted_as_a_disconnect() {
    let (mut s, stats) = session(4);
    s.on_event(connected(false));
    assert!(matches!(s.on_event(Input::Silent), Some(Action::Reconnect)));
    assert_eq!(stats.mqtt_disconnects.load(Ordering::Relaxed), 1);
    assert_eq!(s.silent_after(), None);
}

#[test]
fn a_message_goes_straight_to_the_pipeline_with_its_topic_kind_and_ack() {
    let (mut s, stats) = session(4);
    s.on_event(connected(false));
    let Some(Action::Deliver(h)) = s.on_event(message("venue/wearable/7", 5, true)) else {
        panic!("not delivered")
    };
    assert_eq!(&*h.input.source, "mqtt:venue/wearable/7");
    assert_eq!(h.input.sensor_hint, Some(SensorKind::Wearable));
    assert_eq!(
        (h.input.payload.as_slice(), h.input.received_at),
        (&b"{}"[..], 1_000)
    );
    let ack = h.ack.unwrap();
    assert_eq!((ack.pkid, ack.qos), (5, QoS::AtLeastOnce));
    assert!(s.connection().owns(&ack));
    let Some(Action::Deliver(h)) = s.on_event(message("venue/pitch/raw", 6, true)) else {
        panic!("not delivered")
    };
    assert_eq!(h.input.sensor_hint, None);
    assert_eq!(stats.mqtt_messages.load(Ordering::Relaxed), 2);
}

#[test]
fn messages_are_held_unacknowledged_while_the_pipeline_is_full_and_keep_their_order() {
    let (mut s, _) = session(4);
    s.on_event(connected(false));
    assert!(s.on_event(message("venue/wearable/1", 1, false)).is_none());
    assert!(s.is_holding());
    // Room again, but the held message goes first.
    assert!(s.on_event(message("venue/wearable/2", 2, true)).is_none());
    let order: Vec<u16> = std::iter::from_fn(|| s.pop_held())
        .map(|h| h.ack.unwrap().pkid)
        .collect();
    assert_eq!(order, [1, 2]);
    assert!(matches!(
        s.on_event(message("venue/wearable/3", 3, true)),
        Some(Action::Deliver(_))
    ));
}

#[test]
fn past_max_held_the_new_message_is_dropped_counted_and_acknowledged() {
    let (mut s, stats) = session(2);
    s.on_event(connected(false));
    for pkid in 1..=2 {
        assert!(s
            .on_event(message("venue/wearable/1", pkid, false))
            .is_none());
    }
    let Some(Action::Ack(ack)) = s.on_event(message("venue/wearable/1", 3, true)) else {
        panic!("a dropped message must be acknowledged")
    };
    assert_eq!(ack.pkid, 3);
    assert_eq!(stats.mqtt_dropped.load(Ordering::Relaxed), 1);
    let mut qos0 = Publish::new("venue/wearable/1", QoS::AtMostOnce, vec![]);
    qos0.pkid = 0;
    let input = Input::Message {
        publish: qos0,
        received_at: 2_000,
        room: false,
    };
    assert!(
        s.on_event(input).is_none(),
        "QoS 0 has nothing to acknowledge"
    );
    assert_eq!(stats.mqtt_dropped.load(Ordering::Relaxed), 2);
    let held = s.take_held();
    assert_eq!(held.len(), 2);
    assert!(!s.is_holding());
}

#[test]
fn an_ack_only_goes_to_the_connection_its_message_came_on() {
    let (mut s, _) = session(4);
    s.on_event(connected(false));
    s.on_event(message("venue/wearable/1", 1, false));
    let tokens = s.connection().clone();
    s.on_event(lost(Severity::Transient));
    s.on_event(connected(true));
    let held = s.pop_held().unwrap();
    assert!(
        !tokens.owns(&held.ack.unwrap()),
        "redelivered by the broker instead"
    );
    let Some(Action::Deliver(new)) = s.on_event(message("venue/wearable/1", 1, true)) else {
        panic!("not delivered")
    };
    assert!(tokens.owns(&new.ack.unwrap()));
}

fn delivered(action: Option<Action>) -> Held {
    match action {
        Some(Action::Deliver(h)) => h,
        other => panic!("expected a delivery, got {other:?}"),
    }
}

#[test]
fn payload_over_max_event_bytes_goes_on_cut_with_too_large_and_is_counted() {
    let (mut s, stats) = session(4);
    s.on_event(connected(false));
    let mut publish = Publish::new("venue/wearable/7", QoS::AtLeastOnce, vec![b'x'; 65]);
    publish.pkid = 3;
    let input = Input::Message {
        publish,
        received_at: 1,
        room: true,
    };
    let h = delivered(s.on_event(input));
    assert_eq!(h.input.payload.len(), 64);
    assert_eq!(
        h.input.framing_error,
        Some(FramingError::TooLarge { len: 65 })
    );
    assert_eq!(
        h.ack.map(|a| a.pkid),
        Some(3),
        "acknowledged once journaled"
    );
    assert_eq!(SourceStats::get(&stats.mqtt_oversized), 1);
}

#[test]
fn publish_cut_by_rumqttc_reports_its_whole_payload_length() {
    let (mut s, stats) = session(4);
    s.on_event(connected(false));
    // rumqttc kept 100 bytes of a packet of 2 + 16 (topic) + 2 + 64 MiB.
    let mut publish = Publish::new("venue/wearable/7", QoS::AtLeastOnce, vec![b'x'; 100]);
    publish.pkid = 4;
    publish.oversize = Some(2 + 16 + 2 + (64 << 20));
    let input = Input::Message {
        publish,
        received_at: 1,
        room: true,
    };
    let h = delivered(s.on_event(input));
    assert_eq!(h.input.payload.len(), 64);
    assert_eq!(
        h.input.framing_error,
        Some(FramingError::TooLarge { len: 64 << 20 })
    );
    assert_eq!(SourceStats::get(&stats.mqtt_oversized), 1);
}

#[test]
fn payload_of_exactly_max_event_bytes_goes_on_whole() {
    let (mut s, stats) = session(4);
    s.on_event(connected(false));
    let publish = Publish::new("venue/wearable/7", QoS::AtMostOnce, vec![b'x'; 64]);
    let input = Input::Message {
        publish,
        received_at: 1,
        room: true,
    };
    let h = delivered(s.on_event(input));
    assert_eq!((h.input.payload.len(), h.input.framing_error), (64, None));
    assert_eq!(SourceStats::get(&stats.mqtt_oversized), 0);
}
