//! The key table: the map from key bytes to slots, the free list of slots,
//! and the LRU list of live keys (most recently appended first).

use super::stats::ShiftedSums;
use super::{Detector, Slot, NIL};
use crate::model::Micros;
use crate::util::hash::FxHasher;
use crate::util::inline::{short_eq, InlineBytes};
use std::hash::Hasher;

/// A key's bytes, inside its slot up to 62 (so that a slot is two cache
/// lines): the sensor byte, the device id, a 0 and the metric name, as
/// `band-00042-9e37` and `heart_rate` take 27. A longer key (SPEC §1 allows
/// ids and names of 64 bytes each) is kept on the heap and costs one more
/// cache miss a reading.
pub(super) type KeyBytes = InlineBytes<62>;

/// A key as a reading names it, in three parts: hashed, and compared with a
/// slot's [`KeyBytes`], where the parts lie. Copying them together first
/// made the CPU wait for the copy's stores when it read them back.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeyRef<'a> {
    pub(super) sensor: u8,
    pub(super) device: &'a [u8],
    pub(super) metric: &'a [u8],
}

impl<'a> KeyRef<'a> {
    /// The parts of a key's bytes, if they are a key's: a sensor byte, then
    /// a device id and a metric name split by the first 0 after it (an id
    /// has no 0 byte, SPEC §1).
    pub(super) fn of(bytes: &'a [u8]) -> Option<KeyRef<'a>> {
        let (&sensor, rest) = bytes.split_first()?;
        let sep = memchr::memchr(0, rest)?;
        Some(KeyRef {
            sensor,
            device: &rest[..sep],
            metric: &rest[sep + 1..],
        })
    }

    /// The hash the key table finds the key by.
    #[inline(always)]
    pub(super) fn hash(&self) -> u64 {
        let mut h = FxHasher::default();
        h.write_u8(self.sensor);
        h.write(self.device);
        h.write(self.metric);
        h.finish()
    }

    /// Whether `key` holds this key's bytes.
    #[inline(always)]
    pub(super) fn is(&self, key: &[u8]) -> bool {
        let d = self.device.len();
        key.len() == d + 2 + self.metric.len()
            && key[0] == self.sensor
            && short_eq(&key[1..=d], self.device)
            && key[d + 1] == 0
            && short_eq(&key[d + 2..], self.metric)
    }

    /// The key's bytes, into `buf`.
    fn write_to(&self, buf: &mut Vec<u8>) {
        buf.clear();
        buf.push(self.sensor);
        buf.extend_from_slice(self.device);
        buf.push(0);
        buf.extend_from_slice(self.metric);
    }
}

/// The hash of the key a slot holds (every live slot holds a key's bytes).
fn hash_of_slot(key: &KeyBytes) -> u64 {
    KeyRef::of(key.as_slice()).map_or(0, |k| k.hash())
}

impl Detector {
    /// The slot of `key` (whose hash is `h`), if it is live.
    #[inline(always)]
    pub(super) fn find_key(&self, key: KeyRef<'_>, h: u64) -> Option<u32> {
        let slots = &self.slots;
        self.map
            .find(h, |&id| key.is(slots[id as usize].key.as_slice()))
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

    /// Finds room for `key` (whose hash is `h`) and returns its fresh,
    /// empty slot.
    pub(super) fn insert_key(&mut self, key: KeyRef<'_>, h: u64) -> u32 {
        if self.map.len() >= self.p.max_keys {
            self.make_room();
        }
        key.write_to(&mut self.scratch);
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
        self.map
            .insert_unique(h, id, |&i| hash_of_slot(&slots[i as usize].key));
        self.link_front(id);
        id
    }

    /// Forgets a key and frees its slot.
    pub(super) fn remove_key(&mut self, id: u32) {
        self.unlink(id);
        let key = std::mem::replace(&mut self.slots[id as usize].key, KeyBytes::EMPTY);
        if let Ok(entry) = self.map.find_entry(hash_of_slot(&key), |&i| i == id) {
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
