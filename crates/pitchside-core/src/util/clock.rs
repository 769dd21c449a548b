//! Whether the wall clock may judge event times. A Pi without a real-time
//! clock boots with a stale clock until NTP answers; judged against it,
//! correct sensor times look "in the future" (`limits.max_future`, SPEC §3).
//! The kernel knows: `adjtimex` reports `TIME_ERROR` (`STA_UNSYNC`) until a
//! time daemon has set the clock. [`ClockState`] is the question, injectable
//! so that tests can say "unsynchronised"; [`KernelClock`] asks the kernel.

use crate::model::Micros;

/// Answers "is the wall clock synchronised now?".
pub trait ClockState: Send {
    /// `false` while the clock is known not to be synchronised.
    fn synchronized(&mut self) -> bool;
}

/// Any `FnMut() -> bool` is a clock state (tests inject one).
impl<F: FnMut() -> bool + Send> ClockState for F {
    fn synchronized(&mut self) -> bool {
        self()
    }
}

/// The kernel's view (`adjtimex`, read-only). Where it cannot be asked (not
/// Linux, or the call is refused, as systemd's `ProtectClock=yes` does), the
/// clock counts as synchronised, so the `max_future` check works as SPEC §3
/// says; that is logged once.
#[derive(Debug, Default, Clone, Copy)]
pub struct KernelClock {
    warned: bool,
}

impl ClockState for KernelClock {
    fn synchronized(&mut self) -> bool {
        match kernel_clock_synchronized() {
            Ok(synced) => synced,
            Err(e) => {
                if !std::mem::replace(&mut self.warned, true) {
                    tracing::warn!(
                        error = %e,
                        "Cannot ask the kernel whether the clock is synchronised (adjtimex; \
                         is the service run with ProtectClock=yes?): event times are judged \
                         against the clock as it is (limits.max_future)."
                    );
                }
                true
            }
        }
    }
}

/// `Ok(false)` while the kernel reports the clock unsynchronised.
///
/// One of two `unsafe` calls in the crate (the other is `sinks::heap`'s
/// `mallopt`): neither `nix` nor `rustix` wraps
/// `adjtimex`, and no file says the same (`/run/systemd/timesync/synchronized`
/// exists only with systemd-timesyncd, not with chrony or ntpd).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn kernel_clock_synchronized() -> std::io::Result<bool> {
    let mut buf = std::mem::MaybeUninit::<libc::timex>::zeroed();
    // SAFETY: `buf` is a valid, writable, zero-initialised `timex` (all-zero
    // bytes are a valid value of this plain C struct) that outlives the call.
    // `modes` is 0, so the call only reads the kernel's state into `buf` and
    // changes nothing; it needs no privilege. `buf` is not read afterwards.
    let rc = unsafe { libc::adjtimex(buf.as_mut_ptr()) };
    match rc {
        -1 => Err(std::io::Error::last_os_error()),
        libc::TIME_ERROR => Ok(false),
        _ => Ok(true),
    }
}

/// How often (of the wall clock handed in) [`ClockWatch`] asks.
pub const CLOCK_POLL: Micros = 1_000_000;

/// Asks a [`ClockState`] at most once per [`CLOCK_POLL`] (and again when
/// the wall clock went back) whether the clock is synchronised.
pub struct ClockWatch {
    state: Box<dyn ClockState>,
    asked_at: Option<Micros>,
    synced: bool,
}

impl ClockWatch {
    /// A watch on `state` whose last answer was `synced`.
    pub fn new(state: impl ClockState + 'static, synced: bool) -> ClockWatch {
        ClockWatch {
            state: Box::new(state),
            asked_at: None,
            synced,
        }
    }

    /// `Some(new state)` when the answer changed since the last one.
    pub fn poll(&mut self, clock: Micros) -> Option<bool> {
        if let Some(at) = self.asked_at {
            if (0..CLOCK_POLL).contains(&clock.saturating_sub(at)) {
                return None;
            }
        }
        self.asked_at = Some(clock);
        let synced = self.state.synchronized();
        (synced != std::mem::replace(&mut self.synced, synced)).then_some(synced)
    }
}

/// A wall clock that moved this much more (or less) than the monotonic
/// clock between two looks has stepped. NTP's slewing is at most 0.5 ms a
/// second, far below it.
pub const STEP_TOLERANCE: Micros = 1_000_000;

/// Notices steps of the wall clock (NTP setting a stale clock, `date -s`) by
/// comparing its progress with the monotonic clock's.
#[derive(Debug, Default, Clone, Copy)]
pub struct StepWatch {
    last: Option<(Micros, std::time::Instant)>,
}

impl StepWatch {
    /// Looks at wall clock `wall` and monotonic clock `mono` together;
    /// `Some(step)` when the wall clock stepped by more than
    /// [`STEP_TOLERANCE`] since the last look (negative: back).
    pub fn observe(&mut self, wall: Micros, mono: std::time::Instant) -> Option<Micros> {
        let (last_wall, last_mono) = self.last.replace((wall, mono))?;
        let elapsed = mono.saturating_duration_since(last_mono).as_micros() as Micros;
        let step = wall.saturating_sub(last_wall).saturating_sub(elapsed);
        (step.abs() > STEP_TOLERANCE).then_some(step)
    }
}

/// Not Linux: the clock state is unknown.
#[cfg(not(target_os = "linux"))]
pub fn kernel_clock_synchronized() -> std::io::Result<bool> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernel_answers_the_clock_question() {
        // Whatever this machine's state, on Linux the call must succeed.
        #[cfg(target_os = "linux")]
        assert!(kernel_clock_synchronized().is_ok());
        let mut fixed = || false;
        assert!(!ClockState::synchronized(&mut fixed));
    }

    #[test]
    fn a_step_of_the_wall_clock_is_told_apart_from_its_progress() {
        use std::time::{Duration, Instant};
        const T: Micros = 1_795_980_600_000_000;
        let m = Instant::now();
        let mut w = StepWatch::default();
        assert_eq!(w.observe(T, m), None, "the first look");
        let s = |secs: u64| m + Duration::from_secs(secs);
        assert_eq!(w.observe(T + 5_000_100, s(5)), None, "progress, slewed");
        assert_eq!(w.observe(T - 595_000_000, s(10)), Some(-605_000_100));
        assert_eq!(w.observe(T - 594_000_000, s(11)), None);
        assert_eq!(w.observe(T + 3_600_000_000, s(12)), Some(4_193_000_000));
    }

    #[test]
    fn the_clock_state_is_asked_at_most_once_a_second_and_changes_are_reported() {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::Arc;
        let asked = Arc::new(AtomicU64::new(0));
        let a = asked.clone();
        let mut w = ClockWatch::new(move || a.fetch_add(1, Ordering::Relaxed) >= 2, true);
        const T: Micros = 1_795_980_600_000_000;
        assert_eq!(w.poll(T), Some(false), "changed from the start's state");
        for i in 1..1000 {
            assert_eq!(w.poll(T + i * 999), None);
        }
        assert_eq!(asked.load(Ordering::Relaxed), 1, "1000 polls in one second");
        assert_eq!(
            w.poll(T - 3_600_000_000),
            None,
            "a clock that went back asks again"
        );
        assert_eq!(asked.load(Ordering::Relaxed), 2);
        assert_eq!(w.poll(T), Some(true));
    }
}
