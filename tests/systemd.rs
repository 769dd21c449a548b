//! The service as systemd runs it: the unit file passes `systemd-analyze
//! verify` without a warning, and the daemon reports readiness and feeds the
//! watchdog over `NOTIFY_SOCKET`.

mod common;

use common::services::{fast_config, free_port, have, Gateway};
use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

#[test]
fn the_unit_file_passes_systemd_analyze_verify_without_warnings() {
    if !have(&["systemd-analyze"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let unit = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/packaging/pitchside.service"
    ))
    .unwrap();
    assert!(
        unit.contains("Type=notify")
            && unit.contains("WatchdogSec=")
            && unit.contains("ProtectSystem=strict")
    );
    assert!(
        unit.contains("NoNewPrivileges=yes")
            && unit.contains("SupplementaryGroups=dialout")
            && unit.contains("StateDirectory=pitchside")
    );
    // verify checks that ExecStart exists: point it at the binary under test.
    let path = dir.path().join("pitchside.service");
    std::fs::write(
        &path,
        unit.replace("/usr/bin/pitchside", env!("CARGO_BIN_EXE_pitchside")),
    )
    .unwrap();
    let o = std::process::Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&path)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.status.success() && text.trim().is_empty(),
        "systemd-analyze verify: {text}"
    );
}

#[test]
fn the_daemon_reports_ready_and_feeds_the_watchdog() {
    let dir = tempfile::tempdir().unwrap();
    let sock_path = dir.path().join("notify.sock");
    let sock = UnixDatagram::bind(&sock_path).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let port = free_port();
    let cfg = fast_config(dir.path(), port, "[sources.simulator]\nrate = 50\n");
    let notify = sock_path.display().to_string();
    let gw = Gateway::start(
        &cfg,
        port,
        &[
            ("NOTIFY_SOCKET", notify.as_str()),
            ("WATCHDOG_USEC", "400000"),
        ],
    );
    let mut got = Vec::new();
    let end = Instant::now() + Duration::from_secs(20);
    let mut buf = [0u8; 256];
    while Instant::now() < end
        && !(got.iter().any(|m: &String| m.contains("READY=1"))
            && got.iter().filter(|m| m.contains("WATCHDOG=1")).count() >= 3)
    {
        if let Ok(n) = sock.recv(&mut buf) {
            got.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
    }
    assert!(got.iter().any(|m| m.contains("READY=1")), "{got:?}");
    assert!(
        got.iter().filter(|m| m.contains("WATCHDOG=1")).count() >= 3,
        "{got:?}"
    );
    gw.stop();
    let mut stopping = false;
    while let Ok(n) = sock.recv(&mut buf) {
        stopping |= String::from_utf8_lossy(&buf[..n]).contains("STOPPING=1");
    }
    assert!(stopping, "STOPPING=1 at shutdown");
}
