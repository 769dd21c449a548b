"""The console against a real `pitchside run` (simulator + one serial strap the
test writes to): players, an alert arriving live, an ack crossing from one
tablet to another, a strap going silent and coming back, the half-time pause,
and a gateway restart. Saves docs/src/images/console.png and console-alert.png (the book shows them)."""

from __future__ import annotations

import json
import re
import time

from gateway import DOCS, Gateway, now_ms

ALERTS = "#alerts .alert"


def open_console(page, gateway):
    page.goto(gateway.url + "/")
    page.wait("document.querySelectorAll('#players .player').length > 0", 15, "players drawn")
    page.wait("document.getElementById('conn').innerText === 'live'", 15, "live")
    # Set once per load: still there later means the page was never reloaded.
    page.eval("window.__loadedOnce = true")


def not_reloaded(page):
    assert page.eval("window.__loadedOnce === true"), "the page reloaded"


def baseline(gateway, device, player, name, n=15, at=None):
    """`n` steady heart-rate readings of `device` (enough for the detector's baseline)."""
    t = at or now_ms()
    for i in range(n):
        gateway.pty.wearable(device, player, name, 90 + (i % 3) - 1, t + i * 10)
    return t + n * 10


def player_sel(pid):
    return f'#players .player[data-player-id="{pid}"]'


def test_the_page_shows_every_simulated_player_with_its_readings(page, gateway):
    open_console(page, gateway)
    page.wait("document.querySelectorAll('#players .player').length >= 6", 15, "six simulated players")
    page.wait("document.querySelectorAll('#crowd .zone').length === 2", 10, "two crowd zones")
    page.wait("/\\d/.test(document.querySelector('#pitch').innerText)", 10, "a ball speed")
    time.sleep(1.5)  # a few state events: every reading filled in
    cards = page.eval("""[...document.querySelectorAll('#players .player')].map(e => ({id: e.dataset.playerId,
        name: e.querySelector('.pname').innerText, hr: e.querySelector('.hr').innerText,
        since: e.querySelector('.since').innerText}))""")
    state = gateway.state()
    expected = {str(p["player_id"]): p["player_name"] for p in state["players"]}
    for c in cards[:6]:
        assert c["id"] in expected, (c, expected)
        assert c["name"] == (expected[c["id"]] or "Player"), c
        assert re.fullmatch(r"\d+ bpm", c["hr"]), c
        assert re.fullmatch(r"\d+ s ago", c["since"]), c
    assert [int(c["id"]) for c in cards] == sorted(int(c["id"]) for c in cards), "sorted by player id"
    assert "km/h" in page.text("#pitch") and "rpm" in page.text("#pitch")
    assert all("dB" in z for z in page.eval("[...document.querySelectorAll('#crowd .zone')].map(e => e.innerText)"))
    assert page.count("#devices .device") >= 6 + 1 + 2
    assert "readings/s" in page.text("#gateway")
    assert page.eval("document.documentElement.scrollWidth") <= 768
    page.eval("window.scrollTo(0, 0)")
    page.screenshot(DOCS / "console.png")


def test_an_alert_appears_within_2_s_without_a_reload(page, gateway):
    open_console(page, gateway)
    t = baseline(gateway, "band-91", 91, "T. Inject")
    page.wait(f"document.querySelector('{player_sel(91)}')", 10, "the injected player drawn")
    before = set(page.eval(f"[...document.querySelectorAll('{ALERTS}')].map(e => e.dataset.alertId)"))
    sent = time.monotonic()
    gateway.pty.wearable("band-91", 91, "T. Inject", 210, t + 10)
    sel = f'{ALERTS}[data-alert-id*="/band-91/heart_rate/"]'
    page.wait(f"document.querySelector('{sel}')", 2.0, "the injected alert on the page within 2 s", every=0.02)
    took = time.monotonic() - sent
    not_reloaded(page)
    alert = page.eval(f"""(() => {{ const e = document.querySelector('{sel}');
        return {{who: e.querySelector('.who').innerText, what: e.querySelector('.what').innerText,
                 above: [...document.querySelectorAll('{ALERTS}')].slice(0, [...document.querySelectorAll('{ALERTS}')].indexOf(e))
                        .map(x => x.dataset.alertId)}}; }})()""")
    assert alert["who"] == "T. Inject #91", alert
    assert alert["what"].startswith("Heart rate 210 bpm, far above usual"), alert
    assert not set(alert["above"]) & before, f"an older alert stands above the new one: {alert['above']}"
    print(f"injected alert on the page after {took:.3f} s")


