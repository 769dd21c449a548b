//! Files set aside: a file whose upload failed while the store took other
//! files (a key the store refuses, a file it cannot take) is retried on its
//! own backoff, from [`MIN_BACKOFF`] doubling to [`MAX_BACKOFF`], so that
//! one bad file never holds up the queue behind it. Pure: time is an
//! argument. At most one entry per file waiting in the spool.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// First retry delay (of the store after an outage, and of a file set aside).
pub const MIN_BACKOFF: Duration = Duration::from_millis(500);
/// Longest retry delay.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// One file's failures in a row and when it may be tried again.
#[derive(Debug, Clone, Copy)]
struct Entry {
    failures: u32,
    due: Instant,
    reported: bool,
}

/// The files set aside, by object key.
#[derive(Debug, Default)]
pub struct SetAside {
    files: HashMap<String, Entry>,
}

impl SetAside {
    /// Whether `key` is set aside and not due yet at `now`.
    pub fn waiting(&self, key: &str, now: Instant) -> bool {
        self.files.get(key).is_some_and(|e| e.due > now)
    }

    /// Sets `key` aside after a failed upload at `now`: returns its failures
    /// in a row and the delay before it is tried again.
    pub fn fail(&mut self, key: &str, now: Instant) -> (u32, Duration) {
        let e = self.files.entry(key.to_string()).or_insert(Entry {
            failures: 0,
            due: now,
            reported: false,
        });
        e.failures += 1;
        let exp = MIN_BACKOFF.saturating_mul(1 << (e.failures - 1).min(16));
        let delay = exp.min(MAX_BACKOFF);
        e.due = now + delay;
        (e.failures, delay)
    }

    /// Its failures in a row, 0 when not set aside.
    pub fn failures(&self, key: &str) -> u32 {
        self.files.get(key).map_or(0, |e| e.failures)
    }

    /// The files set aside and not reported yet (each is reported once, when
    /// another file's upload shows the store works), with their failures;
    /// marks them reported.
    pub fn unreported(&mut self) -> Vec<(String, u32)> {
        let mut out = Vec::new();
        for (k, e) in self.files.iter_mut().filter(|(_, e)| !e.reported) {
            e.reported = true;
            out.push((k.clone(), e.failures));
        }
        out.sort();
        out
    }

    /// `key` left the queue.
    pub fn forget(&mut self, key: &str) {
        self.files.remove(key);
    }

    /// Every file is tried in order again (the store itself was failing).
    pub fn clear(&mut self) {
        self.files.clear();
    }

    /// When the first file set aside is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.files.values().map(|e| e.due).min()
    }

    /// Files set aside.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// No file set aside.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_set_aside_waits_twice_as_long_after_each_failure_up_to_a_minute() {
        let mut a = SetAside::default();
        let t0 = Instant::now();
        assert_eq!(a.fail("k", t0), (1, MIN_BACKOFF));
        assert!(a.waiting("k", t0) && !a.waiting("k", t0 + MIN_BACKOFF));
        assert_eq!(a.fail("k", t0).1, MIN_BACKOFF * 2);
        for _ in 0..20 {
            a.fail("k", t0);
        }
        assert_eq!(a.fail("k", t0).1, MAX_BACKOFF);
        assert_eq!(a.unreported(), [("k".to_string(), 23)]);
        assert!(a.unreported().is_empty(), "reported once");
        a.forget("k");
        assert!(a.is_empty() && !a.waiting("k", t0));
    }
}
