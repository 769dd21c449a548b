//! Device health (SPEC §10): which devices have been heard from and when,
//! on the arrival clock (`received_at`, never event time). A device that
//! has sent at least once and then nothing for `health.silent_after` is
//! `silent`; its next input makes it `back`.
//!
//! Pure: time is an argument. The pipeline calls [`DeviceHealth::seen`] for
//! every accepted event (a borrowed-key lookup; a new device is the only
//! allocation) and [`DeviceHealth::check`] at most once per second of
//! arrival time, and `run` also once a second of wall-clock time, so that
//! a gateway receiving nothing at all still raises `silent`.
//!
//! Devices are kept in the order they were last heard from, so a check
//! looks at the least recently seen devices only and stops at the first
//! one still heard from in time: its cost is the number of devices that go
//! silent, not the number tracked. (Inputs handed in out of arrival order
//! by `d` delay a `silent` by at most `d`.)
//!
//! Bounded by `health.max_devices`: past it the least recently seen device
//! is forgotten, counted. Planned stops (half-time, end of match) pause the
//! checks; on resume every device's silence clock restarts.
//!
//! Here: the state, `seen`, `check`, pause and resume. `slab`: the slots,
//! maps and lists, eviction. `status`: what the console shows.

mod slab;
mod status;

use crate::config::HealthConfig;
use crate::model::{Identity, Micros, SensorKind};
use crate::pipeline::console_rows::{DeviceEventKind, DeviceEventRecord};
use crate::util::inline::InlineStr;
use crate::util::log_limit::LogLimiter;
use slab::{List, Which, NIL};
pub use status::DeviceStatus;

/// The most metrics a sensor kind has ([`SensorKind::metrics`]).
const LATEST: usize = 4;

/// How often (of arrival time) [`DeviceHealth::tick`] checks.
pub const CHECK_PERIOD: Micros = 1_000_000;

/// At most one eviction log line per this much arrival time.
const EVICT_LOG_PERIOD: Micros = 10_000_000;

/// What the tracker has counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HealthCounters {
    /// `silent` events raised.
    pub silent: u64,
    /// `back` events raised.
    pub back: u64,
    /// Devices forgotten at `max_devices`.
    pub evictions: u64,
}

/// Bytes of an id or name kept inside the device's slot; longer ones are on
/// the heap. Ids, names and zones are compared on every input, and with
/// thousands of devices a string behind a pointer is a cache miss of its own.
const INLINE: usize = 38;

/// One device as last heard from.
#[derive(Debug)]
struct Device {
    sensor: SensorKind,
    /// Empty in a free slot.
    device_id: InlineStr<INLINE>,
    player_id: Option<i64>,
    player_name: Option<InlineStr<INLINE>>,
    zone_id: Option<InlineStr<INLINE>>,
    /// Arrival time of its latest input.
    last_seen: Micros,
    silent: bool,
    /// Bit `i` set: `latest[i]` holds a value of metric `i` of its kind.
    has: u8,
    latest: [f64; LATEST],
    prev: u32,
    next: u32,
}

/// The health of every device heard from (up to `max_devices`).
#[derive(Debug)]
pub struct DeviceHealth {
    /// `[health]`, as validated.
    p: HealthConfig,
    /// Slots by the hash of their device id, one table per sensor kind.
    maps: [hashbrown::HashTable<u32>; 4],
    slots: Vec<Device>,
    free: Vec<u32>,
    live: List,
    silent: List,
    silent_now: usize,
    /// Since when the checks are paused.
    paused: Option<Micros>,
    /// The last resume: no device is silent for less than `silent_after` after it.
    resumed_at: Micros,
    /// The arrival time at which [`DeviceHealth::tick`] checks next.
    next_check: Micros,
    evict_log: LogLimiter,
    counters: HealthCounters,
}

impl DeviceHealth {
    /// An empty tracker.
    pub fn new(p: HealthConfig) -> DeviceHealth {
        DeviceHealth {
            p,
            maps: Default::default(),
            slots: Vec::new(),
            free: Vec::new(),
            live: List::EMPTY,
            silent: List::EMPTY,
            silent_now: 0,
            paused: None,
            resumed_at: Micros::MIN,
            next_check: Micros::MIN,
            evict_log: LogLimiter::new(EVICT_LOG_PERIOD),
            counters: HealthCounters::default(),
        }
    }

    /// An input of an accepted event from `device_id` arrived at
    /// `received_at`, with `identity` and metric `readings` (index, value).
    /// Returns the `back` event when the device was silent. No allocation
    /// unless the device is new, or its player name or zone changed.
    pub fn seen(
        &mut self,
        sensor: SensorKind,
        device_id: &str,
        identity: &Identity,
        received_at: Micros,
        readings: &[(u8, f64)],
    ) -> Option<DeviceEventRecord> {
        let id = match self.find(sensor, device_id) {
            Some(id) => id,
            None => self.insert(sensor, device_id, received_at),
        };
        let d = &mut self.slots[id as usize];
        let previous = d.last_seen;
        d.last_seen = previous.max(received_at);
        note_identity(d, identity);
        if sensor != SensorKind::Generic {
            for &(i, x) in readings {
                if (i as usize) < LATEST {
                    d.latest[i as usize] = x;
                    d.has |= 1 << i;
                }
            }
        }
        if !d.silent {
            self.move_front(id, Which::Live, Which::Live);
            return None;
        }
        d.silent = false;
        self.silent_now -= 1;
        self.counters.back += 1;
        self.move_front(id, Which::Silent, Which::Live);
        Some(self.event(id, DeviceEventKind::Back, previous, received_at))
    }

