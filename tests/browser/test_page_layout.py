"""The console page on a fixed state doc (fixtures/state.json, served by
fixture_server.py): size, no outside requests, the DOM contract, a 768 px
tablet in large type, and what it shows while the gateway is unreachable.
Live behaviour (alerts, acks, silence, auth) is in test_console_live.py and
test_console_auth.py, against the real gateway."""

from __future__ import annotations

import json
import re

from fixture_server import ASSETS, FIXTURE

STATE = json.loads(FIXTURE.read_text())


def load(page, server):
    page.goto(server.url + "/")
    page.wait("document.querySelectorAll('#players .player').length > 0", 10, "players drawn")
    page.wait("document.getElementById('conn').innerText === 'live'", 10, "live")


def test_the_assets_are_under_48_kib_and_name_no_other_host():
    sizes = {p.name: p.stat().st_size for p in ASSETS.iterdir()}
    assert set(sizes) == {"index.html", "app.js", "style.css"}, sizes
    # 40 KiB until the player load view (zones, sorting, a player's detail)
    # brought them to 42.9 KiB, uncompressed: still one round trip on venue Wi-Fi.
    assert sum(sizes.values()) < 48 * 1024, sizes
    for p in ASSETS.iterdir():
        text = p.read_text()
        assert not re.search(r"https?://|(src|href|url\()\s*=?\s*['\"(]?//", text), f"{p.name} names another host"
        assert "innerHTML" not in text, f"{p.name}: gateway text goes into textContent only"


def test_the_page_asks_only_its_own_gateway(page, fixture_page_server):
    load(page, fixture_page_server)
    urls = page.requests()
    assert urls, "no requests seen"
    outside = [u for u in urls if not (u.startswith(fixture_page_server.url + "/") or u.startswith("data:"))]
    assert not outside, outside
    paths = {u[len(fixture_page_server.url):].split("?")[0] for u in urls if u.startswith("http")}
    # The browser may also ask for /favicon.ico (none: a 404 from the gateway itself).
    assert paths - {"/favicon.ico"} == {"/", "/app.js", "/style.css", "/api/state", "/api/events"}, paths


def test_a_768_px_tablet_gets_large_type_and_no_sideways_scroll(page, fixture_page_server):
    load(page, fixture_page_server)
    assert page.eval("document.documentElement.scrollWidth") <= 768
    assert page.eval("parseFloat(getComputedStyle(document.body).fontSize)") >= 18
    small = page.eval("""[...document.querySelectorAll('body *')]
        .filter(e => e.offsetParent !== null && [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim()))
        .filter(e => parseFloat(getComputedStyle(e).fontSize) < 16)
        .map(e => e.className + ': ' + e.textContent.trim().slice(0, 30))""")
    assert not small, f"text under 16 px: {small}"
    # Touch targets: every button at least 44 px tall.
    low = page.eval("""[...document.querySelectorAll('button')].filter(b => b.offsetParent !== null)
        .filter(b => b.getBoundingClientRect().height < 44).map(b => b.textContent)""")
    assert not low, low


def test_the_fixture_doc_fills_every_part_of_the_dom_contract(page, fixture_page_server):
    load(page, fixture_page_server)
    ids = page.eval("[...document.querySelectorAll('#players .player')].map(e => +e.dataset.playerId)")
    assert ids == [p["player_id"] for p in STATE["players"]]
    first = page.eval("""(() => { const p = document.querySelector('#players .player[data-player-id="7"]');
        return {text: p.innerText, hr: p.querySelector('.hr').innerText, since: p.querySelector('.since').innerText,
                alerts: p.querySelector('.badge.alert-count').innerText, fatigue: p.querySelector('.badge.fatigue').innerText}; })()""")
    assert "P. Cummins" in first["text"] and "#7" in first["text"], first
    assert first["hr"].startswith("146") and "bpm" in first["hr"], first
    assert re.fullmatch(r"\d+ s ago", first["since"]), first
    assert first["alerts"] == "2 alerts" and first["fatigue"] == "FATIGUE", first
    silent = page.eval("[...document.querySelectorAll('#players .player.silent')].map(e => [e.dataset.playerId, e.innerText])")
    assert [s[0] for s in silent] == ["3"] and "SILENT" in silent[0][1], silent
    assert "SILENT" not in page.text('#players .player[data-player-id="1"]')

    assert "132.1" in page.text("#pitch") and "2100" in page.text("#pitch")
    zones = page.eval("[...document.querySelectorAll('#crowd .zone')].map(e => [e.dataset.zoneId, e.innerText])")
    assert [z[0] for z in zones] == ["north", "south", "east", "west"]
    assert "98.2" in zones[0][1] and "dB" in zones[0][1]

    feed = page.eval("""[...document.querySelectorAll('#alerts .alert')].map(e => ({id: e.dataset.alertId,
        who: e.querySelector('.who').innerText, what: e.querySelector('.what').innerText,
        acked: [...e.querySelectorAll('.acked')].map(a => a.innerText), button: !!e.querySelector('button.ack')}))""")
    assert [a["id"] for a in feed] == [a["alert_id"] for a in STATE["alerts"]], "newest first, as the gateway sends"
    assert feed[0]["who"] == "P. Cummins #7" and feed[0]["what"].startswith("Heart rate 196 bpm")
    assert feed[1]["who"] == "Zone east" and feed[3]["who"] == "pitch hawk-1"
    assert "delivery 214" in feed[3]["what"]
    assert all(a["button"] for a in feed)
    assert feed[5]["acked"] and feed[5]["acked"][0].startswith("Seen by Dr Khan"), feed[5]
    assert not any(a["acked"] for a in feed[:5])

    devices = page.eval("[...document.querySelectorAll('#devices .device')].map(e => [e.dataset.deviceId, e.className, e.innerText])")
    assert devices[0][0] == "band-03" and "silent" in devices[0][1] and "SILENT" in devices[0][2], devices[0]
    assert all("SILENT" not in d[2] for d in devices[1:])
    assert len(devices) == len(STATE["devices"])
    gw = page.text("#gateway")
    for word in ("Sources", "all up", "200 readings/s", "3 files", "12.1 KiB", "40 done", "wearable 5.1 s"):
        assert word in gw, (word, gw)
    assert page.text("#pause") == "Pause health"
    assert page.eval("document.getElementById('paused-banner').hidden")


def test_without_the_gateway_the_page_says_reconnecting_and_its_readings_age(page, fixture_page_server):
    load(page, fixture_page_server)
    fixture_page_server.hold_events(True)
    try:
        page.wait("document.getElementById('conn').innerText === 'reconnecting…'", 8, "reconnecting…")
        # The silent strap was 20.5 s old in the last doc; the page keeps counting.
        page.wait("""parseInt(document.querySelector('#players .player[data-player-id="3"] .since').innerText) >= 23""",
                  8, "the time since the last reading counted on between state events")
    finally:
        fixture_page_server.hold_events(False)
    page.wait("document.getElementById('conn').innerText === 'live'", 15, "live again")
