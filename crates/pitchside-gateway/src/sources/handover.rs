//! Handing held inputs on to the pipeline queue. The serial and MQTT
//! sources never wait for the pipeline: what its queue cannot take yet is
//! held and passed on as places open, also while a source waits to
//! reconnect and when it stops.

use crate::model::RawInput;
use crate::util::bounded::Bounded;
use std::time::Duration;
use tokio::sync::mpsc::{Permit, Sender};
use tokio_util::sync::CancellationToken;

/// A source's inputs waiting for a place in the pipeline queue.
pub trait Holder {
    /// Whether any wait.
    fn is_holding(&self) -> bool;
    /// Sends the oldest into the place `permit` holds.
    fn hand_over(&mut self, permit: Permit<'_, RawInput>);
}

impl Holder for Bounded<RawInput> {
    fn is_holding(&self) -> bool {
        !self.is_empty()
    }

    fn hand_over(&mut self, permit: Permit<'_, RawInput>) {
        if let Some(input) = self.pop() {
            permit.send(input);
        }
    }
}

/// Sleeps `d` while still handing held inputs over to `tx`; true on
/// shutdown (or when the pipeline has gone).
pub async fn pause(
    held: &mut impl Holder,
    tx: &Sender<RawInput>,
    d: Duration,
    shutdown: &CancellationToken,
) -> bool {
    let sleep = tokio::time::sleep(d);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return true,
            _ = &mut sleep => return false,
            permit = tx.reserve(), if held.is_holding() => match permit {
                Ok(p) => held.hand_over(p),
                Err(_) => return true,
            },
        }
    }
}

/// At stop: hands every held item over as `input`, waiting for places while
/// the pipeline still runs; returns how many there were.
pub async fn hand_over_rest<T>(
    held: &mut Bounded<T>,
    tx: &Sender<RawInput>,
    input: impl Fn(T) -> RawInput,
) -> usize {
    let n = held.len();
    for item in held.drain() {
        if tx.send(input(item)).await.is_err() {
            break;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::bounded::WhenFull;
    use tokio::sync::mpsc;

    fn input(n: u8) -> RawInput {
        RawInput {
            source: "test".into(),
            sensor_hint: None,
            payload: vec![n],
            received_at: 0,
            framing_error: None,
            ack: None,
            mapping: None,
        }
    }

    #[tokio::test]
    async fn a_pause_hands_held_inputs_over_as_places_open() {
        let (tx, mut rx) = mpsc::channel::<RawInput>(1);
        let mut held = Bounded::new(4, WhenFull::DropNewest);
        for n in 0..3 {
            assert!(held.push(input(n)).is_none());
        }
        let shutdown = CancellationToken::new();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(i) = rx.recv().await {
                got.push(i.payload[0]);
            }
            got
        });
        let stopped = pause(&mut held, &tx, Duration::from_millis(200), &shutdown).await;
        assert!(!stopped);
        assert!(held.is_empty());
        drop(tx);
        assert_eq!(reader.await.unwrap(), [0, 1, 2]);
    }

    #[tokio::test]
    async fn a_pause_ends_at_shutdown_and_the_rest_is_handed_over_in_order() {
        let (tx, mut rx) = mpsc::channel(8);
        let mut held = Bounded::new(4, WhenFull::DropNewest);
        assert!(held.push(7u8).is_none());
        assert!(held.push(8u8).is_none());
        let shutdown = CancellationToken::new();
        shutdown.cancel();
        let mut empty = Bounded::<RawInput>::new(1, WhenFull::DropNewest);
        assert!(pause(&mut empty, &tx, Duration::from_secs(60), &shutdown).await);
        assert_eq!(hand_over_rest(&mut held, &tx, input).await, 2);
        assert_eq!(rx.recv().await.unwrap().payload, [7]);
        assert_eq!(rx.recv().await.unwrap().payload, [8]);
    }
}
