//! Both HTTP servers (the metrics endpoint and the venue console) against a
//! hostile field: idle sockets past the descriptor limit, silent
//! connections, a stalled console at 8,000 devices, a page on another host
//! name (DNS rebinding), a retried ack. The real binary, real sockets.

mod common;

use common::console::{http, request_text};
use common::services::{free_port, wait_until, Gateway};
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// The simulator at `rate` events/s, the metrics endpoint on `metrics`, the
/// console on `console`; `sets` sets more keys: (section, key, TOML value).
fn config(
    dir: &Path,
    metrics: u16,
    console: u16,
    rate: u32,
    sets: &[(&str, &str, &str)],
) -> VenueConfig {
    let mut cfg = VenueConfig::fast(dir, metrics)
        .set_str("venue", "id", "demo")
        .set_str("console", "listen", format!("127.0.0.1:{console}"))
        .set("sources.simulator", "rate", rate)
        .set("sources.simulator", "players", 6)
        .set("sources.simulator", "anomaly_rate", 0.02)
        .set("sources.simulator", "seed", 7);
    for (section, k, v) in sets {
        cfg = cfg.set(section, k, v);
    }
    cfg
}

fn wait_up(port: u16, gw: &Gateway) {
    let up = wait_until(Duration::from_secs(30), || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "port {port} not up; log:\n{}", gw.log.all().join("\n"));
}

/// `n` connections to `port` that send nothing.
fn silent(port: u16, n: usize) -> Vec<TcpStream> {
    (0..n)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", port)).ok())
        .collect()
}

/// CPU time (user + system) of `pid` so far, seconds.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat(5), counted from the state (field 3).
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    ticks / 100.0
}

/// One request with `host` as the Host header (and `headers`), on a new connection.
fn with_host(
    port: u16,
    method: &str,
    path: &str,
    host: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> common::console::Resp {
    let text = request_text(port, method, path, headers, body).replacen(
        &format!("Host: 127.0.0.1:{port}"),
        &format!("Host: {host}"),
        1,
    );
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(text.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    common::console::parse(&raw)
}

#[test]
fn idle_sockets_past_the_descriptor_limit_cost_no_cpu_no_log_flood_and_no_row() {
    if !common::services::have(&["prlimit"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (metrics, console) = (free_port(), free_port());
    let cfg = config(dir.path(), metrics, console, 500, &[]).write();
    let gw = Gateway::start_limited(&cfg, metrics, 100);
    wait_up(console, &gw);
    gw.wait_metric(
        "pitchside_files_written_total",
        2.0,
        Duration::from_secs(30),
    );

    // 150 idle connections to each server, renewed as the servers close them.
    let held_at = Instant::now();
    let cpu_before = cpu_seconds(gw.pid());
    let mut idle = silent(metrics, 150);
    idle.extend(silent(console, 150));
    while held_at.elapsed() < Duration::from_secs(12) {
        std::thread::sleep(Duration::from_secs(2));
        idle.extend(silent(metrics, 20));
        idle.extend(silent(console, 20));
    }
    let cpu = (cpu_seconds(gw.pid()) - cpu_before) / held_at.elapsed().as_secs_f64();
    let accept_lines = gw.log.count("accept failed");
    drop(idle);
    eprintln!("while held: {cpu:.2} cores, {accept_lines} accept-error log lines");
    assert!(cpu < 0.25, "{cpu:.2} cores busy while sockets were held");
    assert!(
        accept_lines <= 20,
        "{accept_lines} accept-error log lines; tail:\n{}",
        tail(&gw)
    );

    // Both servers and the data path recover once the sockets close.
    let back = wait_until(Duration::from_secs(15), || {
        common::services::get_metrics(metrics).is_some_and(|m| m.starts_with("HTTP/1.1 200"))
            && answers_200(console, "/api/state")
    });
    assert!(
        back,
        "the servers did not come back; log tail:\n{}",
        tail(&gw)
    );
    let written = gw.metric("pitchside_files_written_total");
    gw.wait_metric(
        "pitchside_files_written_total",
        written + 2.0,
        Duration::from_secs(20),
    );
    eprintln!(
        "refused {} (metrics) {} (console), evicted {} (console), accept errors {} {}",
        gw.metric("pitchside_http_connections_refused_total{server=\"metrics\"}"),
        gw.metric("pitchside_http_connections_refused_total{server=\"console\"}"),
        gw.metric("pitchside_http_connections_evicted_total{server=\"console\"}"),
        gw.metric("pitchside_http_accept_errors_total{server=\"metrics\"}"),
        gw.metric("pitchside_http_accept_errors_total{server=\"console\"}"),
    );
    let lost: f64 = metric_sum(&gw, "pitchside_lost_rows_total");
    assert_eq!(lost, 0.0, "rows lost; log tail:\n{}", tail(&gw));
    assert_eq!(
        gw.metric("pitchside_journal_failures_total"),
        0.0,
        "{}",
        tail(&gw)
    );
    assert_eq!(
        gw.metric("pitchside_checkpoint_failures_total"),
        0.0,
        "{}",
        tail(&gw)
    );
    assert!(
        gw.metric("pitchside_http_connections_refused_total{server=\"metrics\"}") > 0.0,
        "metrics endpoint refusals not counted"
    );
    // The console closes the oldest silent connection for each newcomer.
    assert!(
        gw.metric("pitchside_http_connections_evicted_total{server=\"console\"}")
            + gw.metric("pitchside_http_connections_refused_total{server=\"console\"}")
            > 0.0,
        "console refusals not counted"
    );
}

/// Whether `GET path` on a new connection is answered 200 (within 5 s).
fn answers_200(port: u16, path: &str) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let _ = s.write_all(request_text(port, "GET", path, &[], "").as_bytes());
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    raw.starts_with(b"HTTP/1.1 200")
}

/// Every sample of a labelled family, summed.
fn metric_sum(gw: &Gateway, family: &str) -> f64 {
    let text = common::services::get_metrics(gw.metrics_port()).unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with(family) && !l.starts_with('#'))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn tail(gw: &Gateway) -> String {
    let all = gw.log.all();
    all[all.len().saturating_sub(30)..].join("\n")
}

#[test]
fn silent_connections_neither_lock_the_console_nor_stay_open() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, console) = started(dir.path(), &[]);
    let quiet = silent(console, 80);
    std::thread::sleep(Duration::from_millis(300));
    let mut ok = 0;
    for _ in 0..15 {
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", console)) {
            s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
            let _ = s.write_all(request_text(console, "GET", "/api/state", &[], "").as_bytes());
            let mut raw = Vec::new();
            let _ = s.read_to_end(&mut raw);
            ok += usize::from(raw.starts_with(b"HTTP/1.1 200"));
        }
    }
    assert_eq!(ok, 15, "{} of 15 GET /api/state failed", 15 - ok);
    // An event stream opens too, past the silent ones.
    let events = common::console::Events::open(console, &[]);
    assert!(events.next(Duration::from_secs(5)).is_some());

    // The silent ones are closed by the server (no byte in REQUEST_TIMEOUT).
    let closed_at = Instant::now();
    let mut closed = 0;
    for mut s in quiet {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut b = [0u8; 16];
        closed += usize::from(matches!(s.read(&mut b), Ok(0) | Err(_)));
    }
    assert_eq!(closed, 80);
    assert!(closed_at.elapsed() < Duration::from_secs(10));
    assert!(gw.metric("pitchside_http_heads_timed_out_total{server=\"console\"}") > 0.0);
}

