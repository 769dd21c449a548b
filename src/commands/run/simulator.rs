//! The built-in simulator as a source of `pitchside run`: events at their
//! event times, on the wall clock, into the pipeline's input queue.

use crate::model::RawInput;
use crate::sources::simulator::Simulator;
use crate::util::time::now_micros;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::info;

/// Sends the simulator's events as they fall due (every 20 ms) until shutdown.
pub(crate) async fn simulator_source(
    mut sim: Simulator,
    tx: mpsc::Sender<RawInput>,
    shutdown: CancellationToken,
) {
    let source: crate::model::SourceName = Arc::from("simulator");
    let mut tick = tokio::time::interval(Duration::from_millis(20));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    info!(kinds = ?sim.kinds(), "Simulator started.");
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tick.tick() => {}
        }
        let now = now_micros();
        while sim.next_time() <= now {
            let (line, _) = sim.next_line();
            let input = RawInput {
                source: source.clone(),
                sensor_hint: None,
                payload: line.into_bytes(),
                received_at: now,
                framing_error: None,
                ack: None,
                mapping: None,
            };
            // A full queue makes the simulator wait: it has nothing to lose.
            if tx.send(input).await.is_err() {
                return;
            }
        }
    }
}
