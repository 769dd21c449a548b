"""A simulated match (`pitchside simulate` → `pitchside replay`) through Spark and delta-rs.

Twenty minutes across midnight UTC at a venue whose id looks like a number
("123", which Spark would turn into an integer if it read the venue_id= folder),
with injected anomalies and fatigue. The ingested tables are checked against the
gateway's files read directly, and Spark's tables against delta-rs's.
"""

from __future__ import annotations

import math
import subprocess
from collections import Counter
from datetime import date

import pytest

from conftest import replay
from helpers import (canonical, delta_contents, expected_fatigue_context, plan_of,
                     read_gateway_table, spark_contents, view_fatigue_context)
from pitchside_ingest import local_runner, spark_sinks, views
from pitchside_ingest.spark_job import JobOptions, run
from pitchside_ingest.tables import TABLE_NAMES, table

VENUE = "123"
EVENTS = 6000


@pytest.fixture(scope="module")
def outbox(pitchside_bin, tmp_path_factory):
    work = tmp_path_factory.mktemp("simulated")
    events = work / "match.jsonl"
    subprocess.run(
        [str(pitchside_bin), "simulate", "--count", str(EVENTS), "--rate", "5", "--seed", "7",
         "--start", "2026-11-29T23:45:00Z", "--anomaly-rate", "0.01", "--output", str(events)],
        check=True, capture_output=True, timeout=120,
    )
    out = work / "outbox"
    replay(pitchside_bin, work, events, out, venue=VENUE, gateway="gw-east")
    return out


@pytest.fixture(scope="module")
def lakehouse(spark, outbox, tmp_path_factory):
    """Both engines' tables over the same outbox; the views over Spark's."""
    base = tmp_path_factory.mktemp("simulated_lakehouse")
    run(spark, JobOptions(source=str(outbox), target=str(base / "spark"), checkpoint=str(base / "ck"),
                          target_format="parquet", auto_loader=False))
    local_runner.run(str(outbox), base / "delta")
    spark_sinks.register_parquet_tables(spark, str(base / "spark"))
    views.create_views(spark, temporary=True)
    return {"spark": spark_contents(spark, base / "spark"),
            "delta": {n: delta_contents(base / "delta", n) for n in TABLE_NAMES}}


def distinct_keys(outbox, name: str) -> int:
    """Rows of a table in the gateway's files, counted by the table's key."""
    spec = table(name)
    rows = read_gateway_table(outbox, name).to_pylist()
    natural = [k for k in spec.key if k in spec.column_names]
    if name == "rejects":  # identical rejects are all kept
        return len(rows)
    return len({tuple(r[k] for k in natural) for r in rows})


def test_every_table_holds_each_gateway_row_once(outbox, lakehouse):
    for name in TABLE_NAMES:
        assert len(lakehouse["spark"][name]) == distinct_keys(outbox, name), name
    assert len(lakehouse["spark"]["raw"]) > 10_000 and len(lakehouse["spark"]["alerts"]) > 10


def test_spark_and_delta_rs_tables_are_identical(lakehouse):
    for name in TABLE_NAMES:
        assert lakehouse["spark"][name] == lakehouse["delta"][name], name


def test_rows_keep_the_venue_as_text_and_their_own_date(outbox, lakehouse):
    raw = lakehouse["spark"]["raw"]
    assert {r["venue_id"] for r in raw} == {VENUE}
    assert {r["date"] for r in raw} == {date(2026, 11, 29), date(2026, 11, 30)}
    assert all(r["date"] == r["event_time"].date() for r in raw)
    gateway = canonical(read_gateway_table(outbox, "alerts").to_pylist())
    ingested = [{k: v for k, v in r.items() if k not in ("date", "source_file")} for r in lakehouse["spark"]["alerts"]]
    assert ingested == gateway


def test_fatigue_spin_view_matches_a_direct_computation(spark, outbox, lakehouse):
    assert "BroadcastHashJoin" in plan_of(spark.table("fatigue_pitch_context"))
    got, expected = view_fatigue_context(spark), expected_fatigue_context(outbox)
    assert len(got) == len(expected) == len(lakehouse["spark"]["fatigue_alerts"]) > 0
    for g, e in zip(got, expected):
        assert (g[0], g[3]) == (e[0], e[3])
        for a, b in ((g[1], e[1]), (g[2], e[2])):
            assert (a is None and b is None) or math.isclose(a, b, rel_tol=1e-12)
    assert any(g[3] for g in got) and not all(g[3] for g in got), "want both flags in the sample"


def test_alerts_per_device_hour_matches_a_direct_count(spark, lakehouse):
    expected = Counter((a["device_id"], a["event_time"].replace(minute=0, second=0, microsecond=0))
                       for a in lakehouse["spark"]["alerts"])
    got = {(r.device_id, r.hour): r.alerts for r in spark.table("alerts_per_device_hour").collect()}
    assert got == dict(expected)
