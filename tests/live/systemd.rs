//! The service as systemd runs it: the unit file passes `systemd-analyze
//! verify` without a warning, and the daemon reports readiness and feeds the
//! watchdog over `NOTIFY_SOCKET`.

use crate::common;

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
    // `systemctl reload` sends SIGHUP, which reloads the config (tests/signals.rs).
    assert!(unit.contains("ExecReload=/bin/kill -HUP $MAINPID"));
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

#[test]
fn run_takes_its_board_from_the_environment_the_dropin_sets() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let cfg = fast_config(dir.path(), port, "[sources.simulator]\nrate = 50\n");
    // A board whose defaults cannot fit its memory: `run` must refuse to start,
    // which shows that it read the board named by PITCHSIDE_BOARD.
    let board = dir.path().join("tiny.toml");
    std::fs::write(
        &board,
        "[board]\nname = \"Tiny\"\ntarget = \"aarch64-unknown-linux-gnu\"\nserial_device = \"/dev/serial0\"\nram = \"512MiB\"\nmemory_max = \"64MiB\"\nmodels = [\"Tiny\"]\n[defaults.detector]\nmax_keys = 100000\n",
    )
    .unwrap();
    let mut child = common::bin()
        .args(["run", "--config"])
        .arg(&cfg)
        .env("PITCHSIDE_BOARD", &board)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > end {
            child.kill().unwrap();
            panic!("pitchside run ignored PITCHSIDE_BOARD and kept running");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "started despite the board: {err}");
    assert!(err.contains("Tiny") && err.contains("memory_max"), "{err}");

    // The drop-in for a detected board sets exactly that variable.
    let model = dir.path().join("model");
    std::fs::write(&model, b"Raspberry Pi Zero 2 W Rev 1.0\0").unwrap();
    let o = common::bin()
        .args(["service-dropin", "--boards-dir"])
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/boards"))
        .arg("--model-file")
        .arg(&model)
        .output()
        .unwrap();
    let dropin = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dropin.contains("\nMemoryMax=201326592\n"), "{dropin}");
    assert!(
        dropin.contains("PITCHSIDE_BOARD=") && dropin.contains("/boards/pi-zero-2w.toml\"\n"),
        "{dropin}"
    );
}
