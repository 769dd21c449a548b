//! What a window keeps per group: the group key (SPEC §3 table) and, per
//! metric, a compensated mean with min and max.

use crate::model::{Event, Identity, SensorKind};
use crate::util::intern::Interner;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The group a window row belongs to (SPEC §3 table). Its strings are
/// interned: a group that comes back in the next window shares them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum GroupKey {
    /// `windows_wearable`: match and player.
    Wearable {
        /// Match.
        match_id: i64,
        /// Player.
        player_id: i64,
    },
    /// `windows_pitch`: match.
    Pitch {
        /// Match.
        match_id: i64,
    },
    /// `windows_crowd`: match and zone.
    Crowd {
        /// Match.
        match_id: i64,
        /// Zone.
        zone_id: Arc<str>,
    },
    /// `windows_generic`: device and metric.
    Generic {
        /// Device.
        device_id: Arc<str>,
        /// Metric name.
        metric: Arc<str>,
    },
}

/// A [`GroupKey`] borrowed from an event, to find its cell without
/// building the key. Hashes as the key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum GroupRef<'a> {
    Wearable { match_id: i64, player_id: i64 },
    Pitch { match_id: i64 },
    Crowd { match_id: i64, zone_id: &'a str },
    Generic { device_id: &'a str, metric: &'a str },
}

impl<'a> GroupRef<'a> {
    /// The group of an event.
    pub(super) fn of(e: &'a Event<'_>) -> GroupRef<'a> {
        match &e.identity {
            Identity::Wearable { player_id, .. } => GroupRef::Wearable {
                match_id: e.match_id,
                player_id: *player_id,
            },
            Identity::Pitch { .. } => GroupRef::Pitch {
                match_id: e.match_id,
            },
            Identity::Crowd { zone_id } => GroupRef::Crowd {
                match_id: e.match_id,
                zone_id,
            },
            Identity::Generic { metric } => GroupRef::Generic {
                device_id: &e.device_id,
                metric,
            },
        }
    }

    /// The owned key, its strings from `names`.
    pub(super) fn to_key(self, names: &mut Interner) -> GroupKey {
        match self {
            GroupRef::Wearable {
                match_id,
                player_id,
            } => GroupKey::Wearable {
                match_id,
                player_id,
            },
            GroupRef::Pitch { match_id } => GroupKey::Pitch { match_id },
            GroupRef::Crowd { match_id, zone_id } => GroupKey::Crowd {
                match_id,
                zone_id: names.get(zone_id),
            },
            GroupRef::Generic { device_id, metric } => GroupKey::Generic {
                device_id: names.get(device_id),
                metric: names.get(metric),
            },
        }
    }
}

impl GroupKey {
    /// The key borrowed.
    pub(super) fn as_ref(&self) -> GroupRef<'_> {
        match self {
            GroupKey::Wearable {
                match_id,
                player_id,
            } => GroupRef::Wearable {
                match_id: *match_id,
                player_id: *player_id,
            },
            GroupKey::Pitch { match_id } => GroupRef::Pitch {
                match_id: *match_id,
            },
            GroupKey::Crowd { match_id, zone_id } => GroupRef::Crowd {
                match_id: *match_id,
                zone_id,
            },
            GroupKey::Generic { device_id, metric } => GroupRef::Generic { device_id, metric },
        }
    }
}

impl Hash for GroupKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_ref().hash(state)
    }
}

impl hashbrown::Equivalent<GroupKey> for GroupRef<'_> {
    fn equivalent(&self, key: &GroupKey) -> bool {
        *self == key.as_ref()
    }
}

/// Mean (compensated sum), min and max of one metric in one cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agg {
    /// Values seen.
    pub count: u32,
    pub(super) sum: f64,
    pub(super) comp: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Default for Agg {
    fn default() -> Self {
        Agg {
            count: 0,
            sum: 0.0,
            comp: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Agg {
    /// Adds one value.
    pub(super) fn add(&mut self, x: f64) {
        // Neumaier summation keeps the mean exact to a few ulps.
        let t = self.sum + x;
        self.comp += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
        self.count = self.count.saturating_add(1);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// The mean, `None` when no value was seen.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| (self.sum + self.comp) / self.count as f64)
    }

    /// The minimum, `None` when no value was seen.
    pub fn min(&self) -> Option<f64> {
        (self.count > 0).then_some(self.min)
    }

    /// The maximum, `None` when no value was seen.
    pub fn max(&self) -> Option<f64> {
        (self.count > 0).then_some(self.max)
    }
}

/// One group's aggregates in one window.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// Non-late, non-duplicate events.
    pub events: u64,
    /// Last non-null player name (wearables), interned.
    pub player_name: Option<Arc<str>>,
    /// One per metric of the kind (generic: one, for `value`).
    pub aggs: Box<[Agg]>,
}

impl Cell {
    /// An empty cell with one aggregate per metric of `kind`.
    pub(super) fn new(kind: SensorKind) -> Cell {
        let n = kind.metrics().len().max(1);
        Cell {
            events: 0,
            player_name: None,
            aggs: vec![Agg::default(); n].into_boxed_slice(),
        }
    }
}
