"""Fixtures of the console's browser tests: a headless chromium (Debian's
`chromium`, installed by scripts/test.sh), the pitchside binary
($PITCHSIDE_BIN, else target/debug/pitchside), and gateways to test against.

These tests never skip: a missing chromium, socat or binary is a failure that
says what to install or build.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cdp import Browser, find_chromium
from fixture_server import FixtureServer
from gateway import REPO, Gateway


@pytest.fixture(scope="session")
def browser():
    path = find_chromium()
    if path is None:
        pytest.fail("chromium not found: `apt-get install chromium` (scripts/test.sh installs it), "
                    "or set CHROMIUM to a Chrome/Chromium binary", pytrace=False)
    b = Browser(path)
    yield b
    b.close()


@pytest.fixture(scope="session")
def pitchside_bin() -> Path:
    path = Path(os.environ.get("PITCHSIDE_BIN") or REPO / "target" / "debug" / "pitchside")
    if not path.is_file():
        pytest.fail(f"no pitchside binary at {path}: run `cargo build` (or set PITCHSIDE_BIN)", pytrace=False)
    probe = subprocess.run([str(path), "run", "--help"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        pytest.fail(f"`{path} run --help` exited {probe.returncode}: {probe.stderr.decode()[-300:]}", pytrace=False)
    if shutil.which("socat") is None:
        pytest.fail("socat not found: `apt-get install socat` (scripts/test.sh installs it)", pytrace=False)
    return path


@pytest.fixture(scope="session")
def fixture_page_server():
    """The page on tests/browser/fixtures/state.json (layout checks only)."""
    s = FixtureServer()
    yield s
    s.close()


@pytest.fixture(scope="module")
def gateway(pitchside_bin, tmp_path_factory):
    """One gateway (no token) shared by a test module."""
    g = Gateway(pitchside_bin, tmp_path_factory.mktemp("gateway"))
    yield g
    g.close()


@pytest.fixture
def page(browser):
    """A tab in a fresh browser context (own cookies and localStorage), 768 × 1024."""
    ctx = browser.new_context()
    p = browser.page(ctx)
    yield p
    errors = p.errors()
    p.close()
    browser.send("Target.disposeBrowserContext", {"browserContextId": ctx})
    assert not errors, f"the page logged errors: {errors}"


@pytest.fixture
def second_page(browser):
    """Another tablet: a tab in another fresh browser context."""
    ctx = browser.new_context()
    p = browser.page(ctx)
    yield p
    p.close()
    browser.send("Target.disposeBrowserContext", {"browserContextId": ctx})
