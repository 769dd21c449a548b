"""Player load on the console (SPEC §11, docs/src/player-load.md): each player's
zone now in words and colour, the match's load against the roster's target,
sprints and distance; sorting; a player's last minutes; a load rule's alert in
the feed. Saves docs/src/images/console-load.png (the book shows it)."""

from __future__ import annotations

import re
import time

import pytest

from gateway import DOCS, Gateway

ZONES = ["Very light", "Light", "Moderate", "Hard", "Maximum"]


@pytest.fixture(scope="module")
def gateway(pitchside_bin, tmp_path_factory):
    work = tmp_path_factory.mktemp("load")
    roster = work / "roster.csv"
    roster.write_text("player_id,name,position,hr_max,target_trimp\n1,Asha,keeper,190,40\n2,Bruno,mid,180,\n")
    extra = f"""
[load]
roster = "{roster}"

[[load.rules]]
name = "any-effort"
watch = "hr_pct"
at_least = 10
"""
    # One-second windows: a player's last minutes fill within seconds.
    g = Gateway(pitchside_bin, work, anomaly_rate=0.0, window="1s", extra=extra)
    yield g
    g.close()


def cards(page):
    """The player cards, no-break spaces as plain ones."""
    return page.eval("""[...document.querySelectorAll('#players .player')].map(e => ({
        id: Number(e.dataset.playerId), zone: e.querySelector('.zone').innerText,
        zcls: e.querySelector('.zone').className, load: e.querySelector('.load').innerText,
        bar: !e.querySelector('.bar').hidden, run: e.querySelector('.run').innerText}))
        .map(c => ({...c, zone: c.zone.replace(/\u00a0/g, ' '), load: c.load.replace(/\u00a0/g, ' '),
                    run: c.run.replace(/\u00a0/g, ' ')}))""")


def open_console(page, gateway):
    page.goto(gateway.url + "/")
    page.wait("document.querySelectorAll('#players .player .zone:not([hidden])').length >= 6", 20,
              "six players with a zone")


def test_each_player_shows_the_zone_in_words_and_colour_and_the_load_against_the_target(page, gateway):
    open_console(page, gateway)
    time.sleep(2)
    state = {p["player_id"]: p for p in gateway.state()["players"]}
    for c in cards(page):
        load = state[c["id"]]["load"]
        z = load["zone"]
        if z:
            assert c["zone"].startswith(f"Zone {z} · {ZONES[z - 1]}"), c
        assert re.search(r"\bz[0-5]\b", c["zcls"]), c
        assert re.fullmatch(r"\d+ sprints? · \d+\.\d km · HSR \d+ m", c["run"]), c
        assert c["load"].startswith("Load "), c
    asha = next(c for c in cards(page) if c["id"] == 1)
    assert re.fullmatch(r"Load \d+ of 40 \(\d+ %\)", asha["load"]), asha
    assert asha["bar"], "a target draws the bar"
    bruno = next(c for c in cards(page) if c["id"] == 2)
    assert re.fullmatch(r"Load \d+", bruno["load"]) and not bruno["bar"], bruno
    assert page.eval("document.documentElement.scrollWidth") <= 768


def sort_by(page, key):
    page.eval("(() => { const s = document.getElementById('player-sort'); s.value = '%s';"
              " s.dispatchEvent(new Event('change')); })()" % key)


def test_players_sort_by_sprints_load_and_name(page, gateway):
    open_console(page, gateway)
    # Each order is checked against the figures the page shows, drawn from
    # the same state it sorted.
    sort_by(page, "sprints")
    sprints = [int(c["run"].split()[0]) for c in cards(page)]
    assert sprints == sorted(sprints, reverse=True), sprints
    sort_by(page, "load")
    load = [int(re.match(r"Load (\d+)", c["load"]).group(1)) for c in cards(page)]
    assert load == sorted(load, reverse=True), load
    sort_by(page, "name")
    names = page.eval("[...document.querySelectorAll('#players .player .pname')].map(e => e.innerText)")
    assert names == sorted(names, key=str.lower), names
    sort_by(page, "id")
    ids = [c["id"] for c in cards(page)]
    assert ids == sorted(ids), ids


def test_a_players_detail_shows_the_last_minutes_and_closes_with_escape(page, gateway):
    open_console(page, gateway)
    page.wait("(() => { const s = document.querySelector('#players .player[data-player-id=\"1\"]'); return !!s; })()",
              10, "player 1 drawn")
    page.eval("document.querySelector('#players .player[data-player-id=\"1\"]').click()")
    page.wait("!document.getElementById('player-panel').hidden", 5, "the detail opened")
    # One-second windows: ten of them within seconds, and never more.
    page.wait("document.querySelectorAll('#pd-recent tr').length === 10", 30, "ten windows")
    time.sleep(2.5)
    assert page.count("#pd-recent tr") == 10
    assert page.text("#pd-name").startswith("Asha #1 · keeper")
    rows = page.eval("[...document.querySelectorAll('#pd-recent tr')].map(r => [...r.children].map(c => c.innerText))")
    for r in rows:
        assert re.fullmatch(r"\d\d:\d\d:\d\d", r[0]), r
        assert len(r[1].split(" · ")) == 5, r
    assert [r[0] for r in rows] == sorted((r[0] for r in rows), reverse=True), "newest first"
    page.eval("window.scrollTo(0, 0)")
    page.screenshot(DOCS / "console-load.png")
    page.eval("document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape'}))")
    page.wait("document.getElementById('player-panel').hidden", 5, "closed")


def test_a_load_rule_alert_is_in_the_feed_with_its_rule(page, gateway):
    open_console(page, gateway)
    page.wait("[...document.querySelectorAll('#alerts .alert.kind-load')].length > 0", 10, "a load alert")
    first = page.eval("""(() => { const e = document.querySelector('#alerts .alert.kind-load');
        return {tag: e.querySelector('.tag').innerText, what: e.querySelector('.what').innerText}; })()""")
    assert first["tag"] == "LOAD", first
    assert "rule any-effort" in first["what"] and "% of HRmax" in first["what"], first
