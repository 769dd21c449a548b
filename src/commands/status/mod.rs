//! `pitchside status`: the running gateway's state for a person on the
//! device, read from its metrics endpoint (`/metrics` and `/healthz`).

mod lines;

use crate::commands::terminal::{emit, error_text, print_error, still_open};
use crate::config;
use crate::telemetry::parse_metrics;
use crate::util::time::{format_rfc3339, now_micros};
use anyhow::Context as _;
use std::fmt::Write;
use std::io::{IsTerminal, Read, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `pitchside status`.
#[derive(Debug, Clone, clap::Args)]
pub struct StatusArgs {
    /// Read metrics.listen from this config (default: the address below).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Metrics address of the gateway.
    #[arg(long, default_value = "127.0.0.1:9898")]
    pub addr: String,
    /// Redraw the report every --interval until Ctrl-C (on a pipe: one
    /// block per interval, separated by a blank line).
    #[arg(long)]
    pub watch: bool,
    /// How often --watch refreshes (`500ms`, `2s`, `1m`).
    #[arg(long, default_value = "2s", value_parser = interval, requires = "watch")]
    pub interval: Duration,
}

/// `--interval`: a duration of at least 100 ms.
fn interval(s: &str) -> Result<Duration, String> {
    let us = crate::util::units::parse_duration(s)?;
    if us < 100_000 {
        return Err(format!("{s:?} is too short: at least 100ms"));
    }
    Ok(Duration::from_micros(us as u64))
}

/// Prints the report; the exit code says healthy, unhealthy or unreachable
/// (a config without `metrics.listen` counts as unreachable).
pub fn execute(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let addr = match &args.config {
        Some(p) => match listen_address(p) {
            Ok(a) => a,
            Err(e) => {
                print_error(error_text(&e));
                return Ok(ExitCode::from(EXIT_UNREACHABLE));
            }
        },
        None => args.addr,
    };
    if args.watch {
        return watch(&addr, args.interval);
    }
    match report(&addr) {
        Ok(r) => {
            emit(&r.text)?;
            Ok(ExitCode::from(r.exit_code()))
        }
        Err(e) => {
            print_error(e);
            Ok(ExitCode::from(EXIT_UNREACHABLE))
        }
    }
}

/// `status --watch`: the report every `every` until Ctrl-C or until the
/// reader closes stdout. On a terminal the screen is cleared and redrawn;
/// on a pipe the blocks follow each other, a blank line between. A gateway
/// that cannot be reached is shown as such, and asked again next time.
fn watch(addr: &str, every: Duration) -> anyhow::Result<ExitCode> {
    let tty = std::io::stdout().is_terminal();
    loop {
        let body = match report(addr) {
            Ok(r) => r.text,
            Err(e) => format!("error: {e}\n"),
        };
        let head = format!(
            "pitchside status  {addr}  {}  (every {:?}; Ctrl-C to stop)\n",
            format_rfc3339(now_micros()),
            every
        );
        let frame = if tty {
            // Cursor home, clear the screen: a redraw without scrolling.
            format!("\x1b[H\x1b[2J{head}{body}")
        } else {
            format!("{head}{body}\n")
        };
        let mut out = std::io::stdout().lock();
        if !still_open(out.write_all(frame.as_bytes()).and_then(|()| out.flush()))? {
            return Ok(ExitCode::SUCCESS);
        }
        drop(out);
        std::thread::sleep(every);
    }
}

/// `metrics.listen` of the config file at `path`.
fn listen_address(path: &std::path::Path) -> anyhow::Result<String> {
    config::load(path)?
        .metrics
        .listen
        .context("metrics.listen is \"\" in that config: the gateway exposes no status")
}

/// Why the gateway could not be asked.
#[derive(Debug, thiserror::Error)]
#[error("cannot reach the gateway at {addr}: {source} (is pitchside running, and is metrics.listen set?)")]
pub struct StatusError {
    addr: String,
    source: std::io::Error,
}

fn get(addr: &str, path: &str) -> Result<(u16, String), StatusError> {
    let err = |source| StatusError {
        addr: addr.to_string(),
        source,
    };
    let mut s = TcpStream::connect(addr).map_err(err)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(err)?;
    s.set_write_timeout(Some(Duration::from_secs(5)))
        .map_err(err)?;
    // The whole request in one write.
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    std::io::Write::write_all(&mut s, request.as_bytes()).map_err(err)?;
    let mut text = String::new();
    s.read_to_string(&mut text).map_err(err)?;
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    if code == 0 {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "no HTTP answer (is that address really pitchside's metrics.listen?)",
        )));
    }
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((code, body))
}

/// Exit code of `pitchside status` when the gateway answered and is healthy.
pub const EXIT_HEALTHY: u8 = 0;
/// Exit code when the gateway answered but `/healthz` says it is unhealthy.
pub const EXIT_UNHEALTHY: u8 = 1;
/// Exit code when the gateway could not be asked (not running, wrong address, no answer).
pub const EXIT_UNREACHABLE: u8 = 2;

/// What `pitchside status` found.
#[derive(Debug, Clone)]
pub struct Report {
    /// The text for a person.
    pub text: String,
    /// Whether `/healthz` answered 200.
    pub healthy: bool,
}

impl Report {
    /// [`EXIT_HEALTHY`] or [`EXIT_UNHEALTHY`].
    pub fn exit_code(&self) -> u8 {
        if self.healthy {
            EXIT_HEALTHY
        } else {
            EXIT_UNHEALTHY
        }
    }
}

/// The status report for the gateway whose metrics listen on `addr`.
pub fn report(addr: &str) -> Result<Report, StatusError> {
    let (_, metrics) = get(addr, "/metrics")?;
    let (code, health) = get(addr, "/healthz")?;
    let m = parse_metrics(&metrics);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "health      {}",
        if code == 200 {
            "ok".to_string()
        } else {
            health.trim().to_string()
        }
    );
    o.push_str(&lines::input_lines(&m));
    o.push_str(&lines::output_lines(&m));
    o.push_str(&lines::venue_lines(&m));
    o.push_str(&lines::data_path_lines(&m));
    Ok(Report {
        text: o,
        healthy: code == 200,
    })
}
