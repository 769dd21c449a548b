"""A small Chrome DevTools Protocol driver for the console tests.

Starts Debian's `chromium` headless (with --no-sandbox when running as root,
its profile in a temp folder, the DevTools endpoint on 127.0.0.1 only) and
talks to it over one WebSocket (`websocket-client`), with flat sessions: each
`Page` is a tab attached by session id, optionally in its own browser context
(separate cookies and localStorage, like a second tablet).
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import websocket


class CdpError(RuntimeError):
    """A DevTools command failed, or the browser went away."""


def find_chromium() -> str | None:
    """$CHROMIUM, else the first of chromium / chromium-browser on PATH."""
    if os.environ.get("CHROMIUM"):
        return os.environ["CHROMIUM"]
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless chromium process and the DevTools connection to it."""

    def __init__(self, executable: str):
        self.profile = tempfile.mkdtemp(prefix="pitchside-chromium-")
        args = [
            executable,
            "--headless",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={self.profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-gpu",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--mute-audio",
            "--password-store=basic",
            "--no-proxy-server",
            "about:blank",
        ]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")
        self.log_path = Path(self.profile) / "chromium.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        url = self._endpoint(timeout=30)
        self.ws = websocket.create_connection(url, timeout=None, suppress_origin=True, enable_multithread=True)
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._replies: dict[int, dict] = {}
        self._events: list[dict] = []
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="cdp-reader", daemon=True)
        self._reader.start()

    def _endpoint(self, timeout: float) -> str:
        """The browser's WebSocket URL, from the DevToolsActivePort file."""
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise CdpError(f"chromium exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                port, path = port_file.read_text().split("\n")[:2]
                if port and path:
                    return f"ws://127.0.0.1:{port.strip()}{path.strip()}"
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        raise CdpError(f"chromium did not open its DevTools port within {timeout} s: {self.log_tail()}")

    def log_tail(self, n: int = 3000) -> str:
        """The end of chromium's own output."""
        try:
            return self.log_path.read_bytes()[-n:].decode(errors="replace")
        except OSError:
            return ""

    def _read(self) -> None:
        while True:
            try:
                raw = self.ws.recv()
            except Exception:  # noqa: BLE001 - the socket closed: wake every waiter
                with self._lock:
                    self._closed = True
                    self._lock.notify_all()
                return
            msg = json.loads(raw)
            with self._lock:
                if "id" in msg:
                    self._replies[msg["id"]] = msg
                else:
                    self._events.append(msg)
                    del self._events[:-5000]
                self._lock.notify_all()

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30) -> dict:
        """Runs one DevTools command and returns its result."""
        msg_id = next(self._ids)
        msg: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        deadline = time.monotonic() + timeout
        with self._lock:
            while msg_id not in self._replies:
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise CdpError(f"no answer to {method} within {timeout} s (browser closed: {self._closed})")
                self._lock.wait(left)
            reply = self._replies.pop(msg_id)
        if "error" in reply:
            raise CdpError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def events(self, session: str, method: str) -> list[dict]:
        """Every event `method` seen so far on `session` (the newest 5000 of all)."""
        with self._lock:
            return [e["params"] for e in self._events if e.get("sessionId") == session and e["method"] == method]

    def wait_event(self, session: str, method: str, since: int, timeout: float) -> dict:
        """The first `method` event on `session` after the first `since` ones."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                seen = [e for e in self._events if e.get("sessionId") == session and e["method"] == method]
                if len(seen) > since:
                    return seen[since]["params"]
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    raise CdpError(f"no {method} within {timeout} s")
                self._lock.wait(left)

    def new_context(self) -> str:
        """A fresh browser context: its own cookies, cache and localStorage."""
        return self.send("Target.createBrowserContext", {"disposeOnDetach": True})["browserContextId"]

    def page(self, context: str | None = None, width: int = 768, height: int = 1024) -> "Page":
        """A new tab (in `context`, else the default one), `width` × `height`."""
        return Page(self, context, width, height)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except CdpError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.ws.close()
        self._log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """One tab, attached over a flat session."""

    def __init__(self, browser: Browser, context: str | None, width: int, height: int):
        self.browser = browser
        params: dict[str, Any] = {"url": "about:blank"}
        if context:
            params["browserContextId"] = context
        self.target = browser.send("Target.createTarget", params)["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": self.target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(f"{domain}.enable")
        self.viewport(width, height)

    def send(self, method: str, params: dict | None = None, timeout: float = 30) -> dict:
        return self.browser.send(method, params, self.session, timeout)

    def viewport(self, width: int, height: int) -> None:
        """Emulates a `width` × `height` screen (CSS pixels, scale 1)."""
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def goto(self, url: str, timeout: float = 30) -> None:
        """Loads `url` and waits for its load event."""
        loads = len(self.browser.events(self.session, "Page.loadEventFired"))
        reply = self.send("Page.navigate", {"url": url})
        if reply.get("errorText"):
            raise CdpError(f"navigating to {url}: {reply['errorText']}")
        self.browser.wait_event(self.session, "Page.loadEventFired", loads, timeout)

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression (promises awaited)."""
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise CdpError(f"{expression!r} threw: {d.get('exception', {}).get('description') or d.get('text')}")
        return r["result"].get("value")

    def wait(self, expression: str, timeout: float = 10, what: str | None = None, every: float = 0.05) -> Any:
        """Polls `expression` until it is truthy; its value, or AssertionError naming `what`."""
        deadline = time.monotonic() + timeout
        value = None
        # An element found counts as true (it has no JSON value of its own).
        probe = f"(() => {{ const v = ({expression}); return v instanceof Node ? true : v; }})()"
        while True:
            value = self.eval(probe)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"after {timeout} s still not {what or expression}: last value {value!r}; "
                                     f"page: {self.text()[:1500]!r}")
            time.sleep(every)

    def text(self, selector: str = "body") -> str:
        """innerText of the first element matching `selector` ('' if none)."""
        return self.eval(f"(document.querySelector({json.dumps(selector)}) || {{innerText: ''}}).innerText") or ""

    def count(self, selector: str) -> int:
        return self.eval(f"document.querySelectorAll({json.dumps(selector)}).length")

    def click(self, selector: str) -> None:
        """A real mouse click in the middle of the element (scrolled into view)."""
        box = self.eval(f"""(() => {{
            const el = document.querySelector({json.dumps(selector)});
            if (!el) return null;
            el.scrollIntoView({{block: 'center'}});
            const r = el.getBoundingClientRect();
            return {{x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height}};
        }})()""")
        if not box or box["w"] == 0:
            raise AssertionError(f"nothing visible to click at {selector}; page: {self.text()[:1000]!r}")
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1})

    def type_into(self, selector: str, text: str) -> None:
        """Clears the input at `selector` and types `text` as keyboard input."""
        self.eval(f"(() => {{ const el = document.querySelector({json.dumps(selector)}); el.focus(); el.select(); }})()")
        self.send("Input.insertText", {"text": text})

    def screenshot(self, path: Path) -> None:
        """The viewport as PNG at `path`."""
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def requests(self) -> list[str]:
        """URLs of every request the page has made."""
        return [e["request"]["url"] for e in self.browser.events(self.session, "Network.requestWillBeSent")]

    def errors(self) -> list[str]:
        """Uncaught exceptions and console errors on the page."""
        out = [e["exceptionDetails"].get("exception", {}).get("description") or e["exceptionDetails"].get("text", "")
               for e in self.browser.events(self.session, "Runtime.exceptionThrown")]
        out += [" ".join(str(a.get("value", a.get("description", ""))) for a in e.get("args", []))
                for e in self.browser.events(self.session, "Runtime.consoleAPICalled") if e.get("type") == "error"]
        # Content-Security-Policy violations and other browser complaints (network
        # failures are left out: a gateway restarting is expected in some tests).
        out += [f"{e['entry']['source']}: {e['entry']['text']}" for e in self.browser.events(self.session, "Log.entryAdded")
                if e["entry"]["level"] in ("error", "warning") and e["entry"]["source"] != "network"]
        return out

    def close(self) -> None:
        try:
            self.browser.send("Target.closeTarget", {"targetId": self.target}, timeout=5)
        except CdpError:
            pass


def wait_until(check: Callable[[], Any], timeout: float, what: str, every: float = 0.1) -> Any:
    """Polls `check` until truthy; its value, or AssertionError naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"after {timeout} s still not {what}")
        time.sleep(every)
