//! The key table: the map from key bytes to slots, the free list of slots,
//! and the LRU list of live keys (most recently appended first).

use super::stats::ShiftedSums;
use super::{Detector, Slot, NIL};
use crate::model::Micros;
use crate::util::hash::fx_hash as hash;
use crate::util::inline::InlineBytes;

/// A key's bytes, inside its slot up to 62 (so that a slot is two cache
/// lines): the sensor byte, the device id, a 0 and the metric name, as
/// `band-00042-9e37` and `heart_rate` take 27. A longer key (SPEC §1 allows
/// ids and names of 64 bytes each) is kept on the heap and costs one more
/// cache miss a reading.
pub(super) type KeyBytes = InlineBytes<62>;

impl Detector {
    /// The slot of the key in `scratch`, if it is live.
    #[inline]
    pub(super) fn find_key(&self) -> Option<u32> {
        let (key, slots) = (self.scratch.as_slice(), &self.slots);
        self.map
            .find(hash(key), |&id| slots[id as usize].key.as_slice() == key)
            .copied()
    }

    /// Empties a slot's window; the key keeps the slot.
    pub(super) fn clear_slot(&mut self, id: u32) {
        let s = &mut self.slots[id as usize];
        s.head = 0;
        s.len = 0;
        s.sums = ShiftedSums::default();
        s.max_t = Micros::MIN;
        self.times.clear(id);
        self.values.clear(id);
    }

    /// Finds room for the key in `scratch` and returns its fresh, empty slot.
    pub(super) fn insert_key(&mut self) -> u32 {
        if self.map.len() >= self.p.max_keys {
            self.make_room();
        }
        let key = KeyBytes::new(&self.scratch);
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize].key = key;
                id
            }
            None => {
                self.slots.push(Slot {
                    key,
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
        let slots = &self.slots;
        self.map.insert_unique(hash(&self.scratch), id, |&i| {
            hash(slots[i as usize].key.as_slice())
        });
        self.link_front(id);
        id
    }

    /// Forgets a key and frees its slot.
    pub(super) fn remove_key(&mut self, id: u32) {
        self.unlink(id);
        let key = std::mem::replace(&mut self.slots[id as usize].key, KeyBytes::EMPTY);
        if let Ok(entry) = self.map.find_entry(hash(key.as_slice()), |&i| i == id) {
            entry.remove();
        }
        self.times.clear(id);
        self.values.clear(id);
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
