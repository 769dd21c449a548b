//! `pitchside alerts --follow` against the real console of a running
//! `pitchside run` (simulator with anomalies, console on a free port): the
//! alerts the gateway raises are printed, as text and as JSON, and are the
//! ones in its `alerts` table; an ack made on the console is printed; the follower picks the stream up again when
//! the gateway restarts; with a token configured, a wrong token ends the
//! command with what to do and the right one (here from the gateway's own
//! config) lets it in.

use crate::common;

use common::services::*;
use common::*;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

const T: Duration = Duration::from_secs(30);

/// A gateway config: the simulator raising anomalies, the console on `console`.
fn config(dir: &Path, metrics: u16, console: u16, token_file: Option<&Path>) -> std::path::PathBuf {
    let mut c = VenueConfig::fast(dir, metrics)
        .set_str("console", "listen", format!("127.0.0.1:{console}"))
        .extra("[sources.simulator]\nrate = 400\nanomaly_rate = 0.02\nfatigue_rate = 0.0\n");
    if let Some(f) = token_file {
        c = c.set_str("console", "token_file", f.display());
    }
    c.write()
}

/// A running `pitchside alerts --follow` with `args`; its stdout and stderr lines.
struct Follower {
    child: Child,
    out: Lines,
    err: Lines,
}

