"""End to end (SPEC §11): `pitchside replay` writes `load_player_1m` and `load_alerts`,
equal row by row to the reference.

Ten minutes of a match (load_input.py: eight players and a second match at
about 1 Hz, sprints, heart rate across the zones, and the awkward cases), a
roster CSV, and two configs: every `[load]` key set with the roster and five
`[[load.rules]]` ("configured"), and no `[load]` section at all ("defaults").
The gateway's rows are compared with load_reference.py's, computed from the
same input: integers, strings, booleans and times exactly, floats to 1e-9
relative or 1e-9 absolute (load_alerts by alert_id; detected_at is the
gateway's clock). Then the rows go through the delta-rs runner and the Spark
job into `player_load_match` and `open_alerts`.

The replays need the pitchside binary (see conftest: skipped loudly without
it, failed with PITCHSIDE_REQUIRE_SERVICES=1); the checks of the scenario
itself do not.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict

import pyarrow.parquet as pq
import pytest

import load_input as li
from conftest import replay
from helpers import canonical, delta_contents, gateway_files, read_gateway_table
from load_reference import (
    LoadParams,
    Rule,
    alert_differences,
    event_time_us,
    expected_alerts,
    expected_rows,
    load_readings,
    parse_roster,
    roster_csv,
    row_differences,
    settings_for,
)
from pitchside_ingest import local_runner, spark_sinks, views
from pitchside_ingest.spark_job import JobOptions, run
from pitchside_ingest.tables import table
from test_tables import SPEC_COLUMNS, parquet_columns

TABLE = "load_player_1m"
ALERTS = "load_alerts"
CONFIGS = ("configured", "defaults")
FILE_NAME = re.compile(r"^gw-1-\d{12}\.parquet$")


@pytest.fixture(scope="module")
def scenario(tmp_path_factory) -> dict:
    """The input file and the roster file, and what the reference makes of them per config."""
    work = tmp_path_factory.mktemp("load_input")
    events = li.events()
    input_path = work / "events.jsonl"
    input_path.write_text("".join(line + "\n" for line in li.lines(events)), encoding="utf-8")
    roster_path = work / "roster.csv"
    roster_path.write_text(roster_csv(li.ROSTER, li.ROSTER_COMMENTS), encoding="utf-8")
    roster = parse_roster(roster_path.read_text(encoding="utf-8"))
    return {
        "events": events, "input": input_path, "roster_path": roster_path, "roster": roster,
        "expected": {
            "configured": expected_rows(events, roster, li.LOAD, li.WINDOWS, li.VENUE, li.GATEWAY),
            "defaults": expected_rows(events, {}, LoadParams(), li.WINDOWS, li.VENUE, li.GATEWAY),
        },
        "alerts": {
            "configured": expected_alerts(events, roster, li.LOAD, li.WINDOWS, li.VENUE, li.GATEWAY),
            "defaults": [],  # no [load], so no rules
        },
    }


@pytest.fixture(scope="module", params=CONFIGS)
def replayed(request, pitchside_bin, scenario, tmp_path_factory):
    """(config name, outbox) of one `pitchside replay --output DIR` of the scenario."""
    name = request.param
    work = tmp_path_factory.mktemp(f"load_{name}")
    load = li.LOAD if name == "configured" else None
    outbox = work / "outbox"
    replay(pitchside_bin, work, scenario["input"], outbox, venue=li.VENUE, gateway=li.GATEWAY,
           extra_config=li.config_toml(str(scenario["roster_path"]), load))
    return name, outbox


def gateway_rows(outbox) -> list[dict]:
    assert gateway_files(outbox, TABLE), (
        f"pitchside replay wrote no {TABLE} files under {outbox} (SPEC §11: one row with each "
        f"windows_wearable row); it wrote: {sorted(p.name for p in outbox.iterdir())}")
    return read_gateway_table(outbox, TABLE).to_pylist()


# ---------------------------------------------------------------- against the gateway

def test_gateway_load_rows_equal_the_reference_row_by_row(replayed, scenario):
    name, outbox = replayed
    got = gateway_rows(outbox)
    want = scenario["expected"][name]
    differences = row_differences(got, want)
    assert not differences, (
        f"{name}: {len(differences)} differences between the gateway's {len(got)} rows and the "
        f"reference's {len(want)}; the first 40:\n" + "\n".join(differences[:40]))


def test_gateway_load_alerts_equal_the_reference(replayed, scenario):
    name, outbox = replayed
    got = read_gateway_table(outbox, ALERTS).to_pylist()
    want = scenario["alerts"][name]
    differences = alert_differences(got, want)
    assert not differences, (
        f"{name}: {len(differences)} differences between the gateway's {len(got)} load alerts and the "
        f"reference's {len(want)}; the first 40:\n" + "\n".join(differences[:40]))
    if name == "defaults":
        assert not gateway_files(outbox, ALERTS)


@pytest.mark.parametrize("name", [TABLE, ALERTS])
def test_load_files_have_the_spec_schema_and_layout(replayed, name):
    config, outbox = replayed
    files = gateway_files(outbox, name)
    assert files or (config, name) == ("defaults", ALERTS)
    for path in files:
        rel = path.relative_to(outbox / name).parts
        assert rel[0] == f"venue_id={li.VENUE}" and FILE_NAME.match(rel[2]), path
        assert parquet_columns(path) == SPEC_COLUMNS[name], path
        first = min(pq.read_table(path, columns=[table(name).time_column]).column(0).to_pylist())
        assert rel[1] == f"date={first:%Y-%m-%d}", path


def test_one_load_row_with_each_windows_wearable_row(replayed):
    _, outbox = replayed

    def keys(name):
        return Counter((r["match_id"], r["player_id"], r["window_start"])
                       for r in read_gateway_table(outbox, name).to_pylist())

    load = keys(TABLE)
    assert load == keys("windows_wearable") and max(load.values()) == 1


def test_ingested_load_equals_the_gateway_rows(replayed, tmp_path):
    """delta-rs: the table holds the gateway's rows once, each in its own UTC date."""
    _, outbox = replayed
    target = tmp_path / "delta"
    result = local_runner.run(str(outbox), target, tables=[TABLE])
    rows = delta_contents(target, TABLE)
    assert result[TABLE].rows_inserted == len(rows) == len(gateway_rows(outbox))
    assert all(r["date"] == r["window_start"].date() for r in rows)
    assert canonical([{k: v for k, v in r.items() if k not in ("date", "source_file")} for r in rows]) == canonical(
        gateway_rows(outbox))
    # A second run over the same files changes nothing.
    local_runner.run(str(outbox), target, tables=[TABLE], reprocess=True)
    assert delta_contents(target, TABLE) == rows


