//! One oversized MQTT message against a private mosquitto, the way a venue
//! meets it: a 64 MiB QoS 1 publish to a gateway whose address space is
//! capped at 250 MB. The gateway keeps running, acknowledges the message and
//! rejects it as `too_large` (journaling only its first bytes), later
//! messages flow, and a restart does not meet the message again.

use crate::common;

use common::broker::{mqtt_source, MqttRig, PASSWORD_ENV};
use common::services::*;
use common::*;
use std::time::Duration;

const T: Duration = Duration::from_secs(30);
/// The memory cap of the test (`prlimit --as`, address space): the field
/// report's 400 MB was resident memory; the gateway reserves more address
/// space than it uses (VmPeak 176 MB with this message, 28 MB resident).
const CAP: u64 = 250_000_000;
const BIG: usize = 64 << 20;

fn start(rig: &MqttRig, cfg: &std::path::Path) -> Gateway {
    Gateway::start_capped(cfg, rig.metrics, &[PASSWORD_ENV], CAP)
}

#[test]
fn a_64_mib_qos1_message_is_rejected_as_too_large_and_the_gateway_stays_up_under_a_memory_cap() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let table = broker.login(broker.port) + "keep_alive = \"5s\"\n";
    let extra = mqtt_source(
        &table,
        "topic = \"venue/generic/#\"\nsensor = \"generic\"\n",
    );
    let cfg = VenueConfig::fast(rig.dir.path(), rig.metrics)
        .extra(&extra)
        .write();
    let mut gw = start(&rig, &cfg);
    gw.log.wait_for("Subscribed.", 1, T);

    let big = rig.dir.path().join("big.json");
    std::fs::write(&big, vec![b'x'; BIG]).unwrap();
    broker.publish_file("venue/generic/big", &big);
    broker.publish(
        "venue/generic/env-1",
        &generic_events("env-1", 5, None, 0.0),
    );
    gw.wait_metric("pitchside_input_rows_total", 5.0, T);
    gw.wait_metric("pitchside_mqtt_oversized_messages_total", 1.0, T);
    assert!(gw.is_running(), "log:\n{}", gw.log.all().join("\n"));
    let peak_kib = gw.peak_rss_kib();
    let status = std::fs::read_to_string(format!("/proc/{}/status", gw.pid())).unwrap();
    let vm_peak = status
        .lines()
        .find(|l| l.starts_with("VmPeak"))
        .unwrap_or("");
    eprintln!("peak RSS with a 64 MiB message: {peak_kib} KiB; {vm_peak}");
    assert!(
        peak_kib < 64 * 1024,
        "the message was held in memory: {peak_kib} KiB"
    );
    let journal = bytes_under(&rig.dir.path().join("spool/journal"));
    assert!(journal < 1 << 20, "journal holds {journal} bytes");
    assert_eq!(gw.metric("pitchside_mqtt_disconnects_total"), 0.0);
    gw.stop();

    // The broker got its acknowledgement: a restart on the persistent
    // session does not meet the message again.
    let mut gw = start(&rig, &cfg);
    gw.log.wait_for("session_present=true", 1, T);
    broker.publish(
        "venue/generic/env-2",
        &generic_events("env-2", 3, None, 0.0),
    );
    gw.wait_metric("pitchside_input_rows_total", 3.0, T);
    std::thread::sleep(Duration::from_secs(1)); // any redelivery arrives
    assert!(gw.is_running(), "log:\n{}", gw.log.all().join("\n"));
    assert_eq!(gw.metric("pitchside_mqtt_oversized_messages_total"), 0.0);
    let log = gw.stop();
    assert!(!log.contains("venue/generic/big"), "redelivered:\n{log}");

    let store = rig.store();
    assert_eq!(rows(&store, "raw").len(), 8, "every small message, once");
    let rejects = rows(&store, "rejects");
    assert_eq!(rejects.len(), 1, "{rejects:?}");
    assert_eq!(s(&rejects[0], "source"), "mqtt:venue/generic/big");
    assert_eq!(s(&rejects[0], "reason"), "too_large");
}

/// The patched rumqttc decoder alone (`vendor/rumqttc/PITCHSIDE.md`): an
/// oversized PUBLISH fed in socket-sized pieces comes out cut, with its
/// topic, packet id and real length, its body never buffered; the packet
/// after it decodes as usual.
#[test]
fn rumqttc_reads_past_an_oversized_publish_and_decodes_the_next_packet() {
    use rumqttc::{Codec, Packet, Publish, QoS};
    use tokio_util::codec::Decoder;
    let mut codec = Codec {
        max_incoming_size: 64,
        max_outgoing_size: 1 << 20,
        discard: 0,
    };
    let mut big = Publish::new("a/b", QoS::AtLeastOnce, vec![7; 100_000]);
    big.pkid = 9;
    let mut small = Publish::new("a/b", QoS::AtLeastOnce, vec![1; 3]);
    small.pkid = 10;
    let mut wire = bytes::BytesMut::new();
    Packet::Publish(big).write(&mut wire, 1 << 20).unwrap();
    Packet::Publish(small.clone())
        .write(&mut wire, 1 << 20)
        .unwrap();
    let mut src = bytes::BytesMut::new();
    let mut out = Vec::new();
    let mut most_buffered = 0;
    for chunk in wire.chunks(1000) {
        src.extend_from_slice(chunk);
        while let Some(p) = codec.decode(&mut src).unwrap() {
            out.push(p);
        }
        most_buffered = most_buffered.max(src.len());
    }
    assert!(most_buffered <= 1000, "{most_buffered} bytes buffered");
    match &out[..] {
        [Packet::Publish(cut), Packet::Publish(next)] => {
            assert_eq!((cut.pkid, cut.topic.as_str()), (9, "a/b"));
            assert_eq!(cut.oversize, Some(2 + 3 + 2 + 100_000));
            assert_eq!(cut.payload.len(), 64 - 7);
            assert_eq!(next, &small);
        }
        other => panic!("{other:?}"),
    }
}
