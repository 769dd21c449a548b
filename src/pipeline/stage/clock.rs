//! Whether the wall clock may judge event times: on live sources the
//! kernel is asked, at most once per [`CLOCK_POLL`], whether the clock is
//! synchronised; while it is not, `limits.max_future` is not checked.

use super::Pipeline;
use crate::model::Micros;
use crate::util::clock::ClockState;
use crate::util::time::format_rfc3339;
use tracing::{info, warn};

/// How often (of the wall clock handed in) the clock's sync state is asked.
pub(super) const CLOCK_POLL: Micros = 1_000_000;

/// Asks a [`ClockState`] at most once per [`CLOCK_POLL`] whether the clock is
/// synchronised (live sources only).
pub(super) struct ClockWatch {
    pub(super) state: Option<Box<dyn ClockState>>,
    pub(super) asked_at: Option<Micros>,
    /// The last answer.
    pub(super) synced: bool,
}

impl ClockWatch {
    /// `Some(new state)` when the answer changed (the start counts as synchronised).
    fn poll(&mut self, clock: Micros) -> Option<bool> {
        let state = self.state.as_mut()?;
        if let Some(at) = self.asked_at {
            if (0..CLOCK_POLL).contains(&clock.saturating_sub(at)) {
                return None;
            }
        }
        self.asked_at = Some(clock);
        let synced = state.synchronized();
        (synced != std::mem::replace(&mut self.synced, synced)).then_some(synced)
    }
}

impl Pipeline {
    /// Replaces where a live pipeline learns whether the clock is
    /// synchronised (the kernel by default); no effect in `replay`.
    pub fn with_clock_state(mut self, state: impl ClockState + 'static) -> Pipeline {
        if self.clock.state.is_some() {
            self.clock.state = Some(Box::new(state));
        }
        self
    }

    /// Asks whether the clock is synchronised (at most once per
    /// [`CLOCK_POLL`]); while it is not, event times are not judged against it.
    pub(super) fn watch_clock(&mut self, clock: Micros) {
        let Some(synced) = self.clock.poll(clock) else {
            return;
        };
        self.decoder.set_clock_trusted(synced);
        self.out.counters.clock_unsynchronized = !synced;
        if synced {
            info!("The system clock is synchronised: event times are checked against limits.max_future again.");
        } else {
            warn!(
                clock = %format_rfc3339(clock),
                "The kernel reports the system clock unsynchronised (no NTP answer yet, no RTC?): \
                 event times are not checked against limits.max_future until it is; \
                 counted in pitchside_clock_unsynced_events_total."
            );
        }
    }
}
