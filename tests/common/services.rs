//! Helpers for tests against real services: skipping loudly (or failing
//! under `PITCHSIDE_REQUIRE_SERVICES=1`), free ports, and a running
//! `pitchside run` child whose log and metrics the test can watch.

use super::VenueConfig;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// True when every program in `programs` is on the PATH (or an absolute path
/// that exists). Otherwise the test should return: this prints a loud notice,
/// or panics when `PITCHSIDE_REQUIRE_SERVICES=1` (CI).
pub fn have(programs: &[&str]) -> bool {
    let missing: Vec<&str> = programs
        .iter()
        .copied()
        .filter(|p| which(p).is_none())
        .collect();
    if missing.is_empty() {
        return true;
    }
    let msg = format!(
        "this test needs {} (Debian: apt-get install mosquitto mosquitto-clients socat openssl)",
        missing.join(", ")
    );
    skip(&msg);
    false
}

/// Says loudly that a test is skipped for `why`, or panics when
/// `PITCHSIDE_REQUIRE_SERVICES=1` (CI, where nothing may be skipped).
pub fn skip(why: &str) {
    if std::env::var("PITCHSIDE_REQUIRE_SERVICES").as_deref() == Ok("1") {
        panic!("PITCHSIDE_REQUIRE_SERVICES=1 but {why}");
    }
    eprintln!("\n!!!!!!!! SKIPPED: {why} !!!!!!!!\n");
}

/// Full path of a program: PATH, then /usr/sbin and /sbin (mosquitto lives there).
pub fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var("PATH").unwrap_or_default();
    let found = path
        .split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"])
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file());
    found
}

/// Where [`free_port`] looks: below Linux's ephemeral range (32768 and up),
/// which outgoing connections take their local ports from.
const TEST_PORTS: std::ops::Range<u16> = 20_000..32_000;

/// A free TCP port on 127.0.0.1 (free when asked; tests bind it soon after).
///
/// Not one the kernel picks (`bind(:0)`): the same range serves every
/// outgoing connection, so between this probe and the server's bind a
/// client of a test running beside it (a gateway connecting to its broker)
/// could take the port, and the server failed with "Address already in
/// use". Each call of a test process takes the next port of its own walk
/// through [`TEST_PORTS`], which starts where the process id says.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let span = (TEST_PORTS.end - TEST_PORTS.start) as u32;
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(7919) % span,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    for _ in 0..span {
        let port = TEST_PORTS.start + (NEXT.fetch_add(1, Ordering::Relaxed) % span) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {TEST_PORTS:?} on 127.0.0.1")
}

/// Polls `f` every 50 ms until it is true or `timeout` passes.
pub fn wait_until(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + timeout;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

/// Collects a child's output lines in the background.
#[derive(Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<String>>>);

impl Lines {
    /// Starts a thread copying `r` line by line.
    pub fn capture(r: impl Read + Send + 'static) -> Lines {
        let lines = Lines::default();
        let l = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(r).lines() {
                let Ok(line) = line else { break };
                l.0.lock().unwrap().push(line);
            }
        });
        lines
    }

    /// Everything so far.
    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Lines containing `text`.
    pub fn count(&self, text: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(text))
            .count()
    }

    /// Waits until a line contains `text`; returns the first such line.
    pub fn wait_line(&self, text: &str, timeout: Duration) -> String {
        self.wait_for(text, 1, timeout);
        self.all().into_iter().find(|l| l.contains(text)).unwrap()
    }

    /// Waits until `count` lines contain `text`; panics with the output if not.
    pub fn wait_for(&self, text: &str, count: usize, timeout: Duration) {
        if !wait_until(timeout, || self.count(text) >= count) {
            panic!(
                "waited {timeout:?} for {count}× {text:?}; output:\n{}",
                self.all().join("\n")
            );
        }
    }
}

/// A `pitchside run` child process.
pub struct Gateway {
    child: Child,
    /// Its stderr (the log).
    pub log: Lines,
    metrics_port: u16,
}

impl Gateway {
    /// Starts `pitchside run --config cfg` with extra environment variables.
    /// The config must have `[metrics] listen = "127.0.0.1:{metrics_port}"`.
    pub fn start(cfg: &Path, metrics_port: u16, env: &[(&str, &str)]) -> Gateway {
        Gateway::spawn(super::bin(), cfg, metrics_port, env)
    }

    /// [`Gateway::start`] under `prlimit --as={bytes}`: a larger allocation
    /// fails, and the process aborts. `--as` caps address space, not resident
    /// memory, so glibc gets two malloc arenas (`MALLOC_ARENA_MAX=2`): each
    /// reserves 64 MiB, and one per thread would fail an idle gateway.
    pub fn start_capped(
        cfg: &Path,
        metrics_port: u16,
        env: &[(&str, &str)],
        bytes: u64,
    ) -> Gateway {
        let mut cmd = prlimit(&format!("--as={bytes}"));
        cmd.env("MALLOC_ARENA_MAX", "2");
        Gateway::spawn(cmd, cfg, metrics_port, env)
    }