impl Follower {
    fn start(args: &[&str]) -> Follower {
        let mut child = bin()
            .args(["alerts", "--follow"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = Lines::capture(child.stdout.take().unwrap());
        let err = Lines::capture(child.stderr.take().unwrap());
        Follower { child, out, err }
    }

    /// Waits for `n` stdout lines containing `text`; panics with both streams if not.
    fn wait_for(&self, text: &str, n: usize) {
        if !wait_until(T, || self.out.count(text) >= n) {
            panic!(
                "{n} × {text:?} not printed; stdout:\n{}\nstderr:\n{}",
                self.out.all().join("\n"),
                self.err.all().join("\n")
            );
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `POST /api/alerts/{alert_id}/ack` with `body` on the console; the whole answer.
fn ack(port: u16, alert_id: &str, body: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(T)).unwrap();
    let path = format!("/api/alerts/{}/ack", alert_id.replace('/', "%2F"));
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// The exit code of `child` once it ends (within [`T`]; `None` if it does not).
fn wait_exit(child: &mut Child) -> Option<i32> {
    let mut code = None;
    wait_until(T, || match child.try_wait().unwrap() {
        Some(s) => {
            code = s.code();
            true
        }
        None => false,
    });
    code
}

#[test]
fn alerts_follow_prints_the_gateways_alerts_and_picks_up_again_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (metrics, console) = (free_port(), free_port());
    let cfg = config(dir.path(), metrics, console, None);
    let gw = Gateway::start(&cfg, metrics, &[]);
    let url = format!("http://127.0.0.1:{console}");
    let text = Follower::start(&["--url", &url]);
    let json = Follower::start(&["--url", &url, "--json"]);

    text.wait_for(" ANOMALY wearable ", 1);
    let line = text.out.wait_line(" ANOMALY wearable ", T);
    let clock = &line[..8];
    assert!(
        clock.as_bytes()[2] == b':' && clock.as_bytes()[5] == b':',
        "HH:MM:SS first: {line}"
    );
    assert!(line.contains(" z=") && line.contains(" player "), "{line}");
    json.wait_for("\"kind\":\"anomaly\"", 1);
    let printed: serde_json::Value =
        serde_json::from_str(&json.out.wait_line("\"kind\":\"anomaly\"", T)).unwrap();
    let alert_id = printed["alert_id"].as_str().unwrap().to_string();

    // Someone acknowledges it on a console: both followers print the ack.
    let answer = ack(console, &alert_id, r#"{"by":"Dr Khan","note":"seen"}"#);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    text.wait_for(&format!(" ACK {alert_id} by Dr Khan: seen"), 1);
    json.wait_for("\"by\":\"Dr Khan\"", 1);

    gw.stop();
    let table = rows(&dir.path().join("store"), "alerts");
    assert!(
        table.iter().any(|r| s(r, "alert_id") == alert_id),
        "{alert_id} printed by alerts --follow is in the alerts table"
    );

    // The gateway comes back: the follower reconnects by itself.
    let before = text.out.count(" ANOMALY ");
    let gw = Gateway::start(&cfg, metrics, &[]);
    assert!(
        wait_until(T, || text.err.count("reconnected to") >= 1),
        "no reconnect: {:?}",
        text.err.all()
    );
    text.wait_for(" ANOMALY ", before + 1);
    gw.stop();
}

#[test]
fn with_a_token_a_wrong_one_is_refused_and_the_configs_own_lets_the_follower_in() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("console.token");
    std::fs::write(&token, "correct-horse-battery-staple\n").unwrap();
    let wrong = dir.path().join("wrong.token");
    std::fs::write(&wrong, "not-the-token-at-all").unwrap();
    let (metrics, console) = (free_port(), free_port());
    let cfg = config(dir.path(), metrics, console, Some(&token));
    let gw = Gateway::start(&cfg, metrics, &[]);
    gw.wait_metric("pitchside_input_rows_total", 1.0, T);

    let url = format!("http://127.0.0.1:{console}");
    let mut refused = Follower::start(&["--url", &url, "--token-file", wrong.to_str().unwrap()]);
    let status = wait_exit(&mut refused.child);
    let err = refused.err.all().join("\n");
    assert_eq!(status, Some(1), "{err}");
    assert!(
        err.contains("refused the token") && err.contains("--token-file"),
        "{err}"
    );
    assert!(!err.contains("correct-horse"), "{err}");

    let follower = Follower::start(&["--config", cfg.to_str().unwrap()]);
    follower.wait_for(" ANOMALY ", 1);
    gw.stop();
}

#[test]
fn with_a_notify_cooldown_the_console_shows_each_key_once_while_the_table_keeps_all() {
    let dir = tempfile::tempdir().unwrap();
    let (metrics, console) = (free_port(), free_port());
    let cfg = VenueConfig::fast(dir.path(), metrics)
        .set_str("console", "listen", format!("127.0.0.1:{console}"))
        .set_str("alerts", "notify_cooldown", "1h")
        .extra("[sources.simulator]\nrate = 400\nanomaly_rate = 0.2\nfatigue_rate = 0.0\n")
        .write();
    let gw = Gateway::start(&cfg, metrics, &[]);
    let json = Follower::start(&["--url", &format!("http://127.0.0.1:{console}"), "--json"]);
    json.wait_for("\"kind\":\"anomaly\"", 5);
    gw.wait_metric("pitchside_notify_suppressed_total", 20.0, T);
    let raised = gw.metric("pitchside_alerts_total");
    gw.stop();

    let keys: Vec<(String, String, String)> = json
        .out
        .all()
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "anomaly")
        .map(|v| {
            let k = |f: &str| v[f].as_str().unwrap().to_string();
            (k("sensor"), k("device_id"), k("metric"))
        })
        .collect();
    let distinct: std::collections::BTreeSet<_> = keys.iter().collect();
    assert_eq!(distinct.len(), keys.len(), "a key shown twice: {keys:?}");
    let table = rows(&dir.path().join("store"), "alerts").len() as f64;
    assert!(
        table >= raised && table > keys.len() as f64,
        "the table keeps every alert: {table} rows, {raised} raised, {} shown",
        keys.len()
    );
}

#[test]
fn over_https_the_follower_trusts_exactly_the_certificate_in_the_gateways_config() {
    if !have(&["openssl"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // As an operator makes one: self-signed (and so marked as a CA).
    let (crt, key) = common::broker::self_signed(
        dir.path(),
        "c",
        "localhost",
        &["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
    );
    let (metrics, console) = (free_port(), free_port());
    let cfg = VenueConfig::fast(dir.path(), metrics)
        .set_str("console", "listen", format!("127.0.0.1:{console}"))
        .set(
            "console",
            "tls",
            format!(
                "{{ cert = \"{}\", key = \"{}\" }}",
                crt.display(),
                key.display()
            ),
        )
        .extra("[sources.simulator]\nrate = 400\nanomaly_rate = 0.02\nfatigue_rate = 0.0\n")
        .write();
    let gw = Gateway::start(&cfg, metrics, &[]);
    let pinned = Follower::start(&["--config", cfg.to_str().unwrap()]);
    let system = Follower::start(&["--url", &format!("https://127.0.0.1:{console}")]);
    pinned.wait_for(" ANOMALY ", 1);
    assert!(
        wait_until(T, || system.err.count("certificate") >= 1),
        "without the pin the system's roots refuse it: {:?}",
        system.err.all()
    );
    assert_eq!(system.out.all().len(), 0);
    gw.stop();
}
