"""End to end: `pitchside replay` writes the outbox, Spark and delta-rs ingest it.

Needs the pitchside binary (see conftest): skipped loudly without it, failed
with PITCHSIDE_REQUIRE_SERVICES=1. The input and what SPEC says pitchside must
make of it are in gateway_input.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta

import pyarrow.parquet as pq
import pytest

import gateway_input as gi
from conftest import copy_tree
from helpers import (delta_contents, expected_fatigue_context, gateway_files, normalize, plan_of,
                     read_gateway_table, spark_contents, view_fatigue_context)
from pitchside_ingest import local_runner, spark_sinks, views
from pitchside_ingest.spark_job import JobOptions, run
from pitchside_ingest.tables import TABLE_NAMES, table
from test_tables import SPEC_COLUMNS, parquet_columns

FILE_NAME = re.compile(r"^gw-1-\d{12}\.parquet$")


def utc(minutes: float = 0, seconds: float = 0) -> datetime:
    return gi.T0 + timedelta(minutes=minutes, seconds=seconds)


@pytest.fixture(scope="module")
def ingested(spark, replay_outbox, tmp_path_factory):
    """The Spark job (plain file source, Parquet sink) over the replay's outbox."""
    base = tmp_path_factory.mktemp("e2e")
    target = base / "tables"
    rows_read = run(spark, JobOptions(source=str(replay_outbox), target=str(target),
                                      checkpoint=str(base / "ck"), target_format="parquet",
                                      auto_loader=False))
    spark_sinks.register_parquet_tables(spark, str(target))
    views.create_views(spark, temporary=True)
    return {"target": target, "rows_read": rows_read, "tables": spark_contents(spark, target)}


def test_gateway_writes_every_table_in_the_spec_layout_and_schema(replay_outbox):
    for name in TABLE_NAMES:
        if name == "windows_generic" or name in gi.expected_rows():
            assert gateway_files(replay_outbox, name), f"no {name} files"
        spec = table(name)
        for path in gateway_files(replay_outbox, name):
            rel = path.relative_to(replay_outbox / name).parts
            assert rel[0] == f"venue_id={gi.VENUE}" and FILE_NAME.match(rel[2]), path
            assert parquet_columns(path) == SPEC_COLUMNS[name], path
            earliest = pq.read_table(path, columns=[spec.time_column]).column(0)
            first = min(earliest.to_pylist())
            assert rel[1] == f"date={first:%Y-%m-%d}", path


def test_spark_job_row_counts_per_table(ingested, replay_outbox):
    counts = {name: len(rows) for name, rows in ingested["tables"].items()}
    expected = gi.expected_rows()
    assert {n: counts[n] for n in expected} == expected
    assert counts["progress"] == read_gateway_table(replay_outbox, "progress").num_rows >= 1


def test_known_alert_values(ingested):
    alerts = {r["alert_id"]: r for r in ingested["tables"]["alerts"]}
    expected = gi.expected_alerts()
    assert set(alerts) == set(expected)
    for alert_id, want in expected.items():
        got = alerts[alert_id]
        for field, value in want.items():
            assert math.isclose(got[field], value, rel_tol=1e-7), (alert_id, field)
    spike = alerts[f"{gi.VENUE}/wearable/w-7/heart_rate/{int(utc(3).timestamp()) * 1_000_000}"]
    assert (spike["value"], spike["baseline_count"], spike["date"].isoformat()) == (140.0, 18, "2026-11-29")
    # SPEC §10: the identity of the event that raised it, NULL where its kind has none.
    for alert_id, got in alerts.items():
        identity = (got["player_id"], got["player_name"], got["zone_id"], got["delivery_id"])
        if "/wearable/w-7/" in alert_id:
            assert identity == (7, "Ada", None, None), alert_id
        else:
            assert "/generic/" in alert_id and identity == (None,) * 4, (alert_id, identity)


