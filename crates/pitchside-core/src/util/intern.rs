//! A bounded string interner: equal strings share one `Arc<str>`, so a key
//! that comes back (a zone, a device, a player's name in every window) is
//! not allocated again. Strings no one else holds any more are dropped when
//! the set has doubled since its last sweep, so it never holds more than
//! about twice the strings in use.

use crate::util::hash::FxBuild;
use hashbrown::HashSet;
use std::sync::Arc;

/// Fewest entries before a sweep is worth it.
const MIN_SWEEP: usize = 1024;

/// Interned strings.
#[derive(Debug)]
pub struct Interner {
    set: HashSet<Arc<str>, FxBuild>,
    sweep_at: usize,
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            set: HashSet::default(),
            sweep_at: MIN_SWEEP,
        }
    }
}

impl Interner {
    /// The shared copy of `s`; allocates only the first time `s` is seen
    /// (or after everyone holding it let go).
    pub fn get(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.set.get(s) {
            return a.clone();
        }
        if self.set.len() >= self.sweep_at {
            self.set.retain(|a| Arc::strong_count(a) > 1);
            self.sweep_at = (2 * self.set.len()).max(MIN_SWEEP);
        }
        let a: Arc<str> = Arc::from(s);
        self.set.insert(a.clone());
        a
    }

    /// Strings held (in use or waiting for the next sweep).
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether no string is held.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_share_one_allocation() {
        let mut i = Interner::default();
        let a = i.get("stand-north");
        let b = i.get("stand-north");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(i.len(), 1);
    }

    #[test]
    fn strings_no_one_holds_are_swept_so_churn_stays_bounded() {
        let mut i = Interner::default();
        let kept: Vec<Arc<str>> = (0..10).map(|n| i.get(&format!("kept-{n}"))).collect();
        for n in 0..100_000 {
            drop(i.get(&format!("churn-{n}")));
            assert!(i.len() <= 2 * MIN_SWEEP + 1, "{} held", i.len());
        }
        // What is still held survives every sweep, and is still shared.
        for (n, k) in kept.iter().enumerate() {
            assert!(Arc::ptr_eq(k, &i.get(&format!("kept-{n}"))));
        }
    }
}
