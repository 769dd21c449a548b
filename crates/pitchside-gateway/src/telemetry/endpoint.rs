//! What both HTTP servers (the metrics endpoint and the venue console)
//! share against a hostile field: accepting with a backoff when the system
//! refuses (no descriptor left), a connection budget taken from the
//! process's descriptor limit so that idle sockets can never take the
//! descriptors the data path needs, and their counters.

use crate::util::log_limit::LogLimiter;
use crate::util::time::now_micros;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// Descriptors kept for everything but HTTP connections (journal, spool,
/// checkpoint, Parquet files, serial ports, MQTT and store sockets): the
/// servers together hold at most `RLIMIT_NOFILE - FD_RESERVE` connections.
pub const FD_RESERVE: u64 = 64;
/// Connections the metrics endpoint holds at most; more are closed at once.
pub const METRICS_CONNECTIONS: usize = 16;
/// First pause after a failed `accept`; it doubles up to [`ACCEPT_BACKOFF_MAX`].
pub const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(10);
/// Longest pause after failed `accept`s in a row.
pub const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);
/// At most one log line per this period per server and kind (µs).
pub const LOG_PERIOD: i64 = 10_000_000;

/// The counters of one HTTP server.
#[derive(Debug, Default)]
pub struct EndpointStats {
    /// `accept` calls the system failed (out of descriptors, mostly).
    pub accept_errors: AtomicU64,
    /// Connections closed at once: the server's connection cap was reached.
    pub refused: AtomicU64,
    /// Connections closed because no whole request head came in time.
    pub heads_timed_out: AtomicU64,
    /// Connections closed, still without a request head, to make room for a
    /// newer one (console).
    pub evicted: AtomicU64,
}

/// Both servers' counters, served with a `server` label.
#[derive(Debug, Default)]
pub struct HttpStats {
    /// `metrics.listen`.
    pub metrics: EndpointStats,
    /// `console.listen`.
    pub console: EndpointStats,
}

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// The metrics endpoint.
    Metrics,
    /// The venue console.
    Console,
}

impl Server {
    /// The `server` label and the name in log lines.
    pub fn name(self) -> &'static str {
        match self {
            Server::Metrics => "metrics",
            Server::Console => "console",
        }
    }
}

impl HttpStats {
    /// The counters of `server`.
    pub fn of(&self, server: Server) -> &EndpointStats {
        match server {
            Server::Metrics => &self.metrics,
            Server::Console => &self.console,
        }
    }
}

/// Adds one to a counter.
pub fn inc(counter: &AtomicU64) {
    counter.fetch_add(1, Ordering::Relaxed);
}

/// One line per [`LOG_PERIOD`] for connections closed without an answer.
static CLOSED_LOG: std::sync::Mutex<LogLimiter> =
    std::sync::Mutex::new(LogLimiter::new(LOG_PERIOD));

/// How a connection was closed without an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// No whole request head in time.
    HeadTimedOut,
    /// Still without a request head when a newer connection needed its slot.
    Evicted,
}

impl HttpStats {
    /// Counts a connection of `server` closed without an answer, and logs
    /// it (both servers, both kinds) at most once per [`LOG_PERIOD`].
    pub fn closed(&self, server: Server, how: Closed, peer: std::net::SocketAddr) {
        let stats = self.of(server);
        let (counter, why, family) = match how {
            Closed::HeadTimedOut => (
                &stats.heads_timed_out,
                "no whole request head within 5 s",
                "pitchside_http_heads_timed_out_total",
            ),
            Closed::Evicted => (
                &stats.evicted,
                "still silent when a newer connection needed its slot",
                "pitchside_http_connections_evicted_total",
            ),
        };
        inc(counter);
        let allowed = CLOSED_LOG
            .lock()
            .ok()
            .and_then(|mut l| l.allow(now_micros()));
        if let Some(held_back) = allowed {
            tracing::info!(server = server.name(), %peer, why, family, held_back,
                "HTTP connection closed without an answer (counted).");
        }
    }
}

