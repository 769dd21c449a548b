//! How far ahead an event may be while the wall clock is not synchronised
//! (SPEC §3, "Clock not synchronised").
//!
//! With a synchronised clock the decoder judges every event against it
//! (`limits.max_future`). Without one (a Pi with no RTC and no uplink) the
//! clock may be days behind sensors whose own clocks are right, so it
//! cannot be the judge on its own; but neither may one event, or one
//! device, move time for the others: a single year-2100 reading would push
//! the detector's "now" and its kind's watermark past every later reading.
//!
//! So, unsynchronised, an event is accepted when it is at most
//! `limits.max_future` ahead of the *trusted time*, the latest of:
//! - the wall clock;
//! - the last trusted time persisted in the checkpoint (or the clock when it
//!   was last synchronised), advanced by the wall clock's progress since;
//! - the time that at least two devices agree on: the second-latest of the
//!   latest event times of the [`VOUCHERS`] devices heard most recently
//!   (within [`VOUCH_TTL`] of wall-clock time).
//!
//! Every judged event is noted, accepted or not, so devices whose clocks
//! are right vouch for each other from their first readings; one device
//! alone never vouches for itself. The state is a fixed table, saved with
//! the checkpoint, and the whole rule depends only on the events, the clock
//! handed in and that state, so the journal replays to the same decisions.
//!
//! Pure: time is an argument.

use crate::model::Micros;
use crate::util::codec::{Dec, DecodeError, Enc};

/// Devices whose latest event times are kept to vouch for the time.
pub const VOUCHERS: usize = 16;

/// A device's word counts for this long (wall clock) after it was heard.
pub const VOUCH_TTL: Micros = 600_000_000;

/// One device's latest event time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Voucher {
    /// The hash of its sensor kind and device id.
    device: u64,
    /// Its latest event time.
    latest: Micros,
    /// The wall clock when that was heard.
    heard_at: Micros,
}

/// The trusted time of an unsynchronised gateway (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimeGuard {
    vouchers: heapless::Vec<Voucher, VOUCHERS>,
    /// A time known to have been reached...
    floor: Micros,
    /// ...at this wall-clock time (`None`: at the next event judged).
    floor_at: Option<Micros>,
    /// The latest wall clock handed in.
    last_clock: Micros,
}

impl TimeGuard {
    /// Notes the wall clock (every input, synchronised or not).
    #[inline]
    pub fn tick(&mut self, clock: Micros) {
        self.last_clock = clock;
    }

    /// The clock stops being synchronised at `clock`: until now it was the
    /// trusted time.
    pub fn anchor(&mut self, clock: Micros) {
        self.floor = self.floor_now(clock).max(clock);
        self.floor_at = Some(clock);
        self.last_clock = clock;
    }

    /// The wall clock stepped by `step`: the times it was read at move with it.
    pub fn shift(&mut self, step: Micros) {
        self.floor_at = self.floor_at.map(|t| t.saturating_add(step));
        for v in &mut self.vouchers {
            v.heard_at = v.heard_at.saturating_add(step);
        }
        self.last_clock = self.last_clock.saturating_add(step);
    }

    /// The floor advanced by the wall clock's progress since it was set.
    fn floor_now(&self, clock: Micros) -> Micros {
        match self.floor_at {
            Some(at) => self.floor.saturating_add(clock.saturating_sub(at).max(0)),
            None => self.floor,
        }
    }

    /// The second-latest event time of the devices heard within
    /// [`VOUCH_TTL`] of `clock`: what at least two of them agree on.
    fn agreed(&self, clock: Micros) -> Option<Micros> {
        let (mut first, mut second) = (None::<Micros>, None::<Micros>);
        for v in &self.vouchers {
            if clock.saturating_sub(v.heard_at).abs() > VOUCH_TTL {
                continue;
            }
            if first.is_none_or(|f| v.latest > f) {
                second = first;
                first = Some(v.latest);
            } else if second.is_none_or(|s| v.latest > s) {
                second = Some(v.latest);
            }
        }
        second
    }

    /// The trusted time at wall clock `clock`.
    pub fn trusted(&self, clock: Micros) -> Micros {
        let t = clock.max(self.floor_now(clock));
        self.agreed(clock).map_or(t, |a| t.max(a))
    }

    /// Judges an event of `device` (a hash of kind and id) at `event_time`:
    /// `Err(trusted time)` when it is more than `max_future` ahead of it.
    /// Notes the event either way.
    pub fn judge(
        &mut self,
        device: u64,
        event_time: Micros,
        clock: Micros,
        max_future: Micros,
    ) -> Result<(), Micros> {
        if self.floor_at.is_none() {
            self.floor_at = Some(clock);
        }
        self.last_clock = clock;
        let trusted = self.trusted(clock);
        self.note(device, event_time, clock);
        if event_time > trusted.saturating_add(max_future) {
            Err(trusted)
        } else {
            Ok(())
        }
    }

    /// Keeps `device`'s latest event time, in its own entry or in that of
    /// the device heard longest ago.
    fn note(&mut self, device: u64, latest: Micros, heard_at: Micros) {
        let v = Voucher {
            device,
            latest,
            heard_at,
        };
        if let Some(old) = self.vouchers.iter_mut().find(|o| o.device == device) {
            *old = v;
        } else if let Err(v) = self.vouchers.push(v) {
            // Full: the device heard longest ago gives way.
            if let Some(old) = self.vouchers.iter_mut().min_by_key(|o| o.heard_at) {
                *old = v;
            }
        }
    }

