//! A log budget for per-event problems: at most one line per period, and the
//! next line says how many were not logged in between. Pure: time is an argument.

use crate::model::Micros;

/// Allows one log line per `period` of (wall-clock) time.
#[derive(Debug, Clone)]
pub struct LogLimiter {
    period: Micros,
    last: Option<Micros>,
    suppressed: u64,
}

impl LogLimiter {
    /// A limiter allowing one line per `period` µs.
    pub const fn new(period: Micros) -> LogLimiter {
        LogLimiter {
            period,
            last: None,
            suppressed: 0,
        }
    }

    /// `Some(n)` when a line may be logged at `now`, `n` being how many were
    /// held back since the last one; `None` (and counted) otherwise. A clock
    /// that went back allows a line at once.
    pub fn allow(&mut self, now: Micros) -> Option<u64> {
        match self.last {
            Some(last) if (0..self.period).contains(&now.saturating_sub(last)) => {
                self.suppressed += 1;
                None
            }
            _ => {
                self.last = Some(now);
                Some(std::mem::take(&mut self.suppressed))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_period_and_the_next_one_counts_the_held_back() {
        let mut l = LogLimiter::new(10);
        assert_eq!(l.allow(100), Some(0));
        assert_eq!(l.allow(101), None);
        assert_eq!(l.allow(109), None);
        assert_eq!(l.allow(110), Some(2));
        assert_eq!(l.allow(50), Some(0), "a clock that went back allows a line");
    }
}
