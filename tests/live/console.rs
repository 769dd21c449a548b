//! The venue console end to end (SPEC §10): the real binary fed by its
//! simulator, a plain HTTP client over TCP (and rustls for HTTPS).

use crate::common;

use common::console::{get, http, parse, request_text, Event, Events};
use common::services::{free_port, Gateway};
use common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

const TOKEN: &str = "s3cret-token-0123456789abcdef";

/// A gateway with the simulator (`rate` events/s, `anomaly_rate`) and the
/// console on `console_port`; `sets` sets more keys: (section, key, TOML value).
fn start(
    dir: &Path,
    console_port: u16,
    rate: u32,
    anomaly_rate: f64,
    sets: &[(&str, &str, &str)],
) -> Gateway {
    let metrics = free_port();
    let mut cfg = VenueConfig::fast(dir, metrics)
        .set_str("venue", "id", "demo")
        .set_str("venue", "gateway_id", "gw-demo")
        .set_str("console", "listen", format!("127.0.0.1:{console_port}"))
        .set("sources.simulator", "rate", rate)
        .set("sources.simulator", "players", 6)
        .set("sources.simulator", "anomaly_rate", anomaly_rate)
        .set("sources.simulator", "seed", 7);
    for (section, k, v) in sets {
        cfg = cfg.set(section, k, v);
    }
    let gw = Gateway::start(&cfg.write(), metrics, &[]);
    wait_ready(console_port, &gw);
    gw
}

fn wait_ready(port: u16, gw: &Gateway) {
    let up = common::services::wait_until(Duration::from_secs(30), || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    assert!(up, "console not up; log:\n{}", gw.log.all().join("\n"));
}

fn bearer() -> (&'static str, String) {
    ("Authorization", format!("Bearer {TOKEN}"))
}

fn token_file(dir: &Path) -> String {
    let p = dir.join("console.token");
    std::fs::write(&p, format!("{TOKEN}\n")).unwrap();
    format!("\"{}\"", p.display())
}

fn assert_increasing(events: &[Event]) {
    for w in events.windows(2) {
        assert!(
            w[0].id < w[1].id,
            "ids not strictly increasing: {} then {}",
            w[0].id,
            w[1].id
        );
    }
}

#[test]
fn the_page_the_state_doc_and_the_event_stream_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let gw = start(dir.path(), port, 500, 0.02, &[]);
    let page = get(port, "/");
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("/app.js") && page.body.contains("/style.css"),
        "{}",
        page.body
    );
    assert!(page.header("content-security-policy").is_some());
    assert_eq!(get(port, "/app.js").status, 200);
    assert_eq!(get(port, "/style.css").status, 200);
    assert_eq!(get(port, "/nope").status, 404);
    assert_eq!(http(port, "DELETE", "/api/state", &[], "").status, 405);

    let events = Events::open(port, &[]);
    assert!(events.head.contains("text/event-stream"), "{}", events.head);
    // The first event is the state; then alerts as they come, the state every second.
    let first = events.next(Duration::from_secs(5)).expect("a first event");
    assert_eq!(first.event, "state");
    let mut seen = vec![first];
    seen.extend(events.until(Duration::from_secs(40), "alert", |_| true));
    seen.extend(events.until(Duration::from_secs(5), "state", |_| true));
    assert_increasing(&seen);
    let alert = seen.iter().find(|e| e.event == "alert").unwrap();
    assert_eq!(alert.data["kind"], "anomaly");
    assert_eq!(alert.data["venue_id"], "demo");
    assert!(alert.data["alert_id"]
        .as_str()
        .unwrap()
        .starts_with("demo/"));

    let state = get(port, "/api/state");
    assert_eq!(state.status, 200);
    assert_eq!(
        state.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(state.header("cache-control").as_deref(), Some("no-store"));
    let v = state.json();
    for k in [
        "venue_id",
        "gateway_id",
        "now",
        "players",
        "pitch",
        "crowd",
        "alerts",
        "devices",
        "health",
        "gateway",
    ] {
        assert!(v.get(k).is_some(), "{k} missing from {v}");
    }
    assert_eq!(v["gateway_id"], "gw-demo");
    assert!(!v["alerts"].as_array().unwrap().is_empty(), "{v}");
    assert!(v["alerts"][0]["acks"].is_array());
    assert!(v["gateway"]["input_rows_per_second"].is_number(), "{v}");
    for k in ["wearable", "pitch", "crowd", "generic"] {
        assert!(v["gateway"]["watermark_lag_s"].get(k).is_some(), "{v}");
    }
    assert!(v["health"]["paused"].is_boolean());
    drop(gw);
}

