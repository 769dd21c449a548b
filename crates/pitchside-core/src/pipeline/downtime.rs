//! The gateway's own downtime, so that a window it was not running for part
//! of says so (`gateway_downtime_ms` in every `windows_*` table) instead of
//! looking complete with fewer events.
//!
//! A gap is a wall-clock interval `[from, to)` in which no pitchside process
//! was taking input for this spool: from the last durable write of the
//! previous run (the newest modification time of the checkpoint and the
//! journal files: the last journal fsync or checkpoint; inputs after it were
//! lost with the process anyway) to this run's start. With no earlier state
//! (a fresh spool) the gap is everything before the start: a window that
//! began before the gateway started is partial.
//!
//! The rule: a window's `gateway_downtime_ms` is the part of its event-time
//! bounds `[window_start, window_end)` covered by gaps, read as wall-clock
//! times, in ms rounded up (so any overlap is at least 1). That is honest
//! when sensor clocks are close to the gateway's (the assumption
//! `limits.max_future` already makes), which is the case for live serial and
//! MQTT sensors. It is a statement about the gateway, not about the data:
//! events buffered by a sensor or kept by the broker (persistent MQTT
//! session, QoS 1) during the gap arrive afterwards and are counted, so a
//! marked window may still be complete; events replayed from long ago are
//! compared with the gaps of that time. `replay` has no downtime: always 0.
//! Gaps are kept in the checkpoint (at most [`MAX_GAPS`], newest), so a
//! window open across two restarts adds both.

use crate::model::Micros;
use crate::util::codec::{Dec, DecodeError, Enc};

/// Gaps remembered (older ones are forgotten first).
pub const MAX_GAPS: usize = 64;

/// Wall-clock intervals in which the gateway was not running.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Downtime {
    gaps: Vec<(Micros, Micros)>,
}

impl Downtime {
    /// Adds the gap `[from, to)`; an empty or inverted one is ignored.
    pub fn add(&mut self, from: Micros, to: Micros) {
        if from >= to {
            return;
        }
        self.gaps.push((from, to));
        if self.gaps.len() > MAX_GAPS {
            self.gaps.remove(0);
        }
    }

    /// The gaps, oldest first.
    pub fn gaps(&self) -> &[(Micros, Micros)] {
        &self.gaps
    }

    /// Milliseconds of `[start, end)` covered by gaps (overlapping gaps
    /// counted once), rounded up; 0 when none touches it.
    pub fn overlap_ms(&self, start: Micros, end: Micros) -> i64 {
        let mut parts: Vec<(Micros, Micros)> = self
            .gaps
            .iter()
            .map(|&(f, t)| (f.max(start), t.min(end)))
            .filter(|(f, t)| f < t)
            .collect();
        if parts.is_empty() {
            return 0;
        }
        parts.sort_unstable();
        let (mut total, mut cur) = (0i64, parts[0]);
        for &(f, t) in &parts[1..] {
            if f <= cur.1 {
                cur.1 = cur.1.max(t);
            } else {
                total += cur.1 - cur.0;
                cur = (f, t);
            }
        }
        total += cur.1 - cur.0;
        (total + 999) / 1000
    }

    /// Writes the gaps (checkpoints).
    pub fn save(&self, e: &mut Enc) {
        e.u64(self.gaps.len() as u64);
        for &(f, t) in &self.gaps {
            e.i64(f);
            e.i64(t);
        }
    }

    /// Reads what [`Downtime::save`] wrote.
    pub fn load(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        let n = d.count(16)?;
        self.gaps.clear();
        for _ in 0..n {
            let (f, t) = (d.i64()?, d.i64()?);
            self.add(f, t);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_the_part_of_the_window_inside_gaps_rounded_up() {
        let mut d = Downtime::default();
        assert_eq!(d.overlap_ms(0, 60_000_000), 0);
        d.add(10_000_000, 12_500_000);
        assert_eq!(d.overlap_ms(0, 60_000_000), 2500);
        assert_eq!(d.overlap_ms(11_000_000, 20_000_000), 1500);
        assert_eq!(d.overlap_ms(12_500_000, 20_000_000), 0, "end is open");
        assert_eq!(d.overlap_ms(0, 10_000_000), 0);
        d.add(12_000_000, 13_000_000);
        assert_eq!(d.overlap_ms(0, 60_000_000), 3000, "overlaps count once");
        d.add(12_999_999, 13_000_000);
        assert_eq!(d.overlap_ms(12_999_999, 13_000_000), 1, "any overlap shows");
        d.add(5, 5);
        d.add(9, 1);
        assert_eq!(d.gaps().len(), 3, "empty and inverted gaps are ignored");
    }

    #[test]
    fn a_fresh_start_marks_every_window_that_began_before_it() {
        let mut d = Downtime::default();
        d.add(Micros::MIN, 1_000_030_000_000);
        assert_eq!(d.overlap_ms(1_000_000_000_000, 1_000_060_000_000), 30_000);
        assert_eq!(d.overlap_ms(1_000_060_000_000, 1_000_120_000_000), 0);
    }

    #[test]
    fn gaps_round_trip_and_only_the_newest_are_kept() {
        let mut d = Downtime::default();
        for i in 0..(MAX_GAPS as i64 + 5) {
            d.add(i * 10, i * 10 + 5);
        }
        assert_eq!(d.gaps().len(), MAX_GAPS);
        assert_eq!(d.gaps()[0], (50, 55));
        let mut e = Enc::default();
        d.save(&mut e);
        let mut back = Downtime::default();
        let mut dec = Dec::new(&e.0);
        back.load(&mut dec).unwrap();
        assert!(dec.finished());
        assert_eq!(back, d);
    }
}
