//! One window's cells of one kind: the groups in the order they first
//! came, their aggregates side by side in one array, and a table of their
//! positions by group.
//!
//! The table holds 4-byte positions, not the cells: at 10,000 groups it
//! takes 80 KiB and stays in cache, where a map of 64-byte entries took
//! 1 MiB a window. The groups and their aggregates lie in arrival order, so
//! devices that report in turn walk them in turn, and a kind's aggregates
//! need no allocation of their own.

use super::cell::{Agg, Cell, GroupKey, GroupRef};
use crate::model::SensorKind;
use crate::util::hash::FxBuild;
use hashbrown::HashTable;
use std::hash::BuildHasher;
use std::sync::Arc;

/// A group's cell without its aggregates (which are in [`Cells::aggs`]).
#[derive(Debug)]
pub(super) struct Group {
    /// The group.
    pub(super) key: GroupKey,
    /// Non-late, non-duplicate events.
    pub(super) events: u64,
    /// Last non-null player name (wearables), interned.
    pub(super) player_name: Option<Arc<str>>,
}

/// Groups' room that [`Cells::shrink_to`] always leaves.
const MIN_ROOM: usize = 64;

/// The cells of one window of one kind.
#[derive(Debug)]
pub(super) struct Cells {
    /// Positions in `groups`, found by their group's hash.
    index: HashTable<u32>,
    /// In the order they first came.
    groups: Vec<Group>,
    /// `metrics` a group, at the group's position times `metrics`.
    aggs: Vec<Agg>,
    /// Aggregates a group has: the kind's metrics (generic: one).
    metrics: usize,
}

/// The hash a group is found by, the same for a key and its borrowed form.
#[inline(always)]
fn hash_of(group: &GroupRef<'_>) -> u64 {
    FxBuild::default().hash_one(group)
}

impl Cells {
    /// The cells of a window of `kind`, with room for `n` groups.
    pub(super) fn new(kind: SensorKind, n: usize) -> Cells {
        let metrics = kind.metrics().len().max(1);
        Cells {
            index: HashTable::with_capacity(n),
            groups: Vec::with_capacity(n),
            aggs: Vec::with_capacity(n * metrics),
            metrics,
        }
    }

    /// Groups with a cell.
    pub(super) fn len(&self) -> usize {
        self.groups.len()
    }

    /// The position of `group`, if it has a cell.
    #[inline]
    fn find(&self, hash: u64, group: &GroupRef<'_>) -> Option<usize> {
        let groups = &self.groups;
        self.index
            .find(hash, |&i| groups[i as usize].key.as_ref() == *group)
            .map(|&i| i as usize)
    }

    /// The cell at `at`: its group and its aggregates.
    #[inline]
    fn at(&mut self, at: usize) -> (&mut Group, &mut [Agg]) {
        let n = self.metrics;
        (&mut self.groups[at], &mut self.aggs[at * n..][..n])
    }

    /// Adds an empty cell for `key`, whose hash is `hash`; its position.
    fn push(&mut self, hash: u64, key: GroupKey) -> usize {
        let at = self.groups.len();
        self.groups.push(Group {
            key,
            events: 0,
            player_name: None,
        });
        self.aggs
            .resize(self.aggs.len() + self.metrics, Agg::default());
        let groups = &self.groups;
        self.index.insert_unique(hash, at as u32, |&j| {
            hash_of(&groups[j as usize].key.as_ref())
        });
        at
    }

    /// The group's cell, if it has one.
    #[inline]
    pub(super) fn get_mut(&mut self, group: &GroupRef<'_>) -> Option<(&mut Group, &mut [Agg])> {
        let at = self.find(hash_of(group), group)?;
        Some(self.at(at))
    }

    /// The group's cell, an empty one (its key made by `key`) when the
    /// group has none yet.
    pub(super) fn get_or_insert(
        &mut self,
        group: &GroupRef<'_>,
        key: impl FnOnce() -> GroupKey,
    ) -> (&mut Group, &mut [Agg]) {
        let hash = hash_of(group);
        let at = match self.find(hash, group) {
            Some(at) => at,
            None => self.push(hash, key()),
        };
        self.at(at)
    }

    /// Puts `cell` in as the cell of `key` (a checkpoint's cells), in place
    /// of the one it had: `true` when the group is new. Its aggregates are
    /// the kind's (a checkpoint's are checked when read).
    pub(super) fn insert(&mut self, key: GroupKey, cell: Cell) -> bool {
        debug_assert_eq!(cell.aggs.len(), self.metrics, "a cell of another kind");
        let group = key.as_ref();
        let hash = hash_of(&group);
        let (at, new) = match self.find(hash, &group) {
            Some(at) => (at, false),
            None => (self.push(hash, key), true),
        };
        let (g, aggs) = self.at(at);
        g.events = cell.events;
        g.player_name = cell.player_name;
        for (a, b) in aggs.iter_mut().zip(cell.aggs.iter()) {
            *a = *b;
        }
        new
    }

    /// After [`Cells::drain_sorted`]: gives back the room past `n` groups
    /// when it is more than twice that, so that a burst of groups (up to
    /// `windows.max_open_groups`) is not kept for good by the windows that
    /// reuse these arrays.
    pub(super) fn shrink_to(&mut self, n: usize) {
        if self.groups.capacity() <= 2 * n.max(MIN_ROOM) {
            return;
        }
        self.groups.shrink_to(n);
        self.aggs.shrink_to(n * self.metrics);
        let groups = &self.groups;
        self.index
            .shrink_to(n, |&j| hash_of(&groups[j as usize].key.as_ref()));
    }