#[test]
fn an_ack_reaches_every_console_and_survives_kill_9_after_its_200() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    // Nothing is flushed before the kill: the acks are in the journal only.
    let gw = start(
        dir.path(),
        port,
        500,
        0.02,
        &[("output", "flush_interval", "\"1h\"")],
    );
    let watcher = Events::open(port, &[]);
    let seen = watcher.until(Duration::from_secs(40), "alert", |_| true);
    let alert_id = seen.last().unwrap().data["alert_id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/alerts/{}/ack", alert_id.replace('/', "%2F"));

    let r = http(
        port,
        "POST",
        &path,
        &[],
        r#"{"by":"Dr Khan","note":"seen, fine"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["alert_id"], alert_id.as_str());
    assert_eq!(r.json()["by"], "Dr Khan");
    let acks = watcher.until(Duration::from_secs(5), "ack", |e| {
        e.data["alert_id"] == alert_id.as_str()
    });
    assert_eq!(acks.last().unwrap().data["note"], "seen, fine");
    let state = get(port, "/api/state").json();
    let fed = state["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["alert_id"] == alert_id.as_str());
    assert_eq!(
        fed.expect("alert still in the feed")["acks"][0]["by"],
        "Dr Khan"
    );

    // Bad input is refused with a reason.
    let r = http(port, "POST", &path, &[], r#"{"by":""}"#);
    assert_eq!((r.status, r.body.as_str()), (400, "by: 1-64 characters"));
    assert_eq!(
        http(port, "POST", "/api/alerts/ack", &[], r#"{"by":"x"}"#).status,
        404
    );
    assert_eq!(
        http(port, "POST", "/api/alerts//ack", &[], r#"{"by":"x"}"#).status,
        400
    );
    let long_note = format!(r#"{{"by":"x","note":"{}"}}"#, "n".repeat(501));
    assert_eq!(http(port, "POST", &path, &[], &long_note).status, 400);

    // An unknown (older) alert id is accepted; kill -9 right after its 200.
    let r = http(
        port,
        "POST",
        "/api/alerts/demo%2Fold%2F1/ack",
        &[],
        r#"{"by":"Analyst"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    gw.kill9();
    let gw = start(dir.path(), free_port(), 500, 0.02, &[]);
    let store = dir.path().join("store");
    let found = common::services::wait_until(Duration::from_secs(30), || {
        let acks = rows(&store, "alert_acks");
        acks.iter()
            .any(|r| s(r, "alert_id") == "demo/old/1" && s(r, "by") == "Analyst")
            && acks
                .iter()
                .any(|r| s(r, "alert_id") == alert_id && s(r, "note") == "seen, fine")
    });
    assert!(
        found,
        "acks not in alert_acks after kill -9 and restart: {:?}; log:\n{}",
        rows(&store, "alert_acks"),
        gw.log.all().join("\n")
    );
    let acks = rows(&store, "alert_acks");
    assert_eq!(
        acks.iter()
            .filter(|r| s(r, "alert_id") == "demo/old/1")
            .count(),
        1,
        "written once: {acks:?}"
    );
    drop(gw);
}

#[test]
fn pause_and_resume_answer_and_reach_every_console() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let gw = start(dir.path(), port, 100, 0.0, &[]);
    let watcher = Events::open(port, &[]);
    let r = http(port, "POST", "/api/health/pause", &[], "");
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.json()["paused"].is_boolean());
    watcher.until(Duration::from_secs(5), "health", |_| true);
    let r = http(port, "POST", "/api/health/resume", &[], "");
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["paused"], false);
    // A page elsewhere cannot post through the operator's browser.
    let r = http(
        port,
        "POST",
        "/api/health/pause",
        &[("Origin", "http://evil.example")],
        "",
    );
    assert_eq!(r.status, 403);
    drop(gw);
}

#[test]
fn a_token_is_required_when_configured_even_on_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let tf = token_file(dir.path());
    let gw = start(
        dir.path(),
        port,
        100,
        0.0,
        &[("console", "token_file", &tf)],
    );
    for path in ["/", "/app.js", "/api/state", "/api/events"] {
        let r = get(port, path);
        assert_eq!((r.status, r.body.as_str()), (401, "unauthorized"), "{path}");
    }
    let r = http(port, "POST", "/api/alerts/x/ack", &[], r#"{"by":"a"}"#);
    assert_eq!(r.status, 401);
    let wrong = http(
        port,
        "GET",
        "/api/state",
        &[("Authorization", "Bearer s3cret-token-0123456789abcdeX")],
        "",
    );
    assert_eq!(wrong.status, 401);
    let (k, v) = bearer();
    assert_eq!(http(port, "GET", "/api/state", &[(k, &v)], "").status, 200);
    Events::open(port, &[(k, &v)]);

    // ?token= once: the cookie, and the address bar loses the token.
    let login = get(port, &format!("/?token={TOKEN}"));
    assert_eq!(login.status, 303);
    assert_eq!(login.header("location").as_deref(), Some("/"));
    let cookie = login.header("set-cookie").unwrap();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    let pair = cookie.split(';').next().unwrap().to_string();
    assert_eq!(
        http(port, "GET", "/api/state", &[("Cookie", &pair)], "").status,
        200
    );
    assert_eq!(get(port, "/?token=wrong-token-0123456789").status, 401);

    let unauthorized = gw.metric("pitchside_console_unauthorized_total");
    assert_eq!(
        unauthorized, 7.0,
        "four GETs, a POST, a wrong bearer, a wrong ?token="
    );
    let log = gw.stop();
    assert!(!log.contains(TOKEN), "the token is never logged");
}

#[test]
fn oversized_heads_and_bodies_and_one_client_too_many_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let gw = start(
        dir.path(),
        port,
        100,
        0.0,
        &[("console", "max_clients", "2")],
    );
    let big = "x".repeat(9 * 1024);
    assert_eq!(
        http(port, "GET", "/api/state", &[("X-Big", &big)], "").status,
        431
    );
    let body = format!(r#"{{"by":"{}"}}"#, "b".repeat(5000));
    assert_eq!(
        http(port, "POST", "/api/alerts/a/ack", &[], &body).status,
        413
    );

    // Odd paths and queries are answered, never crash the gateway.
    for (method, path) in [
        ("POST", "/api/alerts/%/ack"),
        ("POST", "/api/alerts/%zz/ack"),
        ("GET", "/?token"),
        ("GET", "/?token=%zz"),
        ("GET", "/?token="),
        ("GET", "//api/state"),
        ("POST", "/api/health/"),
    ] {
        let r = http(port, method, path, &[], "");
        assert!(
            (200..500).contains(&r.status),
            "{method} {path}: {}",
            r.status
        );
    }
    let _a = Events::open(port, &[]);
    let _b = Events::open(port, &[]);
    let r = get(port, "/api/events");
    assert_eq!(r.status, 503, "{}", r.body);
    assert_eq!(gw.metric("pitchside_console_clients"), 2.0);
    drop(_a);
    // The slot is free again once the hub notices (at the next event).
    let free = common::services::wait_until(Duration::from_secs(5), || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        s.write_all(request_text(port, "GET", "/api/events", &[], "").as_bytes())
            .unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
    });
    assert!(free, "a closed stream's slot is not reused");
    drop(_b);
    // Ten times the bound of streams, opened and closed two at a time: every
    // one is served, none is left counted.
    for _ in 0..10 {
        let free = common::services::wait_until(Duration::from_secs(5), || {
            gw.metric("pitchside_console_clients") == 0.0
        });
        assert!(free, "closed streams still counted");
        let (a, b) = (Events::open(port, &[]), Events::open(port, &[]));
        a.until(Duration::from_secs(5), "state", |_| true);
        b.until(Duration::from_secs(5), "state", |_| true);
    }

    // A client that sends half a head is cut off after the header timeout.
    let mut slow = TcpStream::connect(("127.0.0.1", port)).unwrap();
    slow.write_all(b"GET /api/state HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let t = Instant::now();
    let mut rest = Vec::new();
    let _ = slow.read_to_end(&mut rest);
    assert!(
        t.elapsed() < Duration::from_secs(8),
        "held {:?}",
        t.elapsed()
    );
    assert!(!String::from_utf8_lossy(&rest).contains("200 OK"));
    drop(gw);
}

/// Inputs the pipeline took over `secs` seconds, per second.
fn input_rate(gw: &Gateway, secs: u64) -> f64 {
    let a = gw.metric("pitchside_input_rows_total");
    std::thread::sleep(Duration::from_secs(secs));
    (gw.metric("pitchside_input_rows_total") - a) / secs as f64
}

#[test]
fn a_client_that_stops_reading_is_dropped_and_the_pipeline_keeps_its_pace() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let gw = start(dir.path(), port, 4000, 0.05, &[]);
    let reader = Events::open(port, &[]);
    let mut got = reader.until(Duration::from_secs(30), "alert", |_| true);
    let before = input_rate(&gw, 5);

    // Connects with a small receive buffer and never reads.
    let sock = common::console::stalled_stream(port);
    let stalled_at = Instant::now();
    gw.wait_metric(
        "pitchside_console_clients_dropped_total",
        1.0,
        Duration::from_secs(120),
    );
    let dropped_after = stalled_at.elapsed();
    let during = input_rate(&gw, 5);
    eprintln!(
        "inputs/s without a stalled client: {before:.0}; with one (dropped after {dropped_after:?}): {during:.0}"
    );
    assert!(
        during >= before * 0.8,
        "pipeline slowed: {before:.0}/s then {during:.0}/s"
    );
    // The reading client was not dropped, and got every event: healthy
    // under more than ten times its queue's bound (256) of traffic.
    got.extend(reader.drain());
    got.extend(reader.until(Duration::from_secs(5), "state", |_| true));
    assert_increasing(&got);
    // Ids are one sequence over every client's messages, and a new client's
    // first `state` is its own: the stalled client's makes the one gap.
    let gaps = got.windows(2).filter(|w| w[1].id != w[0].id + 1).count();
    assert!(gaps <= 1, "the reading client missed events ({gaps} gaps)");
    assert!(got.len() > 2560, "only {} events", got.len());
    assert_eq!(gw.metric("pitchside_console_clients_dropped_total"), 1.0);
    assert!(gw
        .log
        .all()
        .iter()
        .any(|l| l.contains("Console client dropped")));
    drop(sock);
    drop(gw);
}

#[test]
fn https_with_a_self_signed_certificate() {
    if !common::services::have(&["openssl"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = common::broker::self_signed(
        dir.path(),
        "console",
        "localhost",
        &[
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
        ],
    );
    let port = free_port();
    let tf = token_file(dir.path());
    let tls = format!(
        "{{ cert = \"{}\", key = \"{}\" }}",
        cert.display(),
        key.display()
    );
    let gw = start(
        dir.path(),
        port,
        100,
        0.0,
        &[("console", "token_file", &tf), ("console", "tls", &tls)],
    );

    let mut roots = rustls::RootCertStore::empty();
    let pem = std::fs::read(&cert).unwrap();
    for c in rustls_pki_types::pem::PemObject::pem_slice_iter(&pem) {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let config = std::sync::Arc::new(config);
    let https = |path: &str, headers: &[(&str, &str)]| {
        let conn =
            rustls::ClientConnection::new(config.clone(), "localhost".try_into().unwrap()).unwrap();
        let tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut s = rustls::StreamOwned::new(conn, tcp);
        s.write_all(request_text(port, "GET", path, headers, "").as_bytes())
            .unwrap();
        let mut raw = Vec::new();
        let _ = s.read_to_end(&mut raw);
        parse(&raw)
    };
    let (k, v) = bearer();
    let r = https("/api/state", &[(k, &v)]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["venue_id"], "demo");
    assert_eq!(https("/api/state", &[]).status, 401);
    let login = https(&format!("/?token={TOKEN}"), &[]);
    assert!(
        login.header("set-cookie").unwrap().contains("; Secure"),
        "{:?}",
        login.head
    );
    // Plain HTTP on the HTTPS port gets no answer.
    let mut plain = TcpStream::connect(("127.0.0.1", port)).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    plain
        .write_all(request_text(port, "GET", "/api/state", &[(k, &v)], "").as_bytes())
        .unwrap();
    let mut raw = Vec::new();
    let _ = plain.read_to_end(&mut raw);
    assert!(!String::from_utf8_lossy(&raw).contains("200 OK"));
    drop(gw);
}
