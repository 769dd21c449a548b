//! Who holds the console's connection slots. Event streams have their own
//! budget (`console.max_clients`, see [`super::hub`]); every other
//! connection (page loads, API calls, clients still sending their request
//! head) takes a slot here. A connection waiting for its next request head
//! can be evicted: when the slots are full, or its address holds
//! [`PER_IP_CONNECTIONS`], a newcomer closes the oldest such connection
//! (of its own address first) instead of being refused. So silent sockets
//! cannot lock out a client that sends its request at once. Pure: time is
//! an argument, the handle that closes a connection is generic.

use crate::model::Micros;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// What closes a connection, and whose it is (the server's `K`).
pub type Handle = (tokio_util::sync::CancellationToken, std::net::SocketAddr);

/// Slots one client address may hold at most (its event streams aside).
pub const PER_IP_CONNECTIONS: usize = 16;

#[derive(Debug)]
struct Entry<K> {
    id: u64,
    ip: IpAddr,
    /// Since when it has been waiting for a request head.
    since: Micros,
    /// Waiting for a request head (evictable), not serving one.
    waiting: bool,
    close: K,
}

/// Why a connection got no slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its address holds [`PER_IP_CONNECTIONS`], each serving a request.
    PerIp,
    /// Every slot is serving a request.
    Full,
}

/// The slots; `K` closes a connection (a cancellation token).
#[derive(Debug)]
pub struct Slots<K> {
    cap: usize,
    per_ip: usize,
    entries: Vec<Entry<K>>,
    next: u64,
}

impl<K> Slots<K> {
    /// `cap` slots, `per_ip` of them per address at most.
    pub fn new(cap: usize, per_ip: usize) -> Slots<K> {
        Slots {
            cap: cap.max(1),
            per_ip: per_ip.max(1),
            entries: Vec::new(),
            next: 0,
        }
    }

    /// The slots there are.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// Slots held now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when no slot is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A slot for a new connection from `ip` at `now`, waiting for its
    /// head: its id, and the handle of the connection evicted for it.
    pub fn admit(
        &mut self,
        ip: IpAddr,
        now: Micros,
        close: K,
    ) -> Result<(u64, Option<K>), Refusal> {
        let same_ip = self.entries.iter().filter(|e| e.ip == ip).count();
        let victim = if same_ip >= self.per_ip {
            Some(self.oldest_waiting(Some(ip)).ok_or(Refusal::PerIp)?)
        } else if self.entries.len() >= self.cap {
            Some(self.oldest_waiting(None).ok_or(Refusal::Full)?)
        } else {
            None
        };
        let evicted = victim.map(|i| self.entries.swap_remove(i).close);
        self.next += 1;
        self.entries.push(Entry {
            id: self.next,
            ip,
            since: now,
            waiting: true,
            close,
        });
        Ok((self.next, evicted))
    }

    fn oldest_waiting(&self, ip: Option<IpAddr>) -> Option<usize> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.waiting && ip.is_none_or(|ip| e.ip == ip))
            .min_by_key(|(_, e)| (e.since, e.id))
            .map(|(i, _)| i)
    }

    /// Slot `id` is serving a request (not evictable).
    pub fn busy(&mut self, id: u64) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.id == id) {
            e.waiting = false;
        }
    }

    /// Slot `id` answered and waits for its next request head from `now`.
    pub fn waiting(&mut self, id: u64, now: Micros) {
        if let Some(e) = self.entries.iter_mut().find(|e| e.id == id) {
            e.waiting = true;
            e.since = now;
        }
    }

    /// Frees slot `id` (closed, or become an event stream); again is a no-op.
    pub fn release(&mut self, id: u64) {
        self.entries.retain(|e| e.id != id);
    }
}

/// The slots, shared by the listener and the connections.
pub type SharedSlots<K> = Arc<Mutex<Slots<K>>>;

/// One connection's slot.
#[derive(Debug)]
pub struct Slot<K> {
    id: u64,
    slots: SharedSlots<K>,
}

impl<K> Clone for Slot<K> {
    fn clone(&self) -> Self {
        Slot {
            id: self.id,
            slots: self.slots.clone(),
        }
    }
}

impl<K> Slot<K> {
    /// The handle of slot `id` in `slots`.
    pub fn new(id: u64, slots: SharedSlots<K>) -> Slot<K> {
        Slot { id, slots }
    }

    fn with(&self, f: impl FnOnce(&mut Slots<K>)) {
        if let Ok(mut s) = self.slots.lock() {
            f(&mut s);
        }
    }

    /// A request head came in.
    pub fn busy(&self) {
        self.with(|s| s.busy(self.id));
    }

    /// Answered; waiting for the next head from `now`.
    pub fn waiting(&self, now: Micros) {
        self.with(|s| s.waiting(self.id, now));
    }

    /// Frees the slot.
    pub fn release(&self) {
        self.with(|s| s.release(self.id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn a_newcomer_evicts_the_oldest_connection_still_waiting_for_its_head() {
        let mut s = Slots::new(3, 16);
        let (a, _) = s.admit(ip(1), 10, "a").unwrap();
        let (_, _) = s.admit(ip(2), 20, "b").unwrap();
        let (c, _) = s.admit(ip(3), 30, "c").unwrap();
        s.busy(a);
        s.busy(c);
        // Full: "b" is the only one waiting.
        assert_eq!(s.admit(ip(4), 40, "d").unwrap().1, Some("b"));
        assert_eq!(s.len(), 3);
        // "d" waits; "a" and "c" serve: "d" goes next.
        assert_eq!(s.admit(ip(5), 50, "e").unwrap().1, Some("d"));
        s.waiting(a, 60);
        assert_eq!(s.admit(ip(6), 70, "f").unwrap().1, Some("e"));
    }

    #[test]
    fn every_slot_serving_refuses_the_newcomer() {
        let mut s = Slots::new(2, 16);
        for i in 1..=2 {
            let (id, _) = s.admit(ip(i), 0, i).unwrap();
            s.busy(id);
        }
        assert_eq!(s.admit(ip(9), 1, 9), Err(Refusal::Full));
        assert_eq!(s.len(), 2);
    }

    #[test]
    fn one_address_past_its_share_evicts_its_own_oldest_first() {
        let mut s = Slots::new(10, 2);
        s.admit(ip(9), 0, "other").unwrap();
        let (x, _) = s.admit(ip(1), 1, "x").unwrap();
        s.admit(ip(1), 2, "y").unwrap();
        s.busy(x);
        // The other address's older waiting connection stays.
        assert_eq!(s.admit(ip(1), 3, "z").unwrap().1, Some("y"));
        let z = s.entries.iter().find(|e| e.close == "z").unwrap().id;
        s.busy(z);
        assert_eq!(s.admit(ip(1), 4, "w"), Err(Refusal::PerIp));
        assert!(s.admit(ip(2), 4, "v").is_ok());
    }

    #[test]
    fn a_released_slot_is_free_again_and_releasing_twice_is_harmless() {
        let mut s = Slots::new(1, 1);
        let (a, _) = s.admit(ip(1), 0, ()).unwrap();
        s.busy(a);
        assert!(s.admit(ip(1), 1, ()).is_err());
        s.release(a);
        s.release(a);
        assert!(s.is_empty());
        assert!(s.admit(ip(1), 2, ()).is_ok());
    }
}