def test_player_load_match_over_the_replay_sums_the_reference(spark, replayed, scenario, tmp_path):
    name, outbox = replayed
    target = tmp_path / "tables"
    run(spark, JobOptions(source=str(outbox), target=str(target), checkpoint=str(tmp_path / "ck"),
                          target_format="parquet", auto_loader=False, tables=(TABLE,)))
    spark_sinks.register_parquet_tables(spark, str(target))
    views.create_views(spark, temporary=True)
    want = defaultdict(lambda: defaultdict(float))
    for r in scenario["expected"][name]:
        w = want[(r["match_id"], r["player_id"])]
        for c in ("distance_m", "hsr_distance_m", "sprints", "trimp_edwards", "accel_load"):
            w[c] += r[c]
        w["minutes"] += 1
        # The last window's running totals are the match's, its target the player's.
        w["session_distance_m"] = r["session_distance_m"]
        w["target_trimp"] = r["target_trimp"]
    got = {(r.match_id, r.player_id): r for r in spark.table("player_load_match").collect()}
    assert set(got) == set(want)
    for key, w in want.items():
        g = got[key]
        assert (g.minutes, g.sprints) == (w["minutes"], w["sprints"]), key
        for c in ("distance_m", "hsr_distance_m", "trimp_edwards", "accel_load"):
            assert math.isclose(getattr(g, c), w[c], rel_tol=1e-9, abs_tol=1e-9), (key, c)
        assert math.isclose(g.distance_m, w["session_distance_m"], rel_tol=1e-9, abs_tol=1e-9), key
        assert g.target_trimp == w["target_trimp"], key
        if w["target_trimp"] is None:
            assert g.trimp_pct_of_target is None, key
        else:
            assert math.isclose(g.trimp_pct_of_target, 100 * w["trimp_edwards"] / w["target_trimp"],
                                rel_tol=1e-9), key