/// The soft `Max open files` of `/proc/self/limits` text; `None` when
/// unlimited or absent.
pub fn parse_open_files_limit(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// This process's soft descriptor limit (Linux), if known.
pub fn open_files_limit() -> Option<u64> {
    parse_open_files_limit(&std::fs::read_to_string("/proc/self/limits").ok()?)
}

/// How many connections each server may hold under the descriptor limit
/// `nofile`: `(metrics, console)`, each at most what it wants, together at
/// most `nofile - FD_RESERVE` (at least one each).
pub fn connection_budget(nofile: Option<u64>, metrics: usize, console: usize) -> (usize, usize) {
    let Some(n) = nofile else {
        return (metrics, console);
    };
    let budget = n.saturating_sub(FD_RESERVE) as usize;
    let m = metrics.min(budget / 4).max(1);
    let c = console.min(budget.saturating_sub(m)).max(1);
    (m, c)
}

/// Accepts connections for one server. A failed `accept` (no descriptor
/// left, `EMFILE`) is counted, logged at most once per [`LOG_PERIOD`], and
/// followed by a pause from [`ACCEPT_BACKOFF_MIN`] doubling to
/// [`ACCEPT_BACKOFF_MAX`], so that the server never spins.
pub struct Acceptor {
    listener: TcpListener,
    server: Server,
    stats: Arc<HttpStats>,
    delay: Duration,
    log: LogLimiter,
}

impl Acceptor {
    /// An acceptor for `server` on `listener`, counting into `stats`.
    pub fn new(listener: TcpListener, server: Server, stats: Arc<HttpStats>) -> Acceptor {
        Acceptor {
            listener,
            server,
            stats,
            delay: ACCEPT_BACKOFF_MIN,
            log: LogLimiter::new(LOG_PERIOD),
        }
    }

    /// The next connection; waits out failures.
    pub async fn accept(&mut self) -> (TcpStream, std::net::SocketAddr) {
        loop {
            match self.listener.accept().await {
                Ok(s) => {
                    self.delay = ACCEPT_BACKOFF_MIN;
                    return s;
                }
                Err(e) => {
                    inc(&self.stats.of(self.server).accept_errors);
                    if let Some(held_back) = self.log.allow(now_micros()) {
                        tracing::warn!(server = self.server.name(), error = %e, held_back, retry_in = ?self.delay,
                            "HTTP accept failed (counted in pitchside_http_accept_errors_total); if it says too many open files, close idle clients or raise LimitNOFILE.");
                    }
                    tokio::time::sleep(self.delay).await;
                    self.delay = (self.delay * 2).min(ACCEPT_BACKOFF_MAX);
                }
            }
        }
    }

    /// Counts a connection closed at once because the server is full, and
    /// logs it at most once per [`LOG_PERIOD`].
    pub fn refused(&mut self, peer: std::net::SocketAddr, cap: usize) {
        inc(&self.stats.of(self.server).refused);
        if let Some(held_back) = self.log.allow(now_micros()) {
            tracing::warn!(server = self.server.name(), %peer, cap, held_back,
                "HTTP connection refused: the server holds its most connections (counted in pitchside_http_connections_refused_total).");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_soft_open_files_limit_is_read_from_proc_limits() {
        let text = "Limit                     Soft Limit           Hard Limit           Units     \n\
                    Max cpu time              unlimited            unlimited            seconds   \n\
                    Max open files            100                  4096                 files     \n";
        assert_eq!(parse_open_files_limit(text), Some(100));
        let unlimited =
            "Max open files            unlimited            unlimited            files\n";
        assert_eq!(parse_open_files_limit(unlimited), None);
        assert_eq!(parse_open_files_limit(""), None);
    }

    #[test]
    fn connections_leave_the_reserve_to_the_data_path() {
        assert_eq!(connection_budget(None, 16, 80), (16, 80));
        assert_eq!(connection_budget(Some(8192), 16, 80), (16, 80));
        // 100 descriptors: 36 for HTTP, a quarter of them for /metrics.
        assert_eq!(connection_budget(Some(100), 16, 80), (9, 27));
        let (m, c) = connection_budget(Some(100), 16, 80);
        assert!((m + c) as u64 <= 100 - FD_RESERVE);
        assert_eq!(connection_budget(Some(10), 16, 80), (1, 1));
    }
}
