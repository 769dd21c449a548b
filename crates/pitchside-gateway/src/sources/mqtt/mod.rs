//! The MQTT source: subscribes at QoS 1 on a persistent session, one event
//! per message, manual acknowledgements.
//!
//! The event loop is polled all the time, whatever the pipeline does. A
//! message goes straight into the pipeline queue when it has room, carrying
//! an ack token that the pipeline calls once the message is in its journal
//! and fsynced; otherwise it is held (up to `max_held`) without an
//! acknowledgement, so the broker's in-flight window (mosquitto:
//! `max_inflight_messages`, 20) stops further QoS 1 deliveries until the
//! pipeline catches up. Past `max_held` (only reachable with QoS 0 traffic
//! or an unlimited in-flight window) messages are dropped and counted.
//!
//! Reconnects use [`crate::util::backoff::Backoff`] between failing polls
//! (rumqttc alone would retry at once, in a busy loop). A connection with no
//! packet from the broker for twice the keep-alive is dropped and made
//! again. Each state change is logged once, not every retry.
//!
//! As rumqttc is built: [`session`] is the state machine (no I/O), [`task`]
//! the loop that polls rumqttc's event loop and carries its actions out.

pub mod session;
pub mod task;

pub use task::MqttSource;

/// How health and metrics name an MQTT source: `mqtt:{host:port}`.
pub fn source_name(addr: &str) -> String {
    format!("mqtt:{addr}")
}