#[test]
fn a_stalled_console_at_8000_devices_holds_at_most_a_bounded_queue() {
    let dir = tempfile::tempdir().unwrap();
    let (metrics, console) = (free_port(), free_port());
    let sets = [
        ("sources.simulator", "players", "8000"),
        ("sources.simulator", "anomaly_rate", "0.0"),
        ("sources.simulator", "fatigue_rate", "0.0"),
        ("fatigue", "k", "1000.0"),
        ("detector", "threshold", "50.0"),
        ("health", "silent_after", "\"1h\""),
    ];
    let gw = Gateway::start(
        &config(dir.path(), metrics, console, 8000, &sets).write(),
        metrics,
        &[],
    );
    wait_up(console, &gw);
    let doc_ready = wait_until(Duration::from_secs(60), || {
        common::console::get(console, "/api/state").body.len() > 2_000_000
    });
    let size = common::console::get(console, "/api/state").body.len();
    assert!(doc_ready, "the state doc never reached 2 MB: {size} bytes");
    let doc = common::console::get(console, "/api/state").body.len();
    // A console that reads (and discards): the state is rendered every
    // second from now on.
    let read = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut reader = TcpStream::connect(("127.0.0.1", console)).unwrap();
    let req = format!("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{console}\r\n\r\n");
    reader.write_all(req.as_bytes()).unwrap();
    let counted = read.clone();
    let closed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let saw_close = closed.clone();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 1 << 16];
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            counted.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
        saw_close.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let peak_over = |secs: u64| {
        let start = Instant::now();
        let mut peak = 0;
        while start.elapsed() < Duration::from_secs(secs) {
            std::thread::sleep(Duration::from_millis(250));
            peak = peak.max(gw.rss_kib());
        }
        peak
    };
    let base = peak_over(15);
    // Healthy under 10x its bound: the reading console took more than ten
    // times console.client_queue_bytes (1 MiB) through its queue, not dropped.
    let read_alone = read.load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        read_alone > 10 << 20,
        "the reading console read only {read_alone} bytes in 15 s"
    );
    assert_eq!(gw.metric("pitchside_console_clients_dropped_total"), 0.0);
    let _stalled = common::console::stalled_stream(console);
    let peak = peak_over(45);
    // Full under failure: the stalled one may be dropped, never the reader.
    assert!(!closed.load(std::sync::atomic::Ordering::Relaxed));
    assert!(read.load(std::sync::atomic::Ordering::Relaxed) > read_alone);
    assert!(gw.metric("pitchside_console_clients_dropped_total") <= 1.0);
    eprintln!(
        "state doc {doc} bytes; peak RSS {base} KiB with one reading console (15 s), {peak} KiB with a stalled one too (45 s): +{} KiB; dropped {}",
        peak.saturating_sub(base),
        gw.metric("pitchside_console_clients_dropped_total")
    );
    eprintln!(
        "the reading console read {} bytes",
        read.load(std::sync::atomic::Ordering::Relaxed)
    );
    for l in gw.log.all().iter().filter(|l| l.contains("dropped")) {
        eprintln!("{l}");
    }
    assert!(
        peak.saturating_sub(base) < 40 * 1024,
        "a stalled client grew peak RSS by {} KiB",
        peak - base
    );
}

