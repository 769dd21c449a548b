//! Rolling z-score detector (SPEC §2): one fixed-capacity window of readings
//! per `(sensor, device_id, metric)` key, a hard cap on live keys with
//! least-recently-appended eviction, idle expiry on event time, duplicates.
//!
//! Pure logic: time is the event time handed in, never the clock.
//!
//! Storage is one flat arena of `max_keys × window` cells, a reading's value
//! and time side by side (3 bytes each, coded per key by `values` and
//! `times`), allocated up front but only paged in as keys appear, plus a
//! slab of per-key headers linked into an LRU list. Memory is set by
//! `max_keys` and `window`, never by how many distinct keys pass through.
//!
//! A reading touches as few cache lines as it can: with thousands of keys
//! the state is larger than the CPU's caches, and each line that is not there
//! costs more than the reading's arithmetic. The key table holds slot numbers
//! only (4 bytes a key, small enough to stay cached) and a key's bytes live
//! inside its slot, so finding a key reads the slot it needs next anyway, then
//! one line of cells for the oldest reading and the new one.
//!
//! Here: the types and a reading's way through (duplicate check, z-score,
//! append). `keys`: the key map, slots and LRU list. `evict`: idle expiry
//! and eviction. `snapshot`: the checkpoint. `stats`: the running sums.
//! `packed`: a half of the cells coded per key, exact, whole when no code
//! fits. `times`: the reading times as 3-byte offsets. `values`: the
//! readings as 3-byte decimal digits.

mod evict;
mod keys;
mod packed;
#[cfg(test)]
mod ring_model;
mod snapshot;
pub mod stats;
mod times;
mod values;

use crate::config::DetectorConfig;
use crate::model::{Micros, SensorKind};
use keys::{KeyBytes, KeyRef};
use stats::{Baseline, ShiftedSums};
use times::Times;
use values::Values;

const NIL: u32 = u32::MAX;

/// A reading: two halves of 3 bytes, [`VALUE`] (coded by [`Values`]) and
/// [`TIME`] (coded by [`Times`]), side by side so that a reading's value and
/// time are one cache line, not two.
type Cell = [u8; 2 * packed::LANE_BYTES];
/// The detector's readings: per key `window` cells.
type Cells = [Cell];
/// The half of a cell that holds a reading's value.
const VALUE: usize = 0;
/// The half of a cell that holds a reading's time.
const TIME: usize = 1;

/// What happened to one reading.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Observation {
    /// The key already holds a reading at this event time; ignored.
    Duplicate {
        /// The value of the reading already held (equal to the new one for a
        /// plain resend, different for a conflict).
        stored: f64,
    },
    /// Appended, no alert.
    Normal,
    /// Appended, and it was an anomaly against this baseline.
    Alert {
        /// Signed z-score.
        z_score: f64,
        /// The baseline it was compared with.
        baseline: Baseline,
    },
}

/// Counters the detector keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DetectorCounters {
    /// Readings ignored as duplicates.
    pub duplicates: u64,
    /// Live keys evicted to make room (`max_keys`).
    pub evictions: u64,
    /// Keys forgotten after `idle_timeout`.
    pub expired: u64,
    /// Exact recomputations of a key's sums.
    pub recomputes: u64,
}

/// A key's header, two cache lines: what every reading uses in the first,
/// the key's bytes in the second.
#[derive(Debug)]
#[repr(C, align(64))]
struct Slot {
    head: u32,
    len: u32,
    sums: ShiftedSums,
    last_t: Micros,
    max_t: Micros,
    prev: u32,
    next: u32,
    key: KeyBytes,
}

const _: () = assert!(
    std::mem::size_of::<Slot>() == 128,
    "a slot is two cache lines"
);

/// The detector's whole state.
#[derive(Debug)]
pub struct Detector {
    /// `[detector]`, as validated (the threshold changes on reload).
    p: DetectorConfig,
    /// Slot numbers, found by the hash of their slot's key bytes.
    map: hashbrown::HashTable<u32>,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Every key's readings, `window` cells a key: [`VALUE`] and [`TIME`].
    cells: Vec<Cell>,
    values: Values,
    times: Times,
    lru_head: u32,
    lru_tail: u32,
    /// A lower bound of the smallest `last_t` of all live keys.
    min_last_t: Micros,
    now: Micros,
    /// A new key's bytes, put together.
    scratch: Vec<u8>,
    counters: DetectorCounters,
}

impl Detector {
    /// An empty detector.
    pub fn new(p: DetectorConfig) -> Detector {
        Detector {
            p,
            map: hashbrown::HashTable::with_capacity(p.max_keys),
            slots: Vec::with_capacity(p.max_keys.min(1 << 20)),
            free: Vec::new(),
            // Zeroed allocations are mapped lazily: untouched pages cost no RSS.
            cells: vec![[0; 2 * packed::LANE_BYTES]; p.max_keys * p.window],
            values: Values::new(p.window),
            times: Times::new(p.window),
            lru_head: NIL,
            lru_tail: NIL,
            min_last_t: Micros::MAX,
            now: Micros::MIN,
            scratch: Vec::with_capacity(160),
            counters: DetectorCounters::default(),
        }
    }

