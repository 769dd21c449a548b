//! One event stream's queue: alert, ack and health events in order,
//! bounded in bytes (`console.client_queue_bytes`), and at most one `state`
//! event, which a newer one replaces while it waits. So a stalled client
//! holds at most its byte bound plus one state doc (shared with every other
//! stream), at any venue size. A client that has let
//! [`STALLED_STATES`] states in a row be replaced is stalled and dropped.

use bytes::Bytes;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// States replaced in a row, unread (about one a second), after which the
/// stream is dropped as stalled.
pub const STALLED_STATES: u32 = 30;

/// Why a message was not queued: the stream must be dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behind {
    /// Its events would pass the byte bound.
    Bytes,
    /// It has not read the last [`STALLED_STATES`] states.
    Stalled,
}

/// What a push did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// Queued.
    Queued,
    /// Queued, replacing a state not yet sent.
    Replaced,
}

/// The queue itself, without I/O.
#[derive(Debug)]
pub struct Queue {
    limit: usize,
    events: VecDeque<(u64, Bytes)>,
    bytes: usize,
    state: Option<(u64, Bytes)>,
    replaced_in_a_row: u32,
}

impl Queue {
    /// An empty queue holding at most `limit` bytes of events.
    pub fn new(limit: usize) -> Queue {
        Queue {
            limit,
            events: VecDeque::new(),
            bytes: 0,
            state: None,
            replaced_in_a_row: 0,
        }
    }

    /// Queues event `id`; `Err` when it would pass the byte bound.
    pub fn event(&mut self, id: u64, msg: Bytes) -> Result<Pushed, Behind> {
        if self.bytes + msg.len() > self.limit {
            return Err(Behind::Bytes);
        }
        self.bytes += msg.len();
        self.events.push_back((id, msg));
        Ok(Pushed::Queued)
    }

    /// Queues state `id`, replacing a waiting one; `Err` once
    /// [`STALLED_STATES`] were replaced in a row.
    pub fn state(&mut self, id: u64, msg: Bytes) -> Result<Pushed, Behind> {
        let replaced = self.state.replace((id, msg)).is_some();
        if !replaced {
            return Ok(Pushed::Queued);
        }
        self.replaced_in_a_row += 1;
        if self.replaced_in_a_row >= STALLED_STATES {
            return Err(Behind::Stalled);
        }
        Ok(Pushed::Replaced)
    }

    /// The next message by id.
    pub fn pop(&mut self) -> Option<Bytes> {
        let event_first = match (self.events.front(), &self.state) {
            (Some((e, _)), Some((s, _))) => e < s,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        if event_first {
            let (_, m) = self.events.pop_front()?;
            self.bytes -= m.len();
            Some(m)
        } else {
            self.replaced_in_a_row = 0;
            self.state.take().map(|(_, m)| m)
        }
    }

    /// Event bytes waiting.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// A queue shared by the hub (pushing) and one stream (popping).
#[derive(Debug)]
pub struct Shared {
    queue: Mutex<Queue>,
    ready: Notify,
    closed: std::sync::atomic::AtomicBool,
}

impl Shared {
    /// A new queue of `limit` event bytes, and the stream's end of it.
    pub fn new(limit: usize) -> (Arc<Shared>, Receiver) {
        let s = Arc::new(Shared {
            queue: Mutex::new(Queue::new(limit)),
            ready: Notify::new(),
            closed: false.into(),
        });
        (s.clone(), Receiver(s))
    }

    /// Pushes with `f` and wakes the stream.
    pub fn push(
        &self,
        f: impl FnOnce(&mut Queue) -> Result<Pushed, Behind>,
    ) -> Result<Pushed, Behind> {
        let r = match self.queue.lock() {
            Ok(mut q) => f(&mut q),
            Err(_) => Err(Behind::Stalled),
        };
        self.ready.notify_one();
        r
    }

    /// The stream has gone (its receiver dropped).
    pub fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// The stream's end: yields messages in id order.
#[derive(Debug)]
pub struct Receiver(Arc<Shared>);

impl Receiver {
    /// The next message; waits for one.
    pub async fn recv(&self) -> Option<Bytes> {
        loop {
            let next = self.0.queue.lock().ok()?.pop();
            if let Some(m) = next {
                return Some(m);
            }
            self.0.ready.notified().await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.0
            .closed
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(n: usize) -> Bytes {
        Bytes::from(vec![b'x'; n])
    }

    #[test]
    fn a_newer_state_replaces_the_waiting_one_and_order_stays_by_id() {
        let mut q = Queue::new(1000);
        assert_eq!(q.state(1, Bytes::from_static(b"s1")), Ok(Pushed::Queued));
        q.event(2, Bytes::from_static(b"e2")).unwrap();
        assert_eq!(q.state(3, Bytes::from_static(b"s3")), Ok(Pushed::Replaced));
        q.event(4, Bytes::from_static(b"e4")).unwrap();
        let got: Vec<Bytes> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(got, ["e2", "s3", "e4"]);
        assert_eq!(q.bytes(), 0);
    }

    #[test]
    fn events_past_the_byte_bound_mean_the_client_is_behind() {
        let mut q = Queue::new(100);
        q.event(1, b(60)).unwrap();
        assert_eq!(q.event(2, b(41)), Err(Behind::Bytes));
        q.event(3, b(40)).unwrap();
        // A state never counts against the bound, however large.
        assert_eq!(q.state(4, b(10_000)), Ok(Pushed::Queued));
        q.pop();
        q.event(5, b(60)).unwrap();
        assert_eq!(q.bytes(), 100);
    }

    #[test]
    fn a_client_reading_nothing_for_stalled_states_is_dropped() {
        let mut q = Queue::new(100);
        q.state(0, b(1)).unwrap();
        for i in 1..STALLED_STATES as u64 {
            assert_eq!(q.state(i, b(1)), Ok(Pushed::Replaced));
        }
        assert_eq!(q.state(99, b(1)), Err(Behind::Stalled));
        // Reading a state starts the count again.
        let mut q = Queue::new(100);
        for i in 0..100 {
            q.state(i, b(1)).unwrap();
            q.pop();
        }
    }
}
