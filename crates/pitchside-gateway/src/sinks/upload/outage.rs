//! How a store outage is logged: at ERROR at its first failed upload (and
//! at every permanent one), then once a minute while it lasts, so that a
//! long outage is never silent; its end at INFO, with how long it lasted.

use crate::sinks::store::StoreError;
use std::time::{Duration, Instant};

/// How often a store that goes on failing is logged again.
const LOG_EVERY: Duration = Duration::from_secs(60);

/// The uploader's outage, if uploads are failing.
#[derive(Debug, Default)]
pub struct OutageLog {
    /// Since when uploads fail, and when that was last logged.
    failing: Option<(Instant, Instant)>,
}

impl OutageLog {
    /// An upload failed: the `failures`-th in a row, `waiting` files left,
    /// the next attempt in `retry_in`.
    pub fn failed(&mut self, e: &StoreError, failures: u32, waiting: usize, retry_in: Duration) {
        let now = Instant::now();
        let (since, logged) = self.failing.get_or_insert((now, now));
        if e.is_permanent() || failures == 1 || now.duration_since(*logged) >= LOG_EVERY {
            *logged = now;
            tracing::error!(error = %e, permanent = e.is_permanent(), failures, failing_s = since.elapsed().as_secs(), waiting, retry_in_ms = retry_in.as_millis() as u64, "Upload failed; files stay in the spool and are retried.");
        }
    }

    /// An upload succeeded after `failures` failed ones in a row.
    pub fn succeeded(&mut self, failures: u32, waiting: usize) {
        if let Some((since, _)) = self.failing.take() {
            let down_s = since.elapsed().as_secs();
            tracing::info!(
                failures,
                down_s,
                waiting,
                "Uploads succeed again; the spool drains."
            );
        }
    }

    /// Whether uploads are failing now.
    pub fn failing(&self) -> bool {
        self.failing.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_starts_at_its_first_failure_and_ends_at_the_next_success() {
        let mut o = OutageLog::default();
        assert!(!o.failing());
        let e = StoreError::Config {
            url: "s3://b".into(),
            why: "no credentials".into(),
        };
        o.failed(&e, 1, 3, Duration::from_millis(500));
        let started = o.failing.map(|(since, _)| since);
        o.failed(&e, 2, 4, Duration::from_secs(1));
        assert_eq!(o.failing.map(|(since, _)| since), started, "one outage");
        assert!(o.failing());
        o.succeeded(2, 3);
        assert!(!o.failing());
        o.succeeded(0, 2);
        assert!(!o.failing(), "a success without an outage changes nothing");
    }
}
