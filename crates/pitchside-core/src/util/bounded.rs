//! One bounded FIFO for every hold queue (serial lines and MQTT messages
//! waiting for the pipeline, alerts waiting for the broker): a capacity and a
//! rule for the item that does not fit. The caller counts and logs what
//! [`Bounded::push`] hands back, so no drop goes unnoticed.

use std::collections::VecDeque;
use std::fmt;

/// What a full queue does with one more item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WhenFull {
    /// Drop the oldest item to make room (fresh alerts matter most).
    #[default]
    DropOldest,
    /// Refuse the new item (keep what arrived first, in order).
    DropNewest,
}

impl WhenFull {
    /// The config spelling: `"drop-oldest"` or `"drop-newest"`.
    pub fn as_str(self) -> &'static str {
        match self {
            WhenFull::DropOldest => "drop-oldest",
            WhenFull::DropNewest => "drop-newest",
        }
    }

    /// Parses the config spelling; the error names both choices.
    pub fn parse(s: &str) -> Result<WhenFull, String> {
        match s {
            "drop-oldest" => Ok(WhenFull::DropOldest),
            "drop-newest" => Ok(WhenFull::DropNewest),
            _ => Err(format!("{s:?} must be \"drop-oldest\" or \"drop-newest\"")),
        }
    }
}

impl fmt::Display for WhenFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A FIFO of at most `capacity` items (at least 1).
#[derive(Debug, Clone)]
pub struct Bounded<T> {
    items: VecDeque<T>,
    capacity: usize,
    when_full: WhenFull,
}

impl<T> Bounded<T> {
    /// An empty queue. Memory grows with use, up to `capacity` items.
    pub fn new(capacity: usize, when_full: WhenFull) -> Bounded<T> {
        Bounded {
            items: VecDeque::new(),
            capacity: capacity.max(1),
            when_full,
        }
    }

    /// Appends `item`; when full, returns the item dropped instead (the
    /// oldest or `item` itself, by [`WhenFull`]).
    #[must_use = "a dropped item must be counted (and an MQTT message acknowledged)"]
    pub fn push(&mut self, item: T) -> Option<T> {
        if self.items.len() < self.capacity {
            self.items.push_back(item);
            return None;
        }
        match self.when_full {
            WhenFull::DropNewest => Some(item),
            WhenFull::DropOldest => {
                let oldest = self.items.pop_front();
                self.items.push_back(item);
                oldest
            }
        }
    }

    /// Puts an item back at the front (one taken out that could not be
    /// handed on); it may push the newest one out, which is returned.
    #[must_use = "a dropped item must be counted"]
    pub fn push_front(&mut self, item: T) -> Option<T> {
        self.items.push_front(item);
        (self.items.len() > self.capacity)
            .then(|| self.items.pop_back())
            .flatten()
    }

    /// Takes the oldest item.
    pub fn pop(&mut self) -> Option<T> {
        self.items.pop_front()
    }

    /// The oldest item.
    pub fn front(&self) -> Option<&T> {
        self.items.front()
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Most items it holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// What it does when full.
    pub fn when_full(&self) -> WhenFull {
        self.when_full
    }

    /// Items oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }

    /// Takes every item, oldest first.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.items.drain(..)
    }

    /// New limits (a reload); returns the items that no longer fit, chosen
    /// by the new rule.
    #[must_use = "dropped items must be counted"]
    pub fn set_limits(&mut self, capacity: usize, when_full: WhenFull) -> Vec<T> {
        self.capacity = capacity.max(1);
        self.when_full = when_full;
        let over = self.items.len().saturating_sub(self.capacity);
        match when_full {
            WhenFull::DropOldest => self.items.drain(..over).collect(),
            WhenFull::DropNewest => {
                let keep = self.capacity;
                self.items.drain(keep..).collect()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drop_oldest_keeps_the_newest_items_and_hands_back_the_oldest() {
        let mut q = Bounded::new(3, WhenFull::DropOldest);
        let dropped: Vec<_> = (0..5).filter_map(|i| q.push(i)).collect();
        assert_eq!(dropped, [0, 1]);
        assert_eq!(q.drain().collect::<Vec<_>>(), [2, 3, 4]);
    }

    #[test]
    fn drop_newest_keeps_the_first_items_and_hands_back_the_new_one() {
        let mut q = Bounded::new(3, WhenFull::DropNewest);
        let dropped: Vec<_> = (0..5).filter_map(|i| q.push(i)).collect();
        assert_eq!(dropped, [3, 4]);
        assert_eq!(q.pop(), Some(0));
        assert_eq!(q.push(9), None);
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), [1, 2, 9]);
    }

    #[test]
    fn push_front_returns_an_item_to_the_head_within_capacity() {
        let mut q = Bounded::new(2, WhenFull::DropOldest);
        assert_eq!(q.push(1), None);
        assert_eq!(q.push(2), None);
        let head = q.pop().unwrap();
        assert_eq!(q.push(3), None);
        assert_eq!(q.push_front(head), Some(3));
        assert_eq!(q.drain().collect::<Vec<_>>(), [1, 2]);
    }

    #[test]
    fn shrinking_drops_by_the_new_rule_and_zero_means_one() {
        let mut q = Bounded::new(5, WhenFull::DropNewest);
        for i in 0..5 {
            assert!(q.push(i).is_none());
        }
        assert_eq!(q.set_limits(3, WhenFull::DropOldest), [0, 1]);
        assert_eq!(q.set_limits(2, WhenFull::DropNewest), [4]);
        assert_eq!(q.iter().copied().collect::<Vec<_>>(), [2, 3]);
        let mut one = Bounded::new(0, WhenFull::DropNewest);
        assert_eq!(
            (one.capacity(), one.push('a'), one.push('b')),
            (1, None, Some('b'))
        );
    }

    #[test]
    fn the_rule_parses_from_and_prints_as_its_config_spelling() {
        for w in [WhenFull::DropOldest, WhenFull::DropNewest] {
            assert_eq!(WhenFull::parse(w.as_str()), Ok(w));
            assert_eq!(w.to_string(), w.as_str());
        }
        assert!(WhenFull::parse("block")
            .unwrap_err()
            .contains("drop-oldest"));
    }
}
