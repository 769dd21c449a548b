//! Operator paths through the real binary: `pitchside status` against a
//! running daemon (request heads however split, health naming the source that
//! is down, exit codes), commands whose stdout is closed early (`| head`),
//! `bench-mqtt`'s child dying with it, and a prompt shutdown with an alert
//! output that has nothing queued.

use crate::common;

use common::broker::{MqttRig, PROGRAMS};
use common::serial::SerialRig;
use common::services::*;
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);

fn simulator_gateway(dir: &Path, extra: &str) -> (Gateway, u16) {
    let port = free_port();
    let cfg = fast_config(
        dir,
        port,
        &format!(
            "{extra}\n[sources.simulator]\nrate = 200\nanomaly_rate = 0.0\nfatigue_rate = 0.0\n"
        ),
    );
    let gw = Gateway::start(&cfg, port, &[]);
    gw.wait_metric("pitchside_input_rows_total", 1.0, T);
    (gw, port)
}

/// Sends `request` in pieces of `piece` bytes, each written on its own; returns the response.
fn send_in_pieces(port: u16, request: &[u8], piece: usize) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    for chunk in request.chunks(piece) {
        // The server may answer (and close) before the last piece of an over-long head.
        if s.write_all(chunk).is_err() {
            break;
        }
        s.flush().unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn status(port: u16) -> std::process::Output {
    bin()
        .args(["status", "--addr", &format!("127.0.0.1:{port}")])
        .output()
        .unwrap()
}

#[test]
fn status_succeeds_200_times_in_a_row_against_a_running_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, port) = simulator_gateway(dir.path(), "");
    let mut failures = Vec::new();
    for i in 0..200 {
        let o = status(port);
        let out = String::from_utf8_lossy(&o.stdout);
        if !o.status.success() || !out.starts_with("health      ok") {
            failures.push(format!(
                "call {i}: {:?}\n{out}{}",
                o.status,
                String::from_utf8_lossy(&o.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 200 status calls failed; first: {}",
        failures.len(),
        failures[0]
    );
    gw.stop();
}

#[test]
fn request_head_sent_one_byte_at_a_time_gets_200() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, port) = simulator_gateway(dir.path(), "");
    let resp = send_in_pieces(
        port,
        b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        1,
    );
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    assert!(resp.contains("pitchside_input_rows_total "), "{resp}");
    let resp = send_in_pieces(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", 3);
    assert!(resp.starts_with("HTTP/1.1 200"), "{resp}");
    gw.stop();
}

#[test]
fn over_long_request_head_is_rejected_with_431_and_the_endpoint_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, port) = simulator_gateway(dir.path(), "");
    // A complete head past the bound, and one that never ends.
    let mut long = b"GET /metrics HTTP/1.1\r\nX-Pad: ".to_vec();
    long.extend(std::iter::repeat_n(b'a', 10_000));
    long.extend_from_slice(b"\r\n\r\n");
    let resp = send_in_pieces(port, &long, 4096);
    assert!(resp.starts_with("HTTP/1.1 431"), "{resp}");
    let endless = vec![b'a'; 20_000];
    let resp = send_in_pieces(port, &endless, 4096);
    assert!(resp.starts_with("HTTP/1.1 431"), "{resp}");
    // A client that sends half a head and goes quiet is dropped, not served.
    let mut quiet = TcpStream::connect(("127.0.0.1", port)).unwrap();
    quiet.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
    quiet
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    let t0 = Instant::now();
    let mut out = Vec::new();
    let _ = quiet.read_to_end(&mut out);
    assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
    assert!(
        t0.elapsed() < Duration::from_secs(10),
        "slow client held for {:?}",
        t0.elapsed()
    );
    assert!(http_get(port, "/healthz")
        .unwrap()
        .starts_with("HTTP/1.1 200"));
    gw.stop();
}

#[test]
fn status_names_the_down_source_and_exits_1_when_unhealthy_2_when_unreachable() {
    let rig = SerialRig::new("no-such-tty", "", |c| {
        c.set_str("metrics", "health_grace", "1s")
            .extra("[sources.simulator]\nrate = 50\n")
    });
    let (missing, port) = (&rig.tty, rig.port);
    let gw = rig.start();
    let name = format!("serial:{}", missing.display());
    let mut last = String::new();
    let unhealthy = wait_until(T, || {
        last = http_get(port, "/healthz").unwrap_or_default();
        last.starts_with("HTTP/1.1 503")
    });
    assert!(unhealthy, "{last}");
    assert!(last.contains(&format!("source {name} down for")), "{last}");

    let o = status(port);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains(&name), "{out}");
    assert!(out.lines().next().unwrap().contains("unhealthy"), "{out}");
    gw.stop();

    let o = status(free_port());
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot reach the gateway"));
}

