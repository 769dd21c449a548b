//! Strings that repeat row after row, kept once for the process's life so
//! that handing them to the Parquet writer costs no reference count.
//!
//! The parquet crate takes strings as `ByteArray`, which owns a `Bytes`. A
//! slice of a shared buffer takes an atomic increment when it is made and an
//! atomic decrement when it is dropped; on a raw-on replay those two were
//! 7.7 % of the time (`perf`: `promotable_even_clone`, `shared_drop`). A
//! `Bytes` of static bytes has no count: it is a pointer and a length.
//!
//! The venue and gateway ids, the sensor kinds, the metric names, the
//! reject sources and reasons are few and come back in every row, so
//! [`Kept`] leaks each of them once into a process-wide set. The set is
//! bounded by [`MAX_KEPT_BYTES`] and [`MAX_VALUE_LEN`]: once it is full, or
//! for a longer value, [`Repeated::get`] says no and the caller slices the
//! column's buffer as before. Nothing is lost either way; only the cost
//! differs.

use crate::util::hash::FxBuild;
use crate::util::inline::short_eq;
use hashbrown::HashSet;
use std::sync::Mutex;

/// Bytes the process keeps at most, over its whole life.
pub const MAX_KEPT_BYTES: usize = 64 * 1024;

/// Longest value kept: longer ones are ids, not names.
pub const MAX_VALUE_LEN: usize = 64;

/// A process-wide bounded set of leaked byte strings.
#[derive(Debug)]
pub struct Kept {
    set: HashSet<&'static [u8], FxBuild>,
    bytes: usize,
    max_bytes: usize,
    /// The set has refused a value for want of room (logged once).
    full: bool,
}

impl Kept {
    /// An empty set that keeps at most `max_bytes` bytes.
    pub const fn new(max_bytes: usize) -> Kept {
        Kept {
            set: HashSet::with_hasher(FxBuild::new()),
            bytes: 0,
            max_bytes,
            full: false,
        }
    }

    /// The kept copy of `v`, made now if there is room; `None` if `v` is
    /// longer than [`MAX_VALUE_LEN`] or the set is full.
    pub fn keep(&mut self, v: &[u8]) -> Option<&'static [u8]> {
        if let Some(&s) = self.set.get(v) {
            return Some(s);
        }
        if v.len() > MAX_VALUE_LEN {
            return None;
        }
        if self.bytes + v.len() > self.max_bytes {
            if !self.full {
                self.full = true;
                tracing::info!(
                    kept_bytes = self.bytes,
                    "the set of repeated Parquet strings is full: new ones are \
                     written as reference-counted slices (a little slower, nothing lost)"
                );
            }
            return None;
        }
        let s: &'static [u8] = Box::leak(v.to_vec().into_boxed_slice());
        self.bytes += s.len();
        self.set.insert(s);
        Some(s)
    }

    /// Bytes kept so far.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.bytes
    }
}

/// The process's set.
static KEPT: Mutex<Kept> = Mutex::new(Kept::new(MAX_KEPT_BYTES));

/// Entries of [`Repeated`]'s cache of recent values.
const RECENT: usize = 8;

/// One column writer's view of the kept strings: a small cache of the values
/// it handed out last and the ones it has already looked up, so that a row
/// touches neither the process-wide lock nor a reference count, and most
/// rows not even a hash table.
#[derive(Debug, Default)]
pub struct Repeated {
    /// Recent values, by length and last byte.
    recent: [Option<&'static [u8]>; RECENT],
    seen: HashSet<&'static [u8], FxBuild>,
    /// The process-wide set refused a value: stop asking it.
    refused: bool,
}

impl Repeated {
    /// The kept copy of `v`, or `None` (the caller slices its own buffer).
    #[inline]
    pub fn get(&mut self, v: &[u8]) -> Option<&'static [u8]> {
        let slot = (v.len() ^ *v.last()? as usize) % RECENT;
        let s = match self.recent[slot] {
            Some(s) if short_eq(s, v) => s,
            _ => {
                let s = self.find(v)?;
                self.recent[slot] = Some(s);
                s
            }
        };
        Some(s)
    }

    /// `v` among the values looked up before, or asked of the process's set.
    fn find(&mut self, v: &[u8]) -> Option<&'static [u8]> {
        if let Some(&s) = self.seen.get(v) {
            return Some(s);
        }
        if self.refused {
            return None;
        }
        let kept = KEPT.lock().unwrap_or_else(|p| p.into_inner()).keep(v);
        match kept {
            Some(s) => {
                self.seen.insert(s);
            }
            None => self.refused = v.len() <= MAX_VALUE_LEN,
        }
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_kept_once_and_found_again() {
        let mut k = Kept::new(100);
        let a = k.keep(b"heart_rate").expect("room");
        let b = k.keep(b"heart_rate").expect("found");
        assert!(std::ptr::eq(a, b));
        assert_eq!(a, b"heart_rate");
        assert_eq!(k.bytes(), 10);
    }

    #[test]
    fn the_set_refuses_long_values_and_stops_at_its_bound() {
        let mut k = Kept::new(30);
        assert_eq!(k.keep(&[b'x'; MAX_VALUE_LEN + 1]), None);
        assert!(k.keep(b"0123456789").is_some());
        assert!(k.keep(b"abcdefghij").is_some());
        assert_eq!(k.keep(b"ABCDEFGHIJK"), None, "21 + 11 > 30");
        assert!(
            k.keep(b"0123456789").is_some(),
            "a kept value is still found"
        );
        assert!(k.keep(b"KLMNOPQRST").is_some(), "exactly 30");
        assert_eq!(k.bytes(), 30);
    }

    #[test]
    fn repeated_values_are_static_bytes_with_the_same_content() {
        let mut r = Repeated::default();
        for v in [
            &b"wearable"[..],
            b"pitch",
            b"wearable",
            b"wearable",
            b"pitch",
        ] {
            let a = r.get(v).expect("room in the process's set");
            assert_eq!(a, v);
        }
        let a = r.get(b"wearable").expect("kept");
        let b = r.get(b"wearable").expect("kept");
        assert!(std::ptr::eq(a, b), "one copy, not one a row");
        assert!(r.get(b"").is_none(), "an empty value is left to the caller");
        let long = vec![b'd'; MAX_VALUE_LEN + 1];
        assert!(r.get(&long).is_none(), "left to the caller");
        assert!(
            r.get(b"pitch").is_some(),
            "a long value does not close the set"
        );
    }
}