def test_an_ack_on_one_tablet_shows_on_another(page, second_page, gateway):
    open_console(page, gateway)
    open_console(second_page, gateway)
    page.wait(f"document.querySelector('{ALERTS}.open button.ack')", 30, "an open alert")
    alert_id = page.eval(f"document.querySelector('{ALERTS}.open').dataset.alertId")
    sel = f"{ALERTS}[data-alert-id={json.dumps(alert_id)}]"
    page.click(f"{sel} button.ack")
    page.wait("!document.getElementById('ack-panel').hidden", 3, "the ack form open")
    page.type_into("#ack-by", "Dr Test")
    page.type_into("#ack-note", "ice pack on")
    page.click("#ack-send")
    page.wait("document.getElementById('ack-panel').hidden", 5, "the form closed after a 200")
    page.wait(f"(document.querySelector('{sel} .acked') || {{}}).innerText", 3, "the ack on this tablet")
    assert page.text(f"{sel} .acked").startswith("Seen by Dr Test")
    second_page.wait(f"((document.querySelector('{sel} .acked') || {{}}).innerText || '').startsWith('Seen by Dr Test')",
                     3, "the ack on the other tablet")
    assert "ice pack on" in second_page.text(sel)
    not_reloaded(second_page)
    acks = [a["acks"] for a in gateway.state()["alerts"] if a.get("alert_id") == alert_id]
    assert acks and any(k["by"] == "Dr Test" and k["note"] == "ice pack on" for k in acks[0]), acks
    page.eval(f"document.querySelector({json.dumps(sel)}).scrollIntoView({{block: 'nearest'}}); window.scrollTo(0, 0)")
    page.screenshot(DOCS / "console-alert.png")

    # The name is remembered on this tablet only.
    page.goto(gateway.url + "/")
    ackable = f"{ALERTS}:not(.kind-device) button.ack"
    page.wait(f"document.querySelector('{ackable}')", 15, "alerts after a reload")
    page.click(ackable)
    assert page.eval("document.getElementById('ack-by').value") == "Dr Test"
    page.click("#ack-cancel")
    second_page.click(ackable)
    assert second_page.eval("document.getElementById('ack-by').value") == ""
    second_page.click("#ack-cancel")


def test_a_strap_that_stops_is_marked_silent_and_then_back(page, gateway):
    open_console(page, gateway)
    t = baseline(gateway, "band-92", 92, "S. Lent", n=3)
    card = player_sel(92)
    page.wait(f"document.querySelector('{card}')", 10, "the strap's player drawn")
    assert "SILENT" not in page.text(card)
    stopped = time.monotonic()
    page.wait(f"document.querySelector('{card}.silent')", 8, "the player marked silent (silent_after 2 s)")
    print(f"marked silent {time.monotonic() - stopped:.1f} s after its last reading")
    assert "SILENT" in page.text(card)
    row = '#devices .device.silent[data-device-id="band-92"]'
    page.wait(f"document.querySelector('{row}')", 3, "the device row marked silent")
    assert "SILENT" in page.text(row) and "S. Lent #92" in page.text(row)
    order = page.eval("[...document.querySelectorAll('#devices .device')].map(e => e.classList.contains('silent'))")
    assert order == sorted(order, reverse=True), f"silent devices are listed first: {order}"
    page.wait(f"""[...document.querySelectorAll('{ALERTS}.kind-device')]
        .some(e => e.innerText.includes('SILENT') && e.querySelector('.who').innerText.includes('#92'))""",
              3, "a SILENT entry in the feed naming the player")
    gateway.pty.wearable("band-92", 92, "S. Lent", 91, max(t, now_ms()))
    page.wait(f"!document.querySelector('{card}.silent')", 5, "the player back")
    assert "SILENT" not in page.text(card)
    page.wait(f"""[...document.querySelectorAll('{ALERTS}.kind-device')]
        .some(e => e.innerText.includes('BACK') && e.querySelector('.who').innerText.includes('#92'))""",
              3, "a BACK entry in the feed")
    not_reloaded(page)


def test_half_time_pause_and_resume_show_on_every_tablet(page, second_page, gateway):
    open_console(page, gateway)
    open_console(second_page, gateway)
    assert page.text("#pause") == "Pause health"
    page.click("#pause")
    page.wait("document.getElementById('pause').innerText === 'Resume health'", 5, "the button offering resume")
    assert not page.eval("document.getElementById('paused-banner').hidden")
    second_page.wait("!document.getElementById('paused-banner').hidden", 3, "the paused banner on the other tablet")
    assert gateway.state()["health"]["paused"] is True
    page.click("#pause")
    page.wait("document.getElementById('pause').innerText === 'Pause health'", 5, "the button offering pause again")
    second_page.wait("document.getElementById('paused-banner').hidden", 3, "the banner gone on the other tablet")
    assert gateway.state()["health"]["paused"] is False


def test_the_page_says_reconnecting_while_the_gateway_restarts(page, pitchside_bin, tmp_path):
    g = Gateway(pitchside_bin, tmp_path)
    try:
        open_console(page, g)
        g.stop()
        page.wait("document.getElementById('conn').innerText === 'reconnecting…'", 8, "reconnecting…")
        g.start()
        page.wait("document.getElementById('conn').innerText === 'live'", 20, "live after the restart")
        page.wait("document.querySelectorAll('#players .player').length > 0", 10, "players after the restart")
        not_reloaded(page)
    finally:
        g.close()