def test_known_window_fatigue_late_and_reject_values(ingested):
    t = ingested["tables"]
    [fatigue] = t["fatigue_alerts"]
    assert fatigue["alert_id"] == gi.fatigue_alert_id()
    assert (fatigue["player_name"], fatigue["heart_rate_mean"], fatigue["baseline_mean"]) == ("Ada", 140.0, 121.0)
    assert math.isclose(fatigue["baseline_std"], 1.0, rel_tol=1e-9)

    minute3 = [w for w in t["windows_wearable"] if w["player_id"] == 7 and w["window_start"] == normalize(utc(3))]
    assert [(w["events"], w["heart_rate_mean"], w["player_name"]) for w in minute3] == [(6, 140.0, "Ada")]
    spin = {w["window_start"]: w["spin_rate_mean"] for w in t["windows_pitch"]}
    assert [spin[normalize(utc(m))] for m in range(gi.MINUTES)] == [float(s) for s in gi.SPIN]

    [late] = t["late"]
    assert (late["device_id"], late["event_time"], late["watermark"]) == (
        "w-9", normalize(utc(0, 5)), normalize(utc(1, 30)))
    rejects = sorted((r["payload"], r["occurrence"]) for r in t["rejects"])
    assert [p for p, _ in rejects] == sorted(line.encode() for line in gi.BAD_LINES)
    # The two identical bad lines got the same received_at: both kept, numbered.
    assert [o for p, o in rejects if p == b"this is not json"] == [1, 2]


def test_fatigue_spin_view_matches_a_direct_computation(spark, ingested, replay_outbox):
    """fatigue_pitch_context against the same join computed here from the gateway files."""
    expected = expected_fatigue_context(replay_outbox)
    assert "BroadcastHashJoin" in plan_of(spark.table("fatigue_pitch_context"))
    got = view_fatigue_context(spark)
    assert len(got) == len(expected) == 1
    for g, e in zip(got, expected):
        assert g[0] == e[0] and g[1] == e[1] and g[3] == e[3] and math.isclose(g[2], e[2], rel_tol=1e-12)
    # And against the input itself: minute 3 spins at 1500, the match averages 1166.67.
    assert math.isclose(got[0][2], sum(gi.SPIN) / len(gi.SPIN), rel_tol=1e-12) and got[0][3] is True


def test_alerts_per_device_hour_and_fleet_health(spark, ingested, replay_outbox):
    per_hour = {(r.device_id, r.hour): r.alerts for r in spark.table("alerts_per_device_hour").collect()}
    assert per_hour == {("g-1", datetime(2026, 11, 29, 19)): 1, ("w-7", datetime(2026, 11, 29, 19)): 2}
    per_player = [(r.match_id, r.player_id, r.player_name, r.alerts)
                  for r in spark.table("alerts_per_player_match").collect()]
    assert per_player == [(1, 7, "Ada", 2)]
    progress = read_gateway_table(replay_outbox, "progress")
    [health] = spark.table("fleet_health").collect()
    assert (health.venue_id, health.gateway_id) == (gi.VENUE, gi.GATEWAY)
    assert health.input_rows_total == sum(progress.column("input_rows").to_pylist())
    assert health.rejected_rows_total == sum(progress.column("rejected_rows").to_pylist())
    assert health.late_rows_total == sum(progress.column("late_rows").to_pylist())


def test_delta_rs_runner_over_a_replay_and_a_second_replay(replay_outbox, replay_again, tmp_path):
    """A second replay re-emits every row in new files: the deterministic tables do not grow."""
    store, target = tmp_path / "bucket", tmp_path / "delta"
    copy_tree(replay_outbox, store)
    local_runner.run(str(store), target)
    expected = gi.expected_rows()
    assert {n: len(delta_contents(target, n)) for n in expected} == expected
    keyed = ("alerts", "windows_wearable", "windows_pitch", "windows_crowd", "windows_generic",
             "fatigue_alerts", "raw", "late", "load_player_1m")
    before = {n: delta_contents(target, n, drop=("source_file",)) for n in keyed}

    local_runner.run(str(store), target, reprocess=True)
    assert {n: delta_contents(target, n, drop=("source_file",)) for n in keyed} == before

    files_before = set(store.rglob("*.parquet"))
    replay_again(store)
    new_files = set(store.rglob("*.parquet")) - files_before
    assert len(new_files) == len(files_before), "the second replay must write new files"
    result = local_runner.run(str(store), target)
    # One new file per table the replay wrote (it writes no alert_acks: acks come from the console).
    assert {n: r.files for n, r in result.items()} == {
        n: 1 if gateway_files(replay_outbox, n) else 0 for n in TABLE_NAMES}
    after = {n: delta_contents(target, n, drop=("source_file",)) for n in keyed}
    # Insert-only tables keep the first copy (received_at and detected_at are the
    # gateway's clock); windows take the newer file's identical row.
    assert after == before
    assert {n: result[n].rows_inserted for n in keyed} == {n: 0 for n in keyed}
    # rejects and progress are new receptions (a new received_at / timestamp): they add up.
    assert len(delta_contents(target, "rejects")) == 2 * len(gi.BAD_LINES)
    assert len(delta_contents(target, "progress")) == 2 * read_gateway_table(replay_outbox, "progress").num_rows
