//! The key table: the map from key bytes to slots, the free list of slots,
//! and the LRU list of live keys (most recently appended first).

use super::stats::ShiftedSums;
use super::{Detector, Slot, NIL};
use crate::model::Micros;

impl Detector {
    /// Empties a slot's window; the key keeps the slot.
    pub(super) fn clear_slot(&mut self, id: u32) {
        let s = &mut self.slots[id as usize];
        s.head = 0;
        s.len = 0;
        s.sums = ShiftedSums::default();
        s.max_t = Micros::MIN;
        self.times.clear(id);
    }

    /// Finds room for the key in `scratch` and returns its fresh, empty slot.
    pub(super) fn insert_key(&mut self) -> u32 {
        if self.map.len() >= self.p.max_keys {
            self.make_room();
        }
        let key: Box<[u8]> = self.scratch.as_slice().into();
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize].key = key.clone();
                id
            }
            None => {
                self.slots.push(Slot {
                    key: key.clone(),
                    head: 0,
                    len: 0,
                    sums: ShiftedSums::default(),
                    last_t: Micros::MIN,
                    max_t: Micros::MIN,
                    prev: NIL,
                    next: NIL,
                });
                (self.slots.len() - 1) as u32
            }
        };
        self.clear_slot(id);
        self.map.insert(key, id);
        self.link_front(id);
        id
    }

    /// Forgets a key and frees its slot.
    pub(super) fn remove_key(&mut self, id: u32) {
        self.unlink(id);
        let key = std::mem::take(&mut self.slots[id as usize].key);
        self.map.remove(&key);
        self.times.clear(id);
        self.free.push(id);
    }

    /// Takes a slot out of the LRU list.
    fn unlink(&mut self, id: u32) {
        let (prev, next) = {
            let s = &self.slots[id as usize];
            (s.prev, s.next)
        };
        if prev != NIL {
            self.slots[prev as usize].next = next;
        } else {
            self.lru_head = next;
        }
        if next != NIL {
            self.slots[next as usize].prev = prev;
        } else {
            self.lru_tail = prev;
        }
        let s = &mut self.slots[id as usize];
        s.prev = NIL;
        s.next = NIL;
    }

    /// Puts a slot first (most recently appended) in the LRU list.
    fn link_front(&mut self, id: u32) {
        let old = self.lru_head;
        {
            let s = &mut self.slots[id as usize];
            s.prev = NIL;
            s.next = old;
        }
        if old != NIL {
            self.slots[old as usize].prev = id;
        } else {
            self.lru_tail = id;
        }
        self.lru_head = id;
    }

    /// Marks a slot most recently appended.
    pub(super) fn touch(&mut self, id: u32) {
        if self.lru_head != id {
            self.unlink(id);
            self.link_front(id);
        }
    }
}
