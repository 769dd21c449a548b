"""A real `pitchside run` for the console tests: the simulator with a high
anomaly rate, one serial port (a pseudo-terminal made by `socat`) the test
writes wearable lines to, `[health] silent_after = "2s"`, and the console on
a free 127.0.0.1 port, optionally with a token. Its log goes to a file in the
work folder; failures quote the end of it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs" / "src" / "images"
VENUE = "testvenue"
# Requests go straight to 127.0.0.1, whatever *_proxy says.
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
GATEWAY = "gw-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def now_ms() -> int:
    return int(time.time() * 1000)


class Pty:
    """`socat` copying what the test writes to a pseudo-terminal linked at `link`."""

    def __init__(self, link: Path):
        self.link = link
        self.proc = subprocess.Popen(["socat", "-u", "STDIN", f"PTY,raw,echo=0,link={link}"],
                                     stdin=subprocess.PIPE, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 5
        while not link.exists():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"socat made no pty at {link}")
            time.sleep(0.02)

    def write(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def wearable(self, device: str, player: int, name: str, heart_rate: float, at_ms: int) -> None:
        """One wearable reading of `device` worn by `player`."""
        self.write(json.dumps({"sensor": "wearable", "device_id": device, "event_time": at_ms, "player_id": player,
                               "player_name": name, "heart_rate": heart_rate}) + "\n")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


class Gateway:
    """`pitchside run` in `work`, console on `port` (a free one unless given)."""

    def __init__(self, binary: Path, work: Path, *, token: str | None = None, port: int | None = None,
                 anomaly_rate: float = 0.005, window: str = "1m", extra: str = ""):
        self.binary, self.work, self.token = binary, work, token
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.tty = work / "ttyBAND"
        self.config = work / "pitchside.toml"
        token_line = ""
        if token:
            (work / "console.token").write_text(token + "\n")
            token_line = f'token_file = "{work / "console.token"}"\n'
        self.config.write_text(f"""
[venue]
id = "{VENUE}"
gateway_id = "{GATEWAY}"

[detector]
window = 100
threshold = 3.5
min_baseline = 10

[windows]
size = "{window}"
watermark_delay = "5s"

[output]
store = "file://{work / 'store'}"
spool_dir = "{work / 'spool'}"
flush_interval = "2s"

[metrics]
listen = ""

[health]
silent_after = "2s"

[console]
listen = "127.0.0.1:{self.port}"
{token_line}
[sources.simulator]
rate = 60
players = 6
pitch_devices = 1
crowd_zones = 2
generic_devices = 1
anomaly_rate = {anomaly_rate}
fatigue_rate = 0.05
match_id = 1
seed = 7

[[sources.serial]]
path = "{self.tty}"
sensor = "wearable"
{extra}""")
        self.pty = Pty(self.tty)
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        """Starts the process and waits until the console answers."""
        self.log = self.work / f"pitchside-{int(time.time() * 1000)}.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen([str(self.binary), "run", "--config", str(self.config)], stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env={**os.environ, "PITCHSIDE_LOG": "info"})
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"pitchside run exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                status, _ = self.get("/api/state")
                if status == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the console on {self.url} did not answer within 60 s:\n{self.log_tail()}")
            time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM, then waits for the drain."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def close(self) -> None:
        self.stop()
        self.pty.close()

    def log_tail(self, n: int = 4000) -> str:
        try:
            return self.log.read_bytes()[-n:].decode(errors="replace")
        except OSError:
            return "(no log)"

    def request(self, method: str, path: str, body: dict | None = None, auth: bool = True,
                headers: dict | None = None) -> tuple[int, bytes]:
        """(status, body) of one request; with the bearer token when `auth` and there is one."""
        h = dict(headers or {})
        if auth and self.token:
            h["Authorization"] = f"Bearer {self.token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=h)
        try:
            with NO_PROXY.open(req, timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def get(self, path: str, auth: bool = True) -> tuple[int, bytes]:
        return self.request("GET", path, auth=auth)

    def state(self) -> dict:
        status, body = self.get("/api/state")
        assert status == 200, f"GET /api/state: {status} {body[:300]!r}"
        return json.loads(body)
