//! systemd integration: `Type=notify` readiness and the watchdog.
//!
//! When systemd starts pitchside it sets `NOTIFY_SOCKET` (and, with
//! `WatchdogSec=`, `WATCHDOG_USEC`). pitchside sends `READY=1` once running,
//! `WATCHDOG=1` while its pipeline task is alive, and `STOPPING=1` when it
//! drains. Outside systemd all of this does nothing.

use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Sends notifications to systemd, if it asked for them.
#[derive(Debug)]
pub struct Notifier {
    socket: Option<(UnixDatagram, String)>,
}

impl Notifier {
    /// A notifier for `NOTIFY_SOCKET`, or a silent one without it.
    pub fn from_env() -> Notifier {
        let socket = std::env::var("NOTIFY_SOCKET")
            .ok()
            .filter(|p| !p.is_empty())
            .and_then(|p| UnixDatagram::unbound().ok().map(|s| (s, p)));
        Notifier { socket }
    }

    /// Sends one notification (`READY=1`, `WATCHDOG=1`, …); errors are logged at debug.
    pub fn notify(&self, state: &str) {
        let Some((sock, path)) = &self.socket else {
            return;
        };
        let sent = if let Some(name) = path.strip_prefix('@') {
            // An abstract socket (systemd's usual choice).
            use std::os::linux::net::SocketAddrExt;
            std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())
                .and_then(|addr| sock.send_to_addr(state.as_bytes(), &addr))
        } else {
            sock.send_to(state.as_bytes(), path)
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e, "systemd notification not sent.");
        }
    }
}

/// The watchdog period systemd asked for (`WATCHDOG_USEC`), if any.
pub fn watchdog_interval() -> Option<Duration> {
    let usec: u64 = std::env::var("WATCHDOG_USEC").ok()?.parse().ok()?;
    if let Some(pid) = std::env::var("WATCHDOG_PID")
        .ok()
        .and_then(|p| p.parse::<u32>().ok())
    {
        if pid != std::process::id() {
            return None;
        }
    }
    (usec > 0).then(|| Duration::from_micros(usec))
}

/// A heartbeat the pipeline task beats; the watchdog is fed only while it is
/// fresh, so a stuck pipeline gets the service restarted.
#[derive(Debug, Clone, Default)]
pub struct Heartbeat(Arc<AtomicI64>);

impl Heartbeat {
    /// Records "alive now".
    pub fn beat(&self) {
        self.0
            .store(crate::util::time::now_micros(), Ordering::Relaxed);
    }

    /// µs since the last beat.
    pub fn age(&self) -> i64 {
        crate::util::time::now_micros() - self.0.load(Ordering::Relaxed)
    }
}

/// Feeds the watchdog every half period while `heartbeat` is younger than
/// the period; returns when `shutdown` is cancelled.
pub async fn feed_watchdog(
    notifier: Arc<Notifier>,
    period: Duration,
    heartbeat: Heartbeat,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let mut tick = tokio::time::interval(period / 2);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        if heartbeat.age() < period.as_micros() as i64 {
            notifier.notify("WATCHDOG=1");
        } else {
            tracing::error!(stalled_ms = heartbeat.age() / 1000, "Pipeline stalled: not feeding the systemd watchdog (the service will be restarted).");
        }
    }
}