/// Runs `cmd` with its stdout a pipe whose read end is closed at once.
fn run_with_closed_stdout(cmd: &mut Command) -> (Option<i32>, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    stderr_and_exit(child)
}

/// Reads a child's piped stderr to the end and waits for it: (exit code, stderr).
fn stderr_and_exit(mut child: Child) -> (Option<i32>, String) {
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code(), err)
}

fn assert_quiet_exit(what: &str, (code, err): (Option<i32>, String)) {
    assert!(
        !matches!(code, Some(101) | Some(134) | None),
        "{what}: exit {code:?}\n{err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
}

#[test]
fn no_command_panics_when_its_stdout_is_closed_early() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "[sources.simulator]\nrate = 10\n");
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        generic_events("d1", 50, None, 0.0).join("\n") + "\n",
    )
    .unwrap();
    let board = Path::new(env!("CARGO_MANIFEST_DIR")).join("boards/pi4.toml");
    assert_quiet_exit(
        "simulate",
        run_with_closed_stdout(bin().args(["simulate", "--count", "100000"])),
    );
    assert_quiet_exit(
        "check-config",
        run_with_closed_stdout(bin().args(["check-config", "--config"]).arg(&cfg)),
    );
    assert_quiet_exit(
        "service-dropin",
        run_with_closed_stdout(bin().args(["service-dropin", "--board"]).arg(&board)),
    );
    assert_quiet_exit(
        "replay",
        run_with_closed_stdout(
            &mut Replay::new(&cfg, &input)
                .output(&dir.path().join("out"))
                .command(),
        ),
    );
    assert_quiet_exit(
        "bench",
        run_with_closed_stdout(bin().args(["bench", "--events", "2000", "--keys", "10"])),
    );
    std::fs::create_dir_all(dir.path().join("gw")).unwrap();
    let (gw, port) = simulator_gateway(&dir.path().join("gw"), "");
    assert_quiet_exit(
        "status",
        run_with_closed_stdout(bin().args(["status", "--addr", &format!("127.0.0.1:{port}")])),
    );
    gw.stop();
}

#[test]
fn simulate_piped_into_head_stops_quietly_with_exit_0() {
    let mut child = bin()
        .args(["simulate", "--count", "100000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 64];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Pids of the live (not zombie) children of `parent`.
fn children_of(parent: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some((ppid, state)) = stat(pid) {
            if ppid == parent && state != 'Z' {
                out.push(pid);
            }
        }
    }
    out
}

/// (parent pid, state) of a process, None once it is gone.
fn stat(pid: u32) -> Option<(u32, char)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // "pid (comm) state ppid ...": comm may hold spaces, so split after ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    Some((ppid, state))
}

fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(_, s)| s != 'Z')
}