def test_load_alerts_through_both_engines_and_open_alerts(spark, replayed, tmp_path):
    """Each alert once in delta-rs (as one insert in the change data feed) and in Spark, and
    open (no one acked on a console) in open_alerts with its rule."""
    name, outbox = replayed
    gateway = canonical(read_gateway_table(outbox, ALERTS).to_pylist())
    target = tmp_path / "delta"
    local_runner.run(str(outbox), target, tables=[ALERTS])
    local_runner.run(str(outbox), target, tables=[ALERTS], reprocess=True)
    rows = delta_contents(target, ALERTS)
    assert canonical([{k: v for k, v in r.items() if k not in ("date", "source_file")} for r in rows]) == gateway
    assert all(r["date"] == r["event_time"].date() for r in rows)
    if rows:
        from deltalake import DeltaTable

        changes = DeltaTable(str(target / ALERTS)).load_cdf(starting_version=0).read_all()
        assert changes.column("_change_type").to_pylist() == ["insert"] * len(rows)

    run(spark, JobOptions(source=str(outbox), target=str(tmp_path / "tables"), checkpoint=str(tmp_path / "ck"),
                          target_format="parquet", auto_loader=False, tables=(ALERTS,)))
    spark_sinks.register_parquet_tables(spark, str(tmp_path / "tables"))
    views.create_views(spark, temporary=True)
    open_alerts = {r.alert_id: r for r in spark.table("open_alerts").collect()}
    assert set(open_alerts) == {r["alert_id"] for r in gateway}
    for r in gateway:
        o = open_alerts[r["alert_id"]]
        assert (o.kind, o.rule, o.metric, o.player_id, o.device_id, o.value, o.alert_time) == (
            "load", r["rule"], r["watch"], r["player_id"], r["device_id"], r["value"], r["event_time"])


# ---------------------------------------------------------------- the scenario itself (no gateway)

def second(e: dict) -> float:
    return (event_time_us(e) - int(li.T0.timestamp()) * 1_000_000) / 1e6


def times(events: list[dict], device: str, metric: str = "running_dist") -> list[float]:
    return sorted(second(e) for e in events if e["device_id"] == device and e.get(metric) is not None)


def gaps(ts: list[float]) -> list[tuple[float, float]]:
    return [(a, b) for a, b in zip(ts, ts[1:]) if b - a > 5]