    /// Starts `pitchside run --config cfg` under `prlimit --nofile=N:N`: a
    /// process that may hold at most `nofile` descriptors.
    pub fn start_limited(cfg: &Path, metrics_port: u16, nofile: u32) -> Gateway {
        let cmd = prlimit(&format!("--nofile={nofile}:{nofile}"));
        Gateway::spawn(cmd, cfg, metrics_port, &[])
    }

    /// The peak resident memory so far, KiB (`VmHWM`).
    pub fn peak_rss_kib(&self) -> u64 {
        self.status_kib("VmHWM:")
    }

    /// A `/proc/{pid}/status` figure in KiB (0 if unreadable).
    fn status_kib(&self, field: &str) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix(field))
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            })
            .unwrap_or(0)
    }

    fn spawn(
        mut cmd: std::process::Command,
        cfg: &Path,
        metrics_port: u16,
        env: &[(&str, &str)],
    ) -> Gateway {
        cmd.args(["run", "--config"])
            .arg(cfg)
            .env("PITCHSIDE_LOG", "debug")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let log = Lines::capture(child.stderr.take().unwrap());
        Gateway {
            child,
            log,
            metrics_port,
        }
    }

    /// The metrics endpoint's port.
    pub fn metrics_port(&self) -> u16 {
        self.metrics_port
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory now, KiB (`VmRSS`).
    pub fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// A counter or gauge from `/metrics` (0 if absent or unreachable).
    pub fn metric(&self, name: &str) -> f64 {
        let Some(text) = get_metrics(self.metrics_port) else {
            return 0.0;
        };
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or(0.0)
    }

    /// Waits until metric `name` reaches `min`; panics with the log if not.
    pub fn wait_metric(&self, name: &str, min: f64, timeout: Duration) {
        if !wait_until(timeout, || self.metric(name) >= min) {
            panic!(
                "{name} = {} after {timeout:?}, wanted {min}; log:\n{}",
                self.metric(name),
                self.log.all().join("\n")
            );
        }
    }

    /// Sends a signal by name (`HUP`, `USR1`, `INT`, ...) with kill(1).
    pub fn signal(&self, name: &str) {
        let ok = std::process::Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill -{name} failed");
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits up to `timeout` for the process to exit; its status and the log.
    pub fn wait_exit(mut self, timeout: Duration) -> (std::process::ExitStatus, String) {
        let end = Instant::now() + timeout;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(
                Instant::now() < end,
                "no exit within {timeout:?}; log:\n{}",
                self.log.all().join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        std::thread::sleep(Duration::from_millis(100));
        (status, self.log.all().join("\n"))
    }

    /// SIGKILL (a power cut, as far as the process can tell), and wait for it.
    pub fn kill9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, wait for a clean exit (asserted), return the log.
    pub fn stop(mut self) -> String {
        let pid = self.child.id().to_string();
        std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap();
        let end = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < end, "no exit 30 s after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        };
        std::thread::sleep(Duration::from_millis(100));
        let log = self.log.all().join("\n");
        assert!(status.success(), "exit {status:?}; log:\n{log}");
        log
    }
}

/// `prlimit {limit} -- pitchside`: prlimit execs the gateway, so the
/// child's pid is the gateway's.
fn prlimit(limit: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new("prlimit");
    cmd.arg(limit).arg("--").arg(super::bin_path());
    cmd
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET /metrics` on 127.0.0.1:`port`; the whole response, head included.
pub fn get_metrics(port: u16) -> Option<String> {
    http_get(port, "/metrics")
}

/// One HTTP GET on 127.0.0.1; the whole response.
pub fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

/// The config every service test starts from ([`VenueConfig::fast`]) with
/// `extra` TOML appended; returns its path.
pub fn fast_config(dir: &Path, metrics_port: u16, extra: &str) -> std::path::PathBuf {
    VenueConfig::fast(dir, metrics_port).extra(extra).write()
}

/// `n` generic events for `device`, one per 10 ms of event time from now,
/// value 20 ± 0.5 except `spike` at index `spike_at`. No `sensor` field: the
/// source's configured kind fills it.
pub fn generic_events(device: &str, n: usize, spike_at: Option<usize>, spike: f64) -> Vec<String> {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    (0..n)
        .map(|i| {
            let v = if Some(i) == spike_at {
                spike
            } else {
                20.0 + if i % 2 == 0 { 0.5 } else { -0.5 } + (i % 7) as f64 * 0.01
            };
            format!(
                r#"{{"device_id":"{device}","event_time":{},"metric":"temp","value":{v}}}"#,
                now_ms - 60_000 + i as i64 * 10
            )
        })
        .collect()
}