    /// Checks at most once per [`CHECK_PERIOD`] of arrival time: `now` is
    /// the arrival time of an input. `true` when it checked.
    pub fn tick(&mut self, now: Micros, emit: &mut impl FnMut(DeviceEventRecord)) -> bool {
        let due = now >= self.next_check;
        if due {
            self.check(now, emit);
        }
        due
    }

    /// Every device not heard from for `silent_after` before `now` (and
    /// not since the last resume) becomes silent: `emit` gets its `silent`
    /// event. Nothing while paused.
    pub fn check(&mut self, now: Micros, emit: &mut impl FnMut(DeviceEventRecord)) {
        self.next_check = now.saturating_add(CHECK_PERIOD);
        if self.paused.is_some() {
            return;
        }
        while self.live.tail != NIL {
            let id = self.live.tail;
            let d = &mut self.slots[id as usize];
            if now.saturating_sub(d.last_seen.max(self.resumed_at)) < self.p.silent_after {
                break;
            }
            d.silent = true;
            let last_seen = d.last_seen;
            self.silent_now += 1;
            self.counters.silent += 1;
            self.move_front(id, Which::Live, Which::Silent);
            emit(self.event(id, DeviceEventKind::Silent, last_seen, now));
        }
    }

    /// A planned stop (half-time, end of match) begins at `at`: no device
    /// becomes silent until [`DeviceHealth::resume`]. Inputs still count,
    /// and a silent device that sends is still `back`. `false` when
    /// already paused.
    pub fn pause(&mut self, at: Micros) -> bool {
        if self.paused.is_some() {
            return false;
        }
        self.paused = Some(at);
        true
    }

    /// The planned stop ends at `at`: every device's silence clock restarts
    /// then (a device that stopped during the pause is silent
    /// `silent_after` after `at`). Devices already silent stay silent.
    /// Returns when the pause began; `None` when not paused.
    pub fn resume(&mut self, at: Micros) -> Option<Micros> {
        let since = self.paused.take()?;
        self.resumed_at = self.resumed_at.max(at);
        Some(since)
    }

    /// The wall clock stepped by `step` (NTP setting a stale clock, an
    /// operator's `date`): every arrival time kept moves with it, so that
    /// silence is measured in elapsed time, not in the step. Unused slots
    /// move too (they are overwritten before being read).
    pub fn shift(&mut self, step: Micros) {
        let by = |t: Micros| {
            if t == Micros::MIN {
                t
            } else {
                t.saturating_add(step)
            }
        };
        for d in &mut self.slots {
            d.last_seen = by(d.last_seen);
        }
        self.paused = self.paused.map(by);
        self.resumed_at = by(self.resumed_at);
        self.next_check = by(self.next_check);
    }

    /// Since when the checks are paused; `None` when they are not.
    pub fn paused_since(&self) -> Option<Micros> {
        self.paused
    }

    /// Devices silent now.
    pub fn silent_now(&self) -> usize {
        self.silent_now
    }

    /// What it has counted.
    pub fn counters(&self) -> HealthCounters {
        self.counters
    }

    /// Its settings.
    pub fn config(&self) -> HealthConfig {
        self.p
    }

    /// The event of device `id`.
    fn event(
        &self,
        id: u32,
        event: DeviceEventKind,
        last_seen: Micros,
        at: Micros,
    ) -> DeviceEventRecord {
        let d = &self.slots[id as usize];
        DeviceEventRecord {
            sensor: d.sensor,
            device_id: d.device_id.as_str().to_string(),
            player_id: d.player_id,
            zone_id: d.zone_id.as_ref().map(|z| z.as_str().to_string()),
            event,
            last_seen,
            at,
        }
    }
}

/// Keeps the latest player or zone of a device; allocates only when it changed.
fn note_identity(d: &mut Device, identity: &Identity) {
    match identity {
        Identity::Wearable {
            player_id,
            player_name,
        } => {
            d.player_id = Some(*player_id);
            // A frame without a name keeps the name last seen.
            if let Some(name) = player_name.as_deref() {
                replace(&mut d.player_name, name);
            }
        }
        Identity::Crowd { zone_id } => replace(&mut d.zone_id, zone_id),
        Identity::Pitch { .. } | Identity::Generic { .. } => {}
    }
}

fn replace(slot: &mut Option<InlineStr<INLINE>>, value: &str) {
    if !slot.as_ref().is_some_and(|s| s.is(value)) {
        *slot = Some(InlineStr::new(value));
    }
}

#[cfg(test)]
mod tests;