def test_the_scenario_has_every_edge_case(scenario):
    events = scenario["events"]
    readings, _ = load_readings(events, li.WINDOWS)
    counted = {(r.device_id, r.t) for r in readings}
    # A late event: gps-8's 19:32:10 reading arrives after 19:33:40 and is not a load reading.
    [late] = [e for e in events if e["device_id"] == "gps-8" and 130 <= second(e) < 131]
    assert (late["device_id"], event_time_us(late)) not in counted
    assert events.index(late) > next(i for i, e in enumerate(events) if second(e) >= 220)
    # An out-of-order strap reading that is not late (it is a load reading).
    [held] = [e for e in events if e["device_id"] == "strap-8" and 380 <= second(e) < 381]
    assert ("strap-8", event_time_us(held)) in counted
    assert events.index(held) > events.index(next(e for e in events if e["device_id"] == "strap-8"
                                                  and 384 <= second(e) < 385))
    # Gaps longer than max_gap: player 2 (8 s), player 4 (dropping out of a sprint).
    assert [round(b - a) for a, b in gaps(times(events, "vest-2"))] == [9]
    [(a, b)] = gaps(times(events, "vest-4"))
    before = [e for e in events if e["device_id"] == "vest-4" and a - 1.5 < second(e) <= a]
    assert (before[-1]["running_dist"] - before[0]["running_dist"]) / (second(before[-1]) - second(before[0])) > 7.5
    # A change of vest, a GPS jump, a decrease of running_dist.
    assert times(events, "vest-5")[-1] < times(events, "vest-5b")[0] < times(events, "vest-5")[-1] + 2
    assert max(li.speeds_of(events, "vest-6")) > li.LOAD.max_speed > max(li.speeds_of(events, "vest-5"))
    assert min(li.speeds_of(events, "vest-7")) < 0
    # Duplicates: exact lines, and one with other values.
    lines = li.lines(events)
    assert sum(n - 1 for n in Counter(lines).values()) == 4
    keys = Counter((e["device_id"], event_time_us(e)) for e in events)
    assert sum(n - 1 for n in keys.values()) == 5
    # A rejected event (its only metric null) and every spelling of event_time.
    assert any(e.get("heart_rate", 0) is None and "running_dist" not in e and "acceleration" not in e
               for e in events)
    assert any(isinstance(e["event_time"], int) for e in events)
    assert any(str(e["event_time"]).endswith("+05:30") for e in events)
    assert any(re.search(r"\.\d{9}Z$", str(e["event_time"])) for e in events)


def test_the_reference_sees_sprints_zones_and_both_kinds_of_player(scenario):
    rows = scenario["expected"]["configured"]
    assert len(rows) == 8 * li.MINUTES + 2 * 4  # match 2 runs from 19:32:00 to 19:35:59
    assert all(sum(r[f"zone{k}_s"] for r in rows) > 0 for k in range(1, 6))
    per_player = defaultdict(int)
    for r in rows:
        per_player[(r["match_id"], r["player_id"])] += r["sprints"]
    assert all(n > 0 for n in per_player.values()), per_player
    names = {(r["player_id"], r["player_name"], r["position"], r["on_roster"], r["hr_max"], r["target_trimp"])
             for r in rows}
    assert names == {
        (1, "Ada Lovelace", "winger", True, 200.0, 250.0), (2, "Bea Okafor", "winger", True, 190.0, None),
        (3, "O'Neil, Jr.", "goalkeeper", True, 185.0, 120.0), (4, "Dee", "defender", True, 195.0, None),
        (5, "Guest Five", None, False, 190.0, None), (6, None, None, False, 190.0, None),
        (7, "Zoë Ødegaard", "midfielder", True, 190.0, 300.0), (8, "Guest Eight", None, False, 190.0, None),
        (30, "Second 30", None, False, 190.0, None),
    }
    # Without a roster nobody has a target.
    assert {r["target_trimp"] for r in scenario["expected"]["defaults"]} == {None}
    roster = scenario["roster"]
    # Speeds from the roster, else the position's, else [load]'s.
    assert [(settings_for(p, roster, li.LOAD).hsr_speed, settings_for(p, roster, li.LOAD).sprint_speed)
            for p in (1, 3, 4, 7, 8)] == [(6.0, 7.5), (5.5, 6.5), (5.2, 6.8), (5.5, 7.2), (5.5, 7.0)]
    # The two configs differ (zones, dwell, roster): the defaults run is a second check, not a copy.
    assert rows != scenario["expected"]["defaults"]


def test_the_input_and_roster_files(scenario):
    text = scenario["input"].read_text(encoding="utf-8")
    assert [json.loads(line) for line in text.splitlines()] == scenario["events"]
    roster = scenario["roster_path"].read_text(encoding="utf-8").splitlines()
    # A comment first, the header, a blank line, a quoted name with a comma, a UTF-8 name, empty cells.
    assert roster[0].startswith("# ") and roster[1].startswith("player_id,name,") and roster[2] == ""
    assert '"O\'Neil, Jr."' in roster[5] and "Zoë Ødegaard" in roster[7] and roster[6].startswith("4,,defender,")