/// The gateway on `dir` (200 events/s, the config changes `sets`), its console up.
fn started(dir: &Path, sets: &[(&str, &str, &str)]) -> (Gateway, u16) {
    let (metrics, console) = (free_port(), free_port());
    let gw = Gateway::start(
        &config(dir, metrics, console, 200, sets).write(),
        metrics,
        &[],
    );
    wait_up(console, &gw);
    (gw, console)
}

#[test]
fn a_page_on_another_host_name_cannot_read_or_act_on_a_console_without_token() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, console) = started(dir.path(), &[]);
    let evil = "rebind.example:9000";
    let origin = [("Origin", "http://rebind.example:9000")];
    let r = with_host(console, "GET", "/api/state", evil, &[], "");
    assert_eq!(
        r.status, 421,
        "GET /api/state through a rebound name: {}",
        r.body
    );
    assert!(r.body.contains("console.allowed_hosts"), "{}", r.body);
    let r = with_host(console, "POST", "/api/health/pause", evil, &origin, "");
    assert_eq!(r.status, 421, "pause through a rebound name: {}", r.body);
    let r = with_host(
        console,
        "POST",
        "/api/alerts/demo%2Fx%2F1/ack",
        evil,
        &origin,
        r#"{"by":"attacker"}"#,
    );
    assert_eq!(r.status, 421, "ack through a rebound name: {}", r.body);
    assert_eq!(
        with_host(console, "GET", "/api/events", evil, &[], "").status,
        421
    );
    // A missing Host is refused too; loopback names on any port (ssh -L) are served.
    let r = with_host(console, "GET", "/api/state", "", &[], "");
    assert_ne!(r.status, 200);
    for host in [
        "localhost:9000",
        "127.0.0.1:8080",
        "[::1]:8080",
        "LOCALHOST",
    ] {
        let r = with_host(console, "GET", "/api/state", host, &[], "");
        assert_eq!(r.status, 200, "{host}: {}", r.body);
    }
    // Same-host POST from the console's own page is served.
    let own = format!("http://localhost:{console}");
    let r = with_host(
        console,
        "POST",
        "/api/health/resume",
        &format!("localhost:{console}"),
        &[("Origin", &own)],
        "",
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(gw.metric("pitchside_console_bad_host_total") >= 4.0);
}

#[test]
fn allowed_hosts_admits_a_configured_name() {
    let dir = tempfile::tempdir().unwrap();
    let (metrics, console) = (free_port(), free_port());
    let sets = [("console", "allowed_hosts", r#"["pitchside.venue.lan"]"#)];
    let gw = Gateway::start(
        &config(dir.path(), metrics, console, 200, &sets).write(),
        metrics,
        &[],
    );
    wait_up(console, &gw);
    let host = "pitchside.venue.lan:8080";
    assert_eq!(
        with_host(console, "GET", "/api/state", host, &[], "").status,
        200
    );
    let r = with_host(console, "GET", "/api/state", "other.lan:8080", &[], "");
    assert_eq!(r.status, 421, "{}", r.body);
}

#[test]
fn a_retried_ack_writes_one_alert_acks_row() {
    let dir = tempfile::tempdir().unwrap();
    let (gw, console) = started(dir.path(), &[]);
    let path = "/api/alerts/demo%2Fretry%2F1/ack";
    let first = http(console, "POST", path, &[], r#"{"by":"Dr Khan"}"#);
    assert_eq!(first.status, 200, "{}", first.body);
    // The client retries (its first answer was lost, or was a 503 after the
    // pipeline's 5 s), and another person acks the same alert.
    let again = http(
        console,
        "POST",
        path,
        &[],
        r#"{"by":"Dr Khan","note":"retry"}"#,
    );
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(again.json()["acked_at"], first.json()["acked_at"]);
    let other = http(console, "POST", path, &[], r#"{"by":"Physio"}"#);
    assert_eq!(other.status, 200, "{}", other.body);
    let log = gw.stop();
    let acks = rows(&dir.path().join("store"), "alert_acks");
    let mut by: Vec<&str> = acks
        .iter()
        .filter(|r| s(r, "alert_id") == "demo/retry/1")
        .map(|r| s(r, "by"))
        .collect();
    by.sort();
    assert_eq!(by, ["Dr Khan", "Physio"], "alert_acks rows; log:\n{log}");
}
