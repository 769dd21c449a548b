//! `pitchside status --watch` through the real binary against a running
//! `pitchside run`: on a pipe it prints one block per interval, a blank line
//! between; it keeps going while the gateway is away; it ends quietly when
//! the reader goes.

use crate::common;

use common::services::*;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Stdio};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);

/// `status --watch --interval 300ms` on `addr`, its stdout piped.
fn watch(addr: &str) -> Child {
    bin()
        .args(["status", "--watch", "--interval", "300ms", "--addr", addr])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The next block (lines up to a blank line) from `out`.
fn block(out: &mut BufReader<ChildStdout>) -> Vec<String> {
    let mut lines = Vec::new();
    loop {
        let mut l = String::new();
        assert!(
            out.read_line(&mut l).unwrap() > 0,
            "stdout ended: {lines:?}"
        );
        let l = l.trim_end_matches('\n').to_string();
        if l.is_empty() {
            return lines;
        }
        lines.push(l);
    }
}

/// The number of inputs on a block's `input` line.
fn inputs(block: &[String]) -> f64 {
    let line = block.iter().find(|l| l.starts_with("input ")).unwrap();
    let n = line.split("; ").nth(1).unwrap().split(' ').next().unwrap();
    n.parse().unwrap()
}

#[test]
fn watch_prints_a_block_per_interval_on_a_pipe_until_the_reader_goes() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = fast_config(
        dir.path(),
        port,
        "[sources.simulator]\nrate = 200\nanomaly_rate = 0.0\nfatigue_rate = 0.0\n",
    );
    let gw = Gateway::start(&cfg, port, &[]);
    gw.wait_metric("pitchside_input_rows_total", 1.0, T);

    let mut child = watch(&format!("127.0.0.1:{port}"));
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let t0 = Instant::now();
    let first = block(&mut out);
    let second = block(&mut out);
    let took = t0.elapsed();
    // A later block shows a fresh reading (the counters move every 200 ms).
    let mut later = second.clone();
    for _ in 0..10 {
        if inputs(&later) > inputs(&first) {
            break;
        }
        later = block(&mut out);
    }
    for b in [&first, &second] {
        assert!(b[0].starts_with("pitchside status  127.0.0.1:"), "{b:?}");
        assert_eq!(b[1], "health      ok", "{b:?}");
        assert!(
            !b.concat().contains('\x1b'),
            "no screen control on a pipe: {b:?}"
        );
    }
    assert!(
        inputs(&later) > inputs(&first),
        "a later block is a fresh reading: {first:?} {later:?}"
    );
    assert!(
        took >= Duration::from_millis(250),
        "one interval apart: {took:?}"
    );

    // The reader goes: the next write ends the command quietly.
    drop(out);
    let end = Instant::now() + T;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < end,
            "status --watch did not end after its reader went"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(0));
    gw.stop();
}

#[test]
fn watch_keeps_asking_a_gateway_that_is_not_there() {
    let mut child = watch(&format!("127.0.0.1:{}", free_port()));
    let mut out = BufReader::new(child.stdout.take().unwrap());
    for _ in 0..2 {
        let b = block(&mut out);
        assert!(b[1].starts_with("error: cannot reach the gateway"), "{b:?}");
    }
    assert!(child.try_wait().unwrap().is_none(), "still watching");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn an_interval_under_100ms_is_refused() {
    let o = bin()
        .args(["status", "--watch", "--interval", "10ms"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("at least 100ms"));
}

#[test]
fn on_a_terminal_watch_clears_the_screen_and_redraws() {
    if !have(&["script"]) {
        return;
    }
    // script(1) gives the command a pseudo-terminal as its stdout.
    let cmd = format!(
        "{} status --watch --interval 200ms --addr 127.0.0.1:{}",
        env!("CARGO_BIN_EXE_pitchside"),
        free_port()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qefc", &cmd, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = Lines::capture(child.stdout.take().unwrap());
    let redrawn = wait_until(T, || lines.count("\x1b[H\x1b[2Jpitchside status") >= 2);
    let _ = child.kill();
    let _ = child.wait();
    assert!(redrawn, "{:?}", lines.all());
}