    /// Takes what a config reload may change (the alert threshold) from
    /// `new`; state is unaffected, and the sizes stay until a restart.
    pub fn reload(&mut self, new: &DetectorConfig) {
        self.p.threshold = new.threshold;
    }

    /// Moves "now" forward to `t` if it is later (call once per accepted event).
    pub fn advance(&mut self, t: Micros) {
        self.now = self.now.max(t);
    }

    /// The largest accepted event time so far.
    pub fn now(&self) -> Micros {
        self.now
    }

    /// Live keys.
    pub fn keys(&self) -> usize {
        self.map.len()
    }

    /// Counters.
    pub fn counters(&self) -> DetectorCounters {
        self.counters
    }

    /// Bytes of state for the live keys: their windows (6 bytes a reading
    /// slot, 5 more for each half, times or values, a key keeps whole), headers
    /// with their key bytes, the codes of their times and values, and table
    /// entries (a slot number and a control byte).
    pub fn state_bytes(&self) -> usize {
        let per_key = self.p.window * std::mem::size_of::<Cell>()
            + std::mem::size_of::<Slot>()
            + self.times.code_bytes()
            + self.values.code_bytes()
            + 4
            + 1;
        self.map.len() * per_key
            + (self.times.whole_keys() + self.values.whole_keys())
                * self.p.window
                * packed::HIGH_BYTES
            + self
                .map
                .iter()
                .map(|&id| self.slots[id as usize].key.heap_len())
                .sum::<usize>()
    }

    /// Processes one reading: duplicate check, z-score against the current
    /// window, then append (SPEC §2 steps 1–4).
    pub fn observe(
        &mut self,
        sensor: SensorKind,
        device_id: &str,
        metric: &str,
        t: Micros,
        x: f64,
    ) -> Observation {
        debug_assert!(!device_id.contains('\0'), "ids are checked (SPEC §1)");
        let key = KeyRef {
            sensor: sensor as u8,
            device: device_id.as_bytes(),
            metric: metric.as_bytes(),
        };
        let h = key.hash();
        let id = match self.find_key(key, h) {
            Some(id) => {
                if self.idle(self.slots[id as usize].last_t) {
                    self.counters.expired += 1;
                    self.clear_slot(id);
                }
                id
            }
            None => self.insert_key(key, h),
        };
        let slot = &self.slots[id as usize];
        let (head, len) = (slot.head as usize, slot.len as usize);
        if t <= slot.max_t {
            if let Some(pos) = self.times.find(&self.cells, id, head, len, t) {
                self.counters.duplicates += 1;
                return Observation::Duplicate {
                    stored: self.values.get(&self.cells, id, pos),
                };
            }
        }
        let mut result = Observation::Normal;
        if len >= self.p.min_baseline {
            let baseline = match self.slots[id as usize].sums.baseline(len) {
                Some(b) => b,
                None => {
                    self.counters.recomputes += 1;
                    let slot = &mut self.slots[id as usize];
                    slot.sums
                        .recompute(self.values.ring(&self.cells, id, head, len), len);
                    // Freshly recomputed sums are exact; trusted by construction.
                    slot.sums.baseline(len).unwrap_or(Baseline {
                        mean: slot.sums.k,
                        std: 0.0,
                        count: len,
                    })
                }
            };
            if baseline.std > 0.0 {
                let z = self.slots[id as usize].sums.z_score(x, len, baseline.std);
                if z.abs() > self.p.threshold {
                    result = Observation::Alert {
                        z_score: z,
                        baseline,
                    };
                }
            }
        }
        self.append(id, t, x);
        result
    }

    fn append(&mut self, id: u32, t: Micros, x: f64) {
        let w = self.p.window;
        let slot = &mut self.slots[id as usize];
        let (head, len) = (slot.head as usize, slot.len as usize);
        if len == w {
            slot.sums.remove(self.values.get(&self.cells, id, head));
            slot.head = ((head + 1) % w) as u32;
            let others = (1..w).map(move |k| (head + k) % w);
            self.values
                .set(&mut self.cells, id, head, x, others.clone());
            self.times.set(&mut self.cells, id, head, t, others);
        } else {
            let pos = (head + len) % w;
            slot.len += 1;
            let others = (0..len).map(move |k| (head + k) % w);
            self.values.set(&mut self.cells, id, pos, x, others.clone());
            self.times.set(&mut self.cells, id, pos, t, others);
        }
        let slot = &mut self.slots[id as usize];
        if slot.len == 1 {
            slot.sums = ShiftedSums {
                k: x,
                ..Default::default()
            };
        }
        slot.sums.add(x);
        slot.last_t = t;
        slot.max_t = slot.max_t.max(t);
        self.min_last_t = self.min_last_t.min(t);
        self.touch(id);
    }
}

#[cfg(test)]
mod tests;