    /// Every cell, in the order its group first came.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&Group, &[Agg])> {
        self.groups.iter().zip(self.aggs.chunks_exact(self.metrics))
    }

    /// Hands every cell to `out` in group order, its key moved out, and
    /// empties `self`, which keeps its capacity. `order` is scratch room
    /// for the sort.
    pub(super) fn drain_sorted(
        &mut self,
        order: &mut Vec<(GroupKey, u32)>,
        mut out: impl FnMut(GroupKey, &mut Group, &[Agg]),
    ) {
        order.clear();
        order.extend(self.groups.iter_mut().enumerate().map(|(i, g)| {
            // A placeholder: the groups are cleared below.
            let key = std::mem::replace(&mut g.key, GroupKey::Pitch { match_id: 0 });
            (key, i as u32)
        }));
        // Keys are unique within a window: the order is total.
        order.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        for (key, i) in order.drain(..) {
            let (g, aggs) = self.at(i as usize);
            out(key, g, aggs);
        }
        self.index.clear();
        self.groups.clear();
        self.aggs.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic(device: &str) -> GroupRef<'_> {
        GroupRef::Generic {
            device_id: device,
            metric: "m",
        }
    }

    fn key(device: &str) -> GroupKey {
        GroupKey::Generic {
            device_id: device.into(),
            metric: "m".into(),
        }
    }

    #[test]
    fn each_group_finds_its_own_cell_as_the_table_grows() {
        let mut cells = Cells::new(SensorKind::Generic, 0);
        let names: Vec<String> = (0..1000).map(|i| format!("d{i}")).collect();
        for (i, n) in names.iter().enumerate() {
            let (g, aggs) = cells.get_or_insert(&generic(n), || key(n));
            g.events += 1;
            aggs[0].add(i as f64);
        }
        // Every group again, last first: none is made twice.
        for (i, n) in names.iter().enumerate().rev() {
            let (g, aggs) = cells.get_or_insert(&generic(n), || unreachable!("{n} has a cell"));
            g.events += 1;
            aggs[0].add(i as f64);
        }
        assert_eq!(cells.len(), 1000);
        for (i, n) in names.iter().enumerate() {
            let (g, aggs) = cells.get_mut(&generic(n)).expect("a cell");
            assert_eq!((g.events, aggs[0].count), (2, 2));
            assert_eq!(aggs[0].mean(), Some(i as f64));
        }
        assert!(cells.get_mut(&generic("d1000")).is_none());
    }

    #[test]
    fn drained_in_group_order_and_left_empty_with_room() {
        let mut cells = Cells::new(SensorKind::Wearable, 0);
        for player in [5, 1, 9, 3] {
            let group = GroupRef::Wearable {
                match_id: 1,
                player_id: player,
            };
            let (_, aggs) = cells.get_or_insert(&group, || GroupKey::Wearable {
                match_id: 1,
                player_id: player,
            });
            assert_eq!(
                aggs.len(),
                3,
                "a wearable cell has its kind's three metrics"
            );
            aggs[1].add(player as f64);
        }
        let room = cells.groups.capacity();
        let mut seen = Vec::new();
        cells.drain_sorted(&mut Vec::new(), |key, _, aggs| {
            seen.push((key, aggs[1].max()));
        });
        let players: Vec<(i64, Option<f64>)> = seen
            .into_iter()
            .map(|(k, max)| match k {
                GroupKey::Wearable { player_id, .. } => (player_id, max),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            players,
            [
                (1, Some(1.0)),
                (3, Some(3.0)),
                (5, Some(5.0)),
                (9, Some(9.0))
            ]
        );
        assert_eq!(cells.len(), 0);
        assert_eq!(cells.groups.capacity(), room);
        let group = GroupRef::Wearable {
            match_id: 1,
            player_id: 5,
        };
        assert!(cells.get_mut(&group).is_none(), "the table is empty too");
        let (g, aggs) = cells.get_or_insert(&group, || GroupKey::Wearable {
            match_id: 1,
            player_id: 5,
        });
        assert_eq!(
            (g.events, aggs[1].count),
            (0, 0),
            "a refilled cell starts empty"
        );
    }

    #[test]
    fn a_checkpoint_cell_replaces_the_one_there() {
        let mut cells = Cells::new(SensorKind::Generic, 0);
        cells.get_or_insert(&generic("a"), || key("a")).0.events = 7;
        let mut cell = Cell::new(SensorKind::Generic);
        cell.events = 3;
        cell.aggs[0].add(2.5);
        cells.insert(key("a"), cell.clone());
        cells.insert(key("b"), cell);
        assert_eq!(cells.len(), 2);
        let (g, aggs) = cells.get_mut(&generic("a")).expect("a");
        assert_eq!((g.events, aggs[0].mean()), (3, Some(2.5)));
    }

    #[test]
    fn room_left_by_a_burst_is_given_back_and_a_steady_size_kept() {
        let mut cells = Cells::new(SensorKind::Generic, 0);
        let names: Vec<String> = (0..1000).map(|i| format!("d{i}")).collect();
        for n in &names {
            cells.get_or_insert(&generic(n), || key(n));
        }
        cells.drain_sorted(&mut Vec::new(), |_, _, _| {});
        cells.shrink_to(600);
        assert!(cells.groups.capacity() >= 1000, "less than twice: kept");
        cells.shrink_to(10);
        assert!(cells.groups.capacity() < 2 * MIN_ROOM);
        assert!(cells.aggs.capacity() < 2 * MIN_ROOM);
        for n in &names[..100] {
            cells.get_or_insert(&generic(n), || key(n)).0.events += 1;
        }
        assert_eq!(cells.len(), 100);
        assert!(names[..100].iter().all(|n| cells
            .get_mut(&generic(n))
            .is_some_and(|(g, _)| g.events == 1)));
    }
}
