"""Device events end to end: `pitchside replay` on a reproducible arrival clock,
then both engines and `device_outages` (SPEC §10).

Band w-1 sends once a second for 5 s, is quiet while w-2 sends for 20 s, then
sends again. With `health.silent_after = "15s"` and `--received-at` (line i
arrives i seconds after the first) the gateway must write exactly two device
events for w-1: `silent` 15 s after its last input, `back` with its next one.
A second replay of the same input by the same gateway writes the same rows into
new files: the tables must not grow.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from conftest import replay
from helpers import canonical, delta_contents, gateway_files, normalize, read_gateway_table, spark_contents
from pitchside_ingest import local_runner, spark_sinks, views
from pitchside_ingest.spark_job import JobOptions, run
from test_tables import SPEC_COLUMNS, parquet_columns

T0 = datetime(2026, 11, 29, 19, 30, tzinfo=timezone.utc)
QUIET = 20  # seconds of w-2 only
ARRIVAL = ("--received-at", "2026-11-29T19:30:00Z", "--received-step", "1s")
HEALTH = '\n[health]\nsilent_after = "15s"\n'


def t(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def lines() -> list[str]:
    """One event a second; line i arrives at T0 + i s, with event_time the same."""
    devices = ["w-1"] * 5 + ["w-2"] * QUIET + ["w-1"] * 5
    out = []
    for i, device in enumerate(devices):
        player = int(device[-1])
        out.append(json.dumps({"sensor": "wearable", "device_id": device, "match_id": 1,
                               "player_id": player, "event_time": t(i).strftime("%Y-%m-%dT%H:%M:%SZ"),
                               "heart_rate": 120 + i % 3}))
    return out


@pytest.fixture(scope="module")
def outbox(pitchside_bin, tmp_path_factory):
    """Two replays of the same input by the same gateway into one outbox."""
    work = tmp_path_factory.mktemp("device_events")
    source = work / "input.jsonl"
    source.write_text("".join(line + "\n" for line in lines()))
    out = work / "outbox"
    replay(pitchside_bin, work, source, out, extra_config=HEALTH, extra_args=ARRIVAL)
    first = read_gateway_table(out, "device_events").to_pylist()
    first_files = [f.name for f in gateway_files(out, "device_events")]
    replay(pitchside_bin, work, source, out, extra_config=HEALTH, extra_args=ARRIVAL)
    return {"dir": out, "first": first, "first_files": first_files,
            "both": read_gateway_table(out, "device_events").to_pylist()}


def test_replay_writes_silent_and_back_on_the_arrival_clock(outbox):
    files = gateway_files(outbox["dir"], "device_events")
    # One file per replay; the second replay numbers its file on.
    assert len(outbox["first_files"]) == 1 and len(files) == 2
    assert files[0].name == outbox["first_files"][0] < files[1].name
    for path in files:
        assert parquet_columns(path) == SPEC_COLUMNS["device_events"], path
        assert path.parent.name == "date=2026-11-29" and path.parent.parent.name == "venue_id=testvenue"
    rows = sorted(outbox["first"], key=lambda r: r["at"])
    assert [(r["device_id"], r["event"], r["player_id"], r["zone_id"]) for r in rows] == [
        ("w-1", "silent", 1, None), ("w-1", "back", 1, None)]
    silent, back = rows
    # w-1's last input arrived at +4 s; the check runs on the arrival clock, once a second.
    assert silent["last_seen"] == back["last_seen"] == t(4)
    assert timedelta(seconds=15) <= silent["at"] - silent["last_seen"] < timedelta(seconds=16)
    assert back["at"] == t(5 + QUIET)
    # The second replay wrote the same rows again, in new files.
    assert canonical(outbox["both"]) == canonical(outbox["first"] * 2)


def test_both_engines_hold_each_event_once_and_device_outages_pairs_them(spark, outbox, tmp_path):
    target = tmp_path / "delta"
    local_runner.run(str(outbox["dir"]), target, tables=["device_events"])
    local_runner.run(str(outbox["dir"]), target, tables=["device_events"], reprocess=True)
    delta = delta_contents(target, "device_events")
    # Each event once, from the first replay's file (insert-only: the first file wins).
    assert len(delta) == 2 and {r["source_file"] for r in delta} == set(outbox["first_files"])

    run(spark, JobOptions(source=str(outbox["dir"]), target=str(tmp_path / "spark"),
                          checkpoint=str(tmp_path / "ck"), target_format="parquet", auto_loader=False,
                          tables=("device_events",)))
    assert spark_contents(spark, tmp_path / "spark")["device_events"] == delta

    spark_sinks.register_parquet_tables(spark, str(tmp_path / "spark"))
    views.create_views(spark, temporary=True)
    [outage] = spark.table("device_outages").collect()
    silent = min(outbox["first"], key=lambda r: r["at"])
    assert (outage.device_id, outage.player_id, outage.last_seen, outage.silent_at, outage.back_at) == (
        "w-1", 1, normalize(t(4)), normalize(silent["at"]), normalize(t(5 + QUIET)))
    assert outage.outage_seconds == float(1 + QUIET)
