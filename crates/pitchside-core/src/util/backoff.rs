//! Reconnect delays: exponential backoff with jitter, shared by the serial
//! and MQTT sources and the MQTT alert output.
//!
//! Defaults: the first retry after about 0.5 s, doubling to at most 30 s,
//! each delay drawn uniformly from 75–125 % of the nominal value so that
//! gateways restarted together do not reconnect in lockstep.

use crate::util::rng::Rng;
use std::time::Duration;

/// First retry delay.
pub const MIN_DELAY: Duration = Duration::from_millis(500);
/// Longest retry delay.
pub const MAX_DELAY: Duration = Duration::from_secs(30);

/// An exponential backoff with ±25 % jitter.
#[derive(Debug, Clone)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    nominal: Duration,
    rng: Rng,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new(MIN_DELAY, MAX_DELAY)
    }
}

impl Backoff {
    /// A backoff from `min` doubling to `max`.
    pub fn new(min: Duration, max: Duration) -> Backoff {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ u64::from(std::process::id());
        Backoff {
            min,
            max,
            nominal: min,
            rng: Rng::new(seed),
        }
    }

    /// The delay before the next attempt; each call doubles the next one.
    pub fn next_delay(&mut self) -> Duration {
        let jitter = 0.75 + 0.5 * self.rng.uniform();
        let d = self.nominal.mul_f64(jitter);
        self.nominal = (self.nominal * 2).min(self.max);
        d
    }

    /// Starts over at `min` (after a successful connection).
    pub fn reset(&mut self) {
        self.nominal = self.min;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_cap_with_bounded_jitter() {
        let mut b = Backoff::default();
        let mut nominal = 0.5;
        for _ in 0..12 {
            let d = b.next_delay().as_secs_f64();
            assert!(
                d >= nominal * 0.75 - 1e-9 && d <= nominal * 1.25 + 1e-9,
                "{d} vs {nominal}"
            );
            nominal = (nominal * 2.0f64).min(30.0);
        }
    }

    #[test]
    fn reset_starts_over_at_the_first_delay() {
        let mut b = Backoff::default();
        for _ in 0..5 {
            b.next_delay();
        }
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(625));
    }
}
