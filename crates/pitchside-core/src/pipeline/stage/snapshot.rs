//! The stage's checkpoint: detector, windows, fatigue, downtime, the
//! clock state with its trusted time, and player load, sealed
//! by `state::checkpoint`; and downtime learnt at start-up.

use super::Pipeline;
use crate::model::Micros;
use crate::util::codec::{Dec, DecodeError, Enc};

impl Pipeline {
    /// The state to checkpoint (detector, windows, fatigue, downtime, clock) as a
    /// body for [`crate::util::codec::Dec`], with the first journal
    /// generation whose inputs it does not include.
    pub fn snapshot(&self, journal_generation: u64) -> Vec<u8> {
        let mut e = Enc::default();
        e.u64(journal_generation);
        self.detector.save(&mut e);
        self.windows.save(&mut e);
        self.out.fatigue.save(&mut e);
        self.out.downtime.save(&mut e);
        self.guard.save(&mut e, self.synced);
        self.out.load.save(&mut e);
        e.0
    }

    /// Restores a checkpoint's body into this fresh pipeline; returns the
    /// journal generation to replay from.
    pub fn restore(&mut self, body: &[u8]) -> Result<u64, DecodeError> {
        let mut d = Dec::new(body);
        let journal_generation = d.u64()?;
        self.detector.load(&mut d)?;
        self.windows.load(&mut d)?;
        self.out.fatigue.load(&mut d)?;
        // Checkpoints of older builds end here.
        if !d.finished() {
            self.out.downtime.load(&mut d)?;
        }
        if !d.finished() {
            let synced = self.guard.load(&mut d)?;
            if self.max_future.is_some() {
                self.apply_clock_state(synced);
            }
        }
        if !d.finished() {
            self.out.load.load(&mut d)?;
            self.out.counters.load = self.out.load.counters();
            self.out.counters.load_players = self.out.load.players() as u64;
        }
        if !d.finished() {
            return Err(DecodeError("trailing bytes"));
        }
        Ok(journal_generation)
    }

    /// Records that the gateway was not running from `from` to `to` (wall
    /// clock, µs): windows overlapping it get `gateway_downtime_ms`.
    pub fn add_downtime(&mut self, from: Micros, to: Micros) {
        self.out.downtime.add(from, to);
    }
}
