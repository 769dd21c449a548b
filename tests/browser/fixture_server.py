"""Serves the console page on a fixed state doc, for layout checks that must
not depend on live data: the three assets straight from crates/pitchside-gateway/src/console/assets,
GET /api/state = fixtures/state.json, and GET /api/events sending that doc as
a `state` event every second (the API answers 503 while a test holds it). Nothing else (no acks, no pause): the live
behaviour is tested against the real gateway in test_console_live.py.

Run by hand to look at the page: `python3 tests/browser/fixture_server.py [port]`.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ASSETS = REPO / "crates" / "pitchside-gateway" / "src" / "console" / "assets"
FIXTURE = HERE / "fixtures" / "state.json"
TYPES = {"/": ("index.html", "text/html; charset=utf-8"),
         "/app.js": ("app.js", "text/javascript; charset=utf-8"),
         "/style.css": ("style.css", "text/css; charset=utf-8")}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?")[0]
        if path in TYPES:
            name, ctype = TYPES[path]
            self._send(200, (ASSETS / name).read_bytes(), ctype)
        elif path == "/api/state":
            self._send(200, FIXTURE.read_bytes(), "application/json")
        elif path.startswith("/api/") and self.server.holding.is_set():
            self._send(503, b"held", "text/plain")
        elif path == "/api/events":
            self._events()
        else:
            self._send(404, b"not found", "text/plain")

    def _events(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        seq = 0
        try:
            while not (self.server.stopping.is_set() or self.server.holding.is_set()):
                seq += 1
                doc = json.dumps(json.loads(FIXTURE.read_text()))
                self.wfile.write(f"id: {seq}\nevent: state\ndata: {doc}\n\n".encode())
                self.wfile.flush()
                self.server.stopping.wait(1.0)
        except (BrokenPipeError, ConnectionResetError):
            pass


class FixtureServer:
    """The server on a free 127.0.0.1 port, in a thread."""

    def __init__(self, port: int = 0):
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.stopping = threading.Event()
        # Set: open event streams end and the API answers 503, as while a gateway restarts.
        self.httpd.holding = threading.Event()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def hold_events(self, on: bool) -> None:
        """Ends every event stream and answers the API with 503 (on), or serves it again."""
        if on:
            self.httpd.holding.set()
        else:
            self.httpd.holding.clear()

    def close(self) -> None:
        self.httpd.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


if __name__ == "__main__":
    server = FixtureServer(int(sys.argv[1]) if len(sys.argv) > 1 else 8089)
    print(f"console page on the fixture: {server.url}/")
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.close()