/// A mosquitto that lets anyone in (bench-mqtt has no credentials options).
struct OpenBroker {
    child: std::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl OpenBroker {
    fn start() -> OpenBroker {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let conf = dir.path().join("open-mosquitto.conf");
        std::fs::write(
            &conf,
            format!("user root\nallow_anonymous true\nlistener {port} 127.0.0.1\n"),
        )
        .unwrap();
        let child = Command::new(which("mosquitto").unwrap())
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        assert!(
            wait_until(Duration::from_secs(10), || TcpStream::connect((
                "127.0.0.1",
                port
            ))
            .is_ok()),
            "mosquitto did not start"
        );
        OpenBroker {
            child,
            port,
            _dir: dir,
        }
    }
}

impl Drop for OpenBroker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `pitchside bench-mqtt` for `seconds` against a new [`OpenBroker`], with
/// stdout and stderr made by `stdio`; `None` where mosquitto is missing.
fn spawn_bench(seconds: &str, stdio: fn() -> Stdio) -> Option<(OpenBroker, Child)> {
    if !have(&PROGRAMS) {
        return None;
    }
    let broker = OpenBroker::start();
    let child = bin()
        .args(["bench-mqtt", "--host", "127.0.0.1"])
        .args(["--port", &broker.port.to_string()])
        .args(["--rates", "200", "--seconds", seconds])
        .args(["--flood", "0", "--devices", "5"])
        .stdout(stdio())
        .stderr(stdio())
        .spawn()
        .unwrap();
    Some((broker, child))
}

/// Waits until `parent` has live children: their pids, and whether any came.
fn wait_for_children(parent: u32) -> (Vec<u32>, bool) {
    let mut kids = Vec::new();
    let found = wait_until(T, || {
        kids = children_of(parent);
        !kids.is_empty()
    });
    (kids, found)
}

/// Whether every one of `pids` is gone within 15 s.
fn all_gone(pids: &[u32]) -> bool {
    wait_until(Duration::from_secs(15), || !pids.iter().any(|&k| alive(k)))
}

#[test]
fn bench_mqtt_child_gateway_dies_with_a_killed_parent() {
    let Some((_broker, mut parent)) = spawn_bench("60", Stdio::null) else {
        return;
    };
    let (kids, started) = wait_for_children(parent.id());
    assert!(started, "bench-mqtt started no gateway");
    // Let the child get going (its signal handling and watchdog installed).
    std::thread::sleep(Duration::from_secs(2));
    parent.kill().unwrap();
    parent.wait().unwrap();
    assert!(
        all_gone(&kids),
        "gateway {kids:?} outlived its bench-mqtt parent"
    );
}

#[test]
fn bench_mqtt_piped_into_head_neither_panics_nor_leaves_its_gateway() {
    let Some((_broker, mut child)) = spawn_bench("1", Stdio::piped) else {
        return;
    };
    drop(child.stdout.take());
    let (kids, _) = wait_for_children(child.id());
    assert_quiet_exit("bench-mqtt", stderr_and_exit(child));
    assert!(all_gone(&kids), "gateway {kids:?} left behind");
}

#[test]
fn sigterm_with_an_idle_mqtt_alert_output_exits_within_3_s() {
    let Some(rig) = MqttRig::new() else { return };
    let broker = &rig.broker;
    let cfg = fast_config(
        rig.dir.path(),
        rig.metrics,
        &format!(
            "[sources.simulator]\nrate = 100\nanomaly_rate = 0.0\nfatigue_rate = 0.0\n\
             [alerts]\ntopic_prefix = \"alerts\"\n[alerts.mqtt]\n{}",
            broker.login(broker.port)
        ),
    );
    let gw = rig.start(&cfg);
    gw.log
        .wait_for("Alert output connected to MQTT broker", 1, T);
    gw.wait_metric("pitchside_input_rows_total", 1.0, T);
    let t0 = Instant::now();
    let log = gw.stop();
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(3),
        "shutdown took {took:?}\n{log}"
    );
    assert!(log.contains("MQTT alert output stopped"), "{log}");
    assert!(!log.contains("alerts unsent"), "{log}");
}

#[test]
fn bench_in_every_input_format_decodes_every_event_to_the_same_alerts() {
    let mut alerts = Vec::new();
    for format in ["pitchside", "json", "csv", "regex", "logfmt", "influx"] {
        let out = bin()
            .args([
                "bench", "--events", "20000", "--keys", "50", "--format", format,
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{format}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains(&format!("format           {format}")),
            "{text}"
        );
        let line = text
            .lines()
            .find(|l| l.starts_with("alerts"))
            .unwrap()
            .to_string();
        alerts.push((format, line));
    }
    // The same readings in six formats: the same alerts, and some of them.
    assert!(alerts.iter().all(|(_, a)| *a == alerts[0].1), "{alerts:?}");
    assert_ne!(
        alerts[0].1.split_whitespace().nth(1),
        Some("0"),
        "{alerts:?}"
    );
}

/// `bench --dir` takes a relative folder as well (it used to make a store
/// URL `file://out/store` that the config check refused) and keeps the
/// input and the tables there.
#[test]
fn bench_keeps_its_files_in_a_relative_dir() {
    let cwd = tempfile::tempdir().unwrap();
    let out = bin()
        .current_dir(cwd.path())
        .args(["bench", "--events", "2000", "--keys", "20", "--dir", "b"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The replay's minor page faults: memory freed and faulted in again
    // shows here (docs/src/performance.md).
    let text = String::from_utf8_lossy(&out.stdout);
    let faults: u64 = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("page faults")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no page faults line:\n{text}"));
    assert!(faults > 0, "{text}");
    let dir = cwd.path().join("b");
    assert!(dir.join("input.jsonl").is_file());
    assert!(!common::files(&dir.join("out"), "windows_generic").is_empty());
}
