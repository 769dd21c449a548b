//! Making room: idle keys expire on event time (`idle_timeout`); when the
//! table is full and none is idle, the least recently appended key is
//! evicted.

use super::{Detector, NIL};
use crate::model::Micros;

impl Detector {
    /// Whether a key last appended at `last_t` has been silent for `idle_timeout`.
    pub(super) fn idle(&self, last_t: Micros) -> bool {
        last_t < self.now.saturating_sub(self.p.idle_timeout)
    }

    /// Frees one slot: an idle key if there is one (not an eviction), else the
    /// least recently appended key (an eviction).
    pub(super) fn make_room(&mut self) {
        let tail = self.lru_tail;
        if tail != NIL && self.idle(self.slots[tail as usize].last_t) {
            self.counters.expired += 1;
            self.remove_key(tail);
            return;
        }
        if self.idle(self.min_last_t) && self.expire_idle() > 0 {
            return;
        }
        self.counters.evictions += 1;
        self.remove_key(tail);
    }

    /// Removes every idle key now; returns how many. Called when full, and
    /// periodically so that `keys()` reports live keys only.
    pub fn expire_idle(&mut self) -> usize {
        let mut removed = 0;
        let mut min = Micros::MAX;
        let mut id = self.lru_head;
        while id != NIL {
            let next = self.slots[id as usize].next;
            let last_t = self.slots[id as usize].last_t;
            if self.idle(last_t) {
                self.remove_key(id);
                removed += 1;
            } else {
                min = min.min(last_t);
            }
            id = next;
        }
        self.counters.expired += removed as u64;
        self.min_last_t = min;
        removed
    }
}