    /// Saves the state; `synced` is whether the clock is synchronised now
    /// (then the latest clock is the floor).
    pub fn save(&self, e: &mut Enc, synced: bool) {
        e.u8(u8::from(synced));
        e.i64(if synced {
            self.last_clock
        } else {
            self.floor_now(self.last_clock)
        });
        e.u64(self.vouchers.len() as u64);
        for v in &self.vouchers {
            e.u64(v.device);
            e.i64(v.latest);
            e.i64(v.heard_at);
        }
    }

    /// Restores a state saved by [`TimeGuard::save`]; returns whether the
    /// clock was synchronised then. The floor counts from the next event.
    pub fn load(&mut self, d: &mut Dec) -> Result<bool, DecodeError> {
        let synced = d.u8()? != 0;
        self.floor = d.i64()?;
        self.floor_at = None;
        self.last_clock = self.floor;
        let n = d.count(24)?;
        if n > VOUCHERS {
            return Err(DecodeError("too many time vouchers"));
        }
        self.vouchers.clear();
        for _ in 0..n {
            let v = Voucher {
                device: d.u64()?,
                latest: d.i64()?,
                heard_at: d.i64()?,
            };
            // Room checked above.
            let _ = self.vouchers.push(v);
        }
        Ok(synced)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: Micros = 1_795_980_600_000_000;
    const MIN: Micros = 60_000_000;
    const FUTURE: Micros = 5 * MIN;
    const YEAR_2100: Micros = 4_102_444_800_000_000;

    #[test]
    fn one_far_future_event_is_refused_and_moves_no_time_for_the_others() {
        let mut g = TimeGuard::default();
        g.anchor(NOW);
        assert_eq!(g.judge(1, NOW, NOW, FUTURE), Ok(()));
        assert_eq!(g.judge(2, NOW + 1, NOW, FUTURE), Ok(()));
        assert_eq!(g.judge(3, YEAR_2100, NOW, FUTURE), Err(NOW));
        assert_eq!(g.trusted(NOW), NOW + 1, "the year 2100 is not agreed");
        assert_eq!(g.judge(1, YEAR_2100, NOW, FUTURE), Err(NOW + 1));
        // Now two devices say 2100: that is agreement.
        assert_eq!(g.trusted(NOW), YEAR_2100);
    }

    #[test]
    fn devices_whose_clocks_are_days_ahead_of_a_stale_gateway_vouch_for_each_other() {
        let days = 3 * 24 * 60 * MIN;
        let mut g = TimeGuard::default();
        g.anchor(NOW);
        // Nobody vouches yet for the first two devices' first events.
        assert!(g.judge(1, NOW + days, NOW, FUTURE).is_err());
        assert!(
            g.judge(1, NOW + days + 1, NOW, FUTURE).is_err(),
            "not alone"
        );
        assert!(
            g.judge(2, NOW + days + 2, NOW, FUTURE).is_err(),
            "one voucher"
        );
        assert!(g.judge(3, NOW + days + 3, NOW, FUTURE).is_ok(), "two agree");
        for dev in 1..=20 {
            assert_eq!(g.judge(dev, NOW + days + 10, NOW + 1, FUTURE), Ok(()));
        }
        assert!(g
            .judge(5, NOW + days + 10 + FUTURE, NOW + 2, FUTURE)
            .is_ok());
        assert!(g
            .judge(5, NOW + days + 11 + FUTURE, NOW + 2, FUTURE)
            .is_err());
        assert!(g.judge(6, YEAR_2100, NOW + 3, FUTURE).is_err());
    }

    #[test]
    fn the_floor_advances_with_the_wall_clock_and_survives_a_save() {
        let mut g = TimeGuard::default();
        g.anchor(NOW);
        assert_eq!(g.trusted(NOW + MIN), NOW + MIN);
        // The wall clock steps back by a day (no RTC, fake-hwclock): the floor holds.
        let back = NOW - 24 * 60 * MIN;
        g.anchor(back);
        assert_eq!(g.trusted(back), NOW);
        assert_eq!(g.trusted(back + MIN), NOW + MIN);
        assert!(g.judge(1, NOW + MIN + FUTURE, back + MIN, FUTURE).is_ok());
        let mut e = Enc::default();
        g.save(&mut e, false);
        let mut h = TimeGuard::default();
        assert_eq!(h.load(&mut Dec::new(&e.0)), Ok(false));
        assert_eq!(
            h.trusted(back),
            NOW + MIN,
            "restored, from the next event on"
        );
        assert_eq!(h.vouchers, g.vouchers);
        let mut e = Enc::default();
        g.save(&mut e, true);
        assert_eq!(TimeGuard::default().load(&mut Dec::new(&e.0)), Ok(true));
    }

    #[test]
    fn a_voucher_heard_long_ago_no_longer_counts_and_the_table_stays_bounded() {
        let mut g = TimeGuard::default();
        g.anchor(NOW);
        g.judge(1, YEAR_2100, NOW, FUTURE).unwrap_err();
        g.judge(2, YEAR_2100, NOW, FUTURE).unwrap_err();
        assert_eq!(g.trusted(NOW + VOUCH_TTL), YEAR_2100);
        let later = NOW + VOUCH_TTL + 1;
        assert_eq!(g.trusted(later), later);
        for dev in 0..10 * VOUCHERS as u64 {
            let _ = g.judge(dev, NOW, NOW + dev as Micros, FUTURE);
        }
        assert_eq!(g.vouchers.len(), VOUCHERS);
        let mut kept: Vec<u64> = g.vouchers.iter().map(|v| v.device).collect();
        kept.sort();
        assert_eq!(
            kept,
            (9 * VOUCHERS as u64..10 * VOUCHERS as u64).collect::<Vec<_>>()
        );
    }
}