def alert_times(alerts: list[dict], rule: str, player: int) -> list[float]:
    return [second({"event_time": a["event_time"].strftime("%Y-%m-%dT%H:%M:%S.%fZ")})
            for a in alerts if a["rule"] == rule and a["player_id"] == player]


def variant(scenario, rule: Rule) -> list[dict]:
    """The alerts of one rule, with the scenario's input and roster."""
    load = LoadParams(**{**li.LOAD.__dict__, "rules": (rule,)})
    return expected_alerts(scenario["events"], scenario["roster"], load, li.WINDOWS, li.VENUE, li.GATEWAY)


def test_the_rules_see_each_case_they_are_there_for(scenario):
    alerts = scenario["alerts"]["configured"]
    events = scenario["events"]
    per_rule = Counter(a["rule"] for a in alerts)
    assert set(per_rule) == {r.name for r in li.RULES} and len(alerts) >= 40, per_rule
    # red-zone (held 15 s) fires more than once for a player: after a reading below.
    assert max(Counter(a["player_id"] for a in alerts if a["rule"] == "red-zone").values()) >= 2
    # above-77: player 4's strap is off from 240.4 s to 247.5 s (> max_gap), at or above 77 % on
    # both sides: the gap starts a new spell, which fires again.
    strap4 = [(second(e), 100 * e["heart_rate"] / 195) for e in events
              if e["device_id"] == "vest-4" and e.get("heart_rate") is not None and 239 < second(e) < 248]
    assert [round(t) for t, _ in strap4] == [239, 240, 247] and strap4[0][1] < 77 <= min(p for _, p in strap4[1:])
    assert {round(strap4[1][0], 3), round(strap4[2][0], 3)} <= {round(t, 3) for t in alert_times(alerts, "above-77", 4)}
    # above-77: player 8's strap reading of 380.9 s arrives after 384.9 s, at 77.4 % while the
    # readings from 381.9 s to 385.9 s are below 77 %; as a reading at t <= p it fires nothing
    # (it would, on its own, if it counted).
    [held] = [e for e in events if e["device_id"] == "strap-8" and 380 <= second(e) < 381]
    after = [100 * e["heart_rate"] / 190 for e in events if e["device_id"] == "strap-8" and 381 < second(e) < 386]
    assert 100 * held["heart_rate"] / 190 >= 77 and len(after) == 5 and max(after) < 77
    assert all(abs(t - second(held)) > 1 for t in alert_times(alerts, "above-77", 8))
    # repeated-sprints: positions and players both; player 7 (a midfielder) sprints often enough.
    assert {a["player_id"] for a in alerts if a["rule"] == "repeated-sprints"} <= {2, 4}
    assert 7 in {a["player_id"] for a in variant(scenario, Rule("p", "sprints", 2, within="90s", players=(2, 4, 7)))}
    # sprint-block: within 3 minutes differs from counting every sprint since it last fired.
    unbounded = variant(scenario, Rule("sprint-block", "sprints", 3, within="1h"))
    assert [a["alert_id"] for a in unbounded] != [a["alert_id"] for a in alerts if a["rule"] == "sprint-block"]
    # match-load: once per player and match, player 3 in both of its matches; 30 has no target.
    assert sorted((a["match_id"], a["player_id"]) for a in alerts if a["rule"] == "match-load") == [
        (1, 1), (1, 3), (1, 7), (2, 3)]
    assert all(8 <= a["value"] < 8.1 for a in alerts if a["rule"] == "match-load")
    # The event's name when the player has no roster name: some events carry none.
    rows = {(r["match_id"], r["player_id"], r["window_start"].replace(second=0, microsecond=0)): r["player_name"]
            for r in scenario["expected"]["configured"]}
    unnamed = [a for a in alerts if a["player_name"] is None]
    assert any(rows[(a["match_id"], a["player_id"], a["event_time"].replace(second=0, microsecond=0))]
               for a in unnamed)
