//! Whether the wall clock may judge event times. A Pi without a real-time
//! clock boots with a stale clock until NTP answers; judged against it,
//! correct sensor times look "in the future" (`limits.max_future`, SPEC §3).
//! The kernel knows: `adjtimex` reports `TIME_ERROR` (`STA_UNSYNC`) until a
//! time daemon has set the clock. [`ClockState`] is the question, injectable
//! so that tests can say "unsynchronised"; [`KernelClock`] asks the kernel.

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
}
