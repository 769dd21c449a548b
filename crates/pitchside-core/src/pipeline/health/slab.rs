//! Where the devices live: a slab of [`Device`] slots reused after an
//! eviction, one map per sensor kind from device id to slot (looked up by
//! `&str`, so a known device costs no allocation), and two lists through
//! the slots: devices heard from (least recently seen at the tail) and
//! silent devices (earliest silenced at the tail).

use super::{Device, DeviceHealth, LATEST};
use crate::model::{Micros, SensorKind};
use crate::util::hash::fx_hash as hash;
use crate::util::inline::InlineStr;

/// No slot.
pub(super) const NIL: u32 = u32::MAX;

/// A list through the slab's `prev`/`next` links.
#[derive(Debug, Clone, Copy)]
pub(super) struct List {
    /// Most recently added.
    pub(super) head: u32,
    /// Least recently added.
    pub(super) tail: u32,
}

impl List {
    pub(super) const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };
}

/// The lists a device can be on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Which {
    /// Heard from within `silent_after` (or not yet checked).
    Live,
    /// Silent.
    Silent,
}

impl DeviceHealth {
    fn list(&mut self, w: Which) -> &mut List {
        match w {
            Which::Live => &mut self.live,
            Which::Silent => &mut self.silent,
        }
    }

    /// Takes slot `id` off list `w`.
    pub(super) fn unlink(&mut self, id: u32, w: Which) {
        let (prev, next) = {
            let d = &self.slots[id as usize];
            (d.prev, d.next)
        };
        match prev {
            NIL => self.list(w).head = next,
            p => self.slots[p as usize].next = next,
        }
        match next {
            NIL => self.list(w).tail = prev,
            n => self.slots[n as usize].prev = prev,
        }
        let d = &mut self.slots[id as usize];
        d.prev = NIL;
        d.next = NIL;
    }

    /// Puts slot `id` first on list `w`.
    pub(super) fn link_front(&mut self, id: u32, w: Which) {
        let old = self.list(w).head;
        {
            let d = &mut self.slots[id as usize];
            d.prev = NIL;
            d.next = old;
        }
        match old {
            NIL => self.list(w).tail = id,
            o => self.slots[o as usize].prev = id,
        }
        self.list(w).head = id;
    }

    /// Moves slot `id` (on list `from`) to the front of list `to`.
    pub(super) fn move_front(&mut self, id: u32, from: Which, to: Which) {
        if from == to && self.list(to).head == id {
            return;
        }
        self.unlink(id, from);
        self.link_front(id, to);
    }

    /// A slot for a device never seen (or forgotten), first on the live
    /// list; when `max_devices` are tracked, the least recently seen one is
    /// forgotten first. The only allocation of the tracker: the id, once.
    pub(super) fn insert(&mut self, sensor: SensorKind, device_id: &str, at: Micros) -> u32 {
        if self.tracked() >= self.p.max_devices {
            self.evict(at);
        }
        let device = Device {
            sensor,
            device_id: InlineStr::new(device_id),
            player_id: None,
            player_name: None,
            zone_id: None,
            last_seen: at,
            silent: false,
            has: 0,
            latest: [0.0; LATEST],
            prev: NIL,
            next: NIL,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = device;
                id
            }
            None => {
                self.slots.push(device);
                (self.slots.len() - 1) as u32
            }
        };
        let slots = &self.slots;
        self.maps[sensor.index()].insert_unique(hash(device_id.as_bytes()), id, |&i| {
            hash(slots[i as usize].device_id.as_bytes())
        });
        self.link_front(id, Which::Live);
        id
    }

    /// Forgets the least recently seen device (counted, logged at a limited
    /// rate): the older of the two lists' tails, a silent one on a tie.
    fn evict(&mut self, at: Micros) {
        let seen = |id: u32| match id {
            NIL => Micros::MAX,
            id => self.slots[id as usize].last_seen,
        };
        let (live, silent) = (self.live.tail, self.silent.tail);
        let (id, w) = if silent != NIL && seen(silent) <= seen(live) {
            (silent, Which::Silent)
        } else {
            (live, Which::Live)
        };
        if id == NIL {
            return;
        }
        self.unlink(id, w);
        let d = &mut self.slots[id as usize];
        let key = std::mem::replace(&mut d.device_id, InlineStr::EMPTY);
        let (sensor, last_seen) = (d.sensor, d.last_seen);
        (d.player_name, d.zone_id) = (None, None);
        let table = &mut self.maps[sensor.index()];
        if let Ok(entry) = table.find_entry(hash(key.as_bytes()), |&i| i == id) {
            entry.remove();
        }
        self.free.push(id);
        if w == Which::Silent {
            self.silent_now -= 1;
        }
        self.counters.evictions += 1;
        if let Some(not_logged) = self.evict_log.allow(at) {
            tracing::warn!(
                max_devices = self.p.max_devices,
                sensor = %sensor,
                device = %key.as_str(),
                last_seen = %crate::util::time::format_rfc3339(last_seen),
                not_logged,
                "health.max_devices devices are tracked: the least recently seen one is \
                 forgotten (it raises no silent, and its next input no back). More devices \
                 than that at this venue? Raise health.max_devices. Counted in \
                 pitchside_device_evictions_total."
            );
        }
    }

    /// The slot of `device_id`, if it is tracked.
    #[inline]
    pub(super) fn find(&self, sensor: SensorKind, device_id: &str) -> Option<u32> {
        let slots = &self.slots;
        self.maps[sensor.index()]
            .find(hash(device_id.as_bytes()), |&id| {
                slots[id as usize].device_id.is(device_id)
            })
            .copied()
    }

    /// Devices tracked now.
    pub fn tracked(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}
