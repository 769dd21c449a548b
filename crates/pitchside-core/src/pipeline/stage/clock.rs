//! Whether the wall clock may judge event times. `run` asks the kernel (at
//! most once a second, [`crate::util::clock::ClockWatch`]) and tells the
//! pipeline when the answer changes; it journals each change as a
//! [`clock_input`] record, so that a replay of the journal judges every
//! input with the clock state it met. While the clock is unsynchronised
//! an event is judged against the trusted time of
//! [`crate::pipeline::time_guard`] instead of the clock.

use super::Pipeline;
use crate::model::{Micros, RawInput};
use crate::util::time::format_rfc3339;
use std::sync::Arc;
use tracing::{info, warn};

/// The journal source of a clock-state record.
pub const CLOCK_SOURCE: &str = "gateway:clock";

/// What happened to the wall clock, as journaled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockChange {
    /// The clock is (`true`) or is not synchronised from now on.
    Synchronized(bool),
    /// The clock stepped by this much (µs; negative: back).
    Stepped(Micros),
}

/// The journal record of `change`, at wall-clock time `at`.
pub fn clock_input(change: ClockChange, at: Micros) -> RawInput {
    let payload = match change {
        ClockChange::Synchronized(true) => "synchronized".to_string(),
        ClockChange::Synchronized(false) => "unsynchronized".to_string(),
        ClockChange::Stepped(step) => format!("stepped {step}"),
    };
    RawInput {
        source: Arc::from(CLOCK_SOURCE),
        sensor_hint: None,
        payload: payload.into_bytes(),
        received_at: at,
        framing_error: None,
        ack: None,
        mapping: None,
    }
}

/// The change a record made by [`clock_input`] holds; `None` for any
/// other record.
pub fn clock_record(input: &RawInput) -> Option<ClockChange> {
    if &*input.source != CLOCK_SOURCE {
        return None;
    }
    match std::str::from_utf8(&input.payload).ok()? {
        "synchronized" => Some(ClockChange::Synchronized(true)),
        "unsynchronized" => Some(ClockChange::Synchronized(false)),
        p => Some(ClockChange::Stepped(
            p.strip_prefix("stepped ")?.parse().ok()?,
        )),
    }
}

impl Pipeline {
    /// The clock is (`true`) or is not synchronised from wall-clock time
    /// `clock` on. No effect in `replay` or when nothing changed.
    pub fn set_clock_synchronized(&mut self, synced: bool, clock: Micros) {
        if self.max_future.is_none() || synced == self.synced {
            return;
        }
        self.apply_clock_state(synced);
        if synced {
            info!("The system clock is synchronised: event times are checked against it (limits.max_future) again.");
        } else {
            self.guard.anchor(clock);
            warn!(
                clock = %format_rfc3339(clock),
                "The kernel reports the system clock unsynchronised (no NTP answer yet, no RTC?): \
                 event times are judged against the time the devices agree on instead \
                 (limits.max_future ahead of it at most; docs: semantics.md, \"Clock not synchronised\"); \
                 counted in pitchside_clock_unsynced_events_total and \
                 pitchside_clock_unvouched_events_total."
            );
        }
    }

    /// Applies a journaled or observed change of the wall clock at `clock`.
    pub fn clock_changed(&mut self, change: ClockChange, clock: Micros) {
        match change {
            ClockChange::Synchronized(synced) => self.set_clock_synchronized(synced, clock),
            ClockChange::Stepped(step) => self.clock_stepped(step),
        }
    }

    /// The wall clock stepped by `step` (µs): device health measures
    /// silence in elapsed time, so every arrival time it keeps moves with
    /// the clock, and so does the trusted time's anchor. No effect in `replay`.
    pub fn clock_stepped(&mut self, step: Micros) {
        if self.max_future.is_none() {
            return;
        }
        self.health.shift(step);
        self.guard.shift(step);
        warn!(
            step_s = step as f64 / 1e6,
            "The system clock stepped: device health and the trusted time move with it \
             (silence is measured in elapsed time)."
        );
    }

    /// Whether the pipeline takes the clock as synchronised.
    pub fn clock_synchronized(&self) -> bool {
        self.synced
    }

    /// The trusted time now: the clock when synchronised, else the time
    /// the devices agree on or the last trusted time, whichever is later.
    pub fn trusted_time(&self, clock: Micros) -> Micros {
        if self.synced {
            clock
        } else {
            self.guard.trusted(clock)
        }
    }

    pub(super) fn apply_clock_state(&mut self, synced: bool) {
        self.synced = synced;
        self.decoder.set_clock_trusted(synced);
        self.out.counters.clock_unsynchronized = !synced;
        self.out.stamp.clock_synchronized = Some(synced);
    }
}
