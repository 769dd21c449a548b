//! A map whose values live once, in one vector of slots, found through a
//! small index from key to slot.
//!
//! A hash map of large values holds up to twice as many buckets as entries,
//! each the size of a value: 1,000 player load states of ~500 bytes took a
//! 1 MiB table (2,048 buckets), and 1.5 MiB while it grew. Here a value
//! takes one slot (the vector grows by doubling up to the most values ever
//! held at once), an index bucket is a key and a `u32`, and a removed
//! value's slot is the next insert's: nothing moves, and once grown to its
//! bound the map allocates nothing.

use crate::util::hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::hash::Hash;

/// Values by key, one slot each.
#[derive(Debug, Clone)]
pub struct Slots<K, V> {
    index: FxHashMap<K, u32>,
    slots: Vec<Option<(K, V)>>,
    /// Empty slots, the most recently emptied last.
    free: Vec<u32>,
}

impl<K, V> Default for Slots<K, V> {
    fn default() -> Self {
        Slots {
            index: FxHashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<K: Copy + Eq + Hash, V> Slots<K, V> {
    /// How many values.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// No values.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Whether `key` has a value.
    pub fn contains_key(&self, key: &K) -> bool {
        self.index.contains_key(key)
    }

    /// The slot of `key`'s value, for [`Slots::at_mut`].
    pub fn find(&self, key: &K) -> Option<u32> {
        self.index.get(key).copied()
    }

    /// The value in slot `slot` (from [`Slots::find`] or [`Slots::insert`],
    /// with no removal since).
    ///
    /// # Panics
    /// If the slot is empty.
    pub fn at_mut(&mut self, slot: u32) -> &mut V {
        match &mut self.slots[slot as usize] {
            Some((_, v)) => v,
            None => panic!("slot {slot} is empty"),
        }
    }

    /// The value of `key`.
    pub fn get(&self, key: &K) -> Option<&V> {
        let &i = self.index.get(key)?;
        self.slots[i as usize].as_ref().map(|(_, v)| v)
    }

    /// The value of `key`, to change.
    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let &i = self.index.get(key)?;
        self.slots[i as usize].as_mut().map(|(_, v)| v)
    }

    /// Sets the value of `key` (replacing one it had); returns its slot.
    pub fn insert(&mut self, key: K, value: V) -> u32 {
        match self.index.entry(key) {
            Entry::Occupied(e) => {
                let i = *e.get();
                self.slots[i as usize] = Some((key, value));
                i
            }
            Entry::Vacant(e) => {
                let i = match self.free.pop() {
                    Some(i) => {
                        self.slots[i as usize] = Some((key, value));
                        i
                    }
                    None => {
                        self.slots.push(Some((key, value)));
                        u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 values")
                    }
                };
                e.insert(i);
                i
            }
        }
    }

    /// Drops the value of `key` where it lies (it is not moved out); its
    /// slot is the next insert's. Whether there was one.
    pub fn remove(&mut self, key: &K) -> bool {
        let Some(i) = self.index.remove(key) else {
            return false;
        };
        self.free.push(i);
        self.slots[i as usize] = None;
        true
    }

    /// Every key and value, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.slots.iter().flatten().map(|(k, v)| (k, v))
    }

    /// Every key and value, to change the values.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&K, &mut V)> {
        self.slots.iter_mut().flatten().map(|(k, v)| (&*k, v))
    }

    /// Every key.
    pub fn keys(&self) -> impl Iterator<Item = &K> {
        self.iter().map(|(k, _)| k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn behaves_as_a_hash_map_through_inserts_replacements_and_removals() {
        let mut slots: Slots<u32, u64> = Slots::default();
        let mut map: HashMap<u32, u64> = HashMap::new();
        let mut x = 12345u64;
        for step in 0..20_000u64 {
            // xorshift: a reproducible mix of keys, some repeated, some removed.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = (x % 97) as u32;
            if x.is_multiple_of(3) {
                assert_eq!(
                    slots.remove(&key),
                    map.remove(&key).is_some(),
                    "step {step}"
                );
            } else {
                slots.insert(key, step);
                map.insert(key, step);
            }
            assert_eq!(slots.len(), map.len());
            assert_eq!(slots.get(&key), map.get(&key));
        }
        let mut got: Vec<_> = slots.iter().map(|(k, v)| (*k, *v)).collect();
        let mut want: Vec<_> = map.into_iter().collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);
        for (_, v) in slots.iter_mut() {
            *v += 1;
        }
        assert!(want.iter().all(|(k, v)| slots.get(k) == Some(&(v + 1))));
    }

    #[test]
    fn a_removed_values_slot_is_the_next_inserts_and_the_vector_stops_growing() {
        let mut slots: Slots<u32, u32> = Slots::default();
        for k in 0..4 {
            assert_eq!(slots.insert(k, k * 10), k);
        }
        assert!(slots.remove(&1));
        assert_eq!(slots.keys().copied().collect::<Vec<_>>(), [0, 2, 3]);
        assert_eq!((slots.get(&3), slots.get(&1)), (Some(&30), None));
        assert_eq!(slots.insert(9, 90), 1); // the emptied slot
        assert_eq!(slots.find(&9), Some(1));
        *slots.at_mut(1) += 1;
        assert!(slots.remove(&2));
        assert!(!slots.remove(&2));
        assert_eq!(
            slots.iter().collect::<Vec<_>>(),
            [(&0, &0), (&9, &91), (&3, &30)]
        );
        // Churn at a bound of 3: the slots never outgrow it.
        for k in 10..1000 {
            let oldest = *slots.keys().next().unwrap();
            slots.remove(&oldest);
            slots.insert(k, 0);
            assert_eq!(slots.len(), 3);
        }
        assert!(slots.slots.len() <= 4);
    }
}
