"""The Spark job on a local Spark, over the synthetic outbox (no Delta jars here).

The job runs with the plain file source (`auto_loader=False`) and the Parquet
sink, which applies the MERGE's semantics to plain Parquet tables; the Delta
MERGE itself is exercised with delta-rs (test_local_runner) and its SQL is
parsed by Spark (test_tables).
"""

from __future__ import annotations

import math

import pytest

import synthetic
from helpers import canonical, normalize, plan_of, spark_contents
from pitchside_ingest import local_runner, spark_sinks, views
from pitchside_ingest.spark_job import JobOptions, run
from pitchside_ingest.tables import TABLE_NAMES


def job(store, target, checkpoint) -> JobOptions:
    return JobOptions(source=str(store), target=str(target), checkpoint=str(checkpoint),
                      target_format="parquet", auto_loader=False)


@pytest.fixture(scope="module")
def runs(spark, tmp_path_factory):
    """The job over part 1, then part 2 (same checkpoint), then all again (new checkpoint)."""
    base = tmp_path_factory.mktemp("spark_job")
    store, target = base / "store", base / "tables"
    synthetic.write_outbox(store, 1)
    read1 = run(spark, job(store, target, base / "ck1"))
    after1 = spark_contents(spark, target)
    synthetic.write_outbox(store, 2)
    read2 = run(spark, job(store, target, base / "ck1"))
    after2 = spark_contents(spark, target)
    read3 = run(spark, job(store, target, base / "ck2"))
    after3 = spark_contents(spark, target)
    return {"store": store, "target": target, "base": base, "read": [read1, read2, read3],
            "after": [after1, after2, after3]}


def test_job_reads_each_file_once_per_checkpoint(runs):
    read1, read2, read3 = runs["read"]
    assert read1 == {n: c for n, c in synthetic.EXPECTED_ROWS_PART1.items() if c}
    assert read2 == {"alerts": 2, "windows_wearable": 2, "windows_pitch": 0, "fatigue_alerts": 0,
                     "raw": 2, "late": 0, "rejects": 2, "progress": 2, "alert_acks": 2, "device_events": 3,
                     "load_player_1m": 2, "load_alerts": 2}
    assert sum(read3.values()) == sum(read1.values()) + sum(read2.values())


def test_job_tables_hold_each_row_once(runs):
    after1, after2, after3 = runs["after"]
    assert {n: len(r) for n, r in after1.items()} == synthetic.EXPECTED_ROWS_PART1
    assert {n: len(r) for n, r in after2.items()} == synthetic.EXPECTED_ROWS_BOTH
    assert after3 == after2, "reading every file again must change nothing"


def test_newer_window_replaces_the_older_one(runs):
    minute3 = [r for r in runs["after"][1]["windows_wearable"] if r["window_start"] == normalize(synthetic.at(3))]
    assert [(r["events"], r["source_file"]) for r in minute3] == [(12, "gw-1-000000000002.parquet")]
    load3 = [r for r in runs["after"][1]["load_player_1m"] if r["window_start"] == normalize(synthetic.at(3))]
    assert [(r["distance_m"], r["sprints"], r["source_file"]) for r in load3] == [
        (120.0, 1, "gw-1-000000000002.parquet")]


def test_spark_and_delta_rs_build_the_same_tables(runs, tmp_path):
    target = tmp_path / "delta"
    local_runner.run(str(runs["store"]), target)
    from deltalake import DeltaTable

    for name in TABLE_NAMES:
        path = target / name
        rows = DeltaTable(str(path)).to_pyarrow_table().to_pylist() if DeltaTable.is_deltatable(str(path)) else []
        assert canonical(rows) == runs["after"][2][name], name


def test_views_over_the_ingested_tables(spark, runs):
    spark_sinks.register_parquet_tables(spark, str(runs["target"]))
    views.create_views(spark, temporary=True)

    fatigue = spark.table("fatigue_pitch_context")
    plan = plan_of(fatigue)
    assert "BroadcastHashJoin" in plan and "SortMergeJoin" not in plan
    [row] = fatigue.collect()
    assert (row.spin_rate_mean, row.match_spin_rate_mean, row.spin_above_match_avg) == (1500.0, 1200.0, True)

    per_hour = {(r.device_id, r.hour.hour): r.alerts for r in spark.table("alerts_per_device_hour").collect()}
    assert per_hour == {("g-1", 19): 2, ("g-2", 19): 1}

    [health] = spark.table("fleet_health").collect()
    assert health.last_progress_at == normalize(synthetic.at(2))
    assert (health.input_rows_total, health.late_rows_total, health.rejected_rows_total) == (220, 1, 4)
    assert (health.input_rows_1h, health.upload_lag_seconds, health.state_bytes) == (220, 0.0, 1002)
    timeline = spark.table("fleet_health_timeline").orderBy("minute").collect()
    assert [r.input_rows for r in timeline] == [100, 50, 70]

    open_alerts = spark.table("open_alerts").collect()
    assert {(r.kind, r.alert_id) for r in open_alerts} == synthetic.EXPECTED_OPEN_ALERTS
    # A load alert: what its rule watches as the metric, the rule's name, the reading's time.
    [match_load] = [r for r in open_alerts if r.rule == "match-load"]
    assert (match_load.metric, match_load.sensor, match_load.device_id, match_load.player_name, match_load.value,
            match_load.z_score, match_load.alert_time) == (
        "load_pct", "wearable", "w-7", "Ada Lovelace", 80.4, None, normalize(synthetic.at(4.5)))
    assert {r.rule for r in open_alerts if r.kind != "load"} == {None}
    outages = {(r.device_id, r.silent_at, r.back_at, r.outage_seconds)
               for r in spark.table("device_outages").collect()}
    assert outages == {tuple(normalize(v) for v in o) for o in synthetic.EXPECTED_OUTAGES}

    # Player load: minutes 0-4, minute 3 from the newer file; no match_periods, so no periods.
    [load] = spark.table("player_load_match").collect()
    assert (load.player_id, load.player_name, load.minutes, load.distance_m, load.sprints) == (
        7, "Ada Lovelace", 5, 100.0 + 101.0 + 102.0 + 120.0 + 90.0, 1)
    # Five minutes of 55/60 Edwards TRIMP against the roster's target of 5.
    assert load.target_trimp == 5.0 and math.isclose(load.trimp_pct_of_target, 100 * 5 * 55 / 60 / 5, rel_tol=1e-12)
    assert spark.table("player_load_period").count() == 0
    [day] = spark.table("player_load_acwr").collect()
    assert math.isclose(day.daily_load, 5 * 55 / 60, rel_tol=1e-12) and math.isclose(day.acwr, 4.0, rel_tol=1e-12)


def test_alerts_per_device_hour_is_a_utc_hour_whatever_the_session_time_zone(spark, runs):
    spark_sinks.register_parquet_tables(spark, str(runs["target"]))
    spark.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")
    try:
        views.create_views(spark, temporary=True)  # a view keeps the zone it was made in
        starts = spark.sql("SELECT unix_seconds(hour) AS s FROM alerts_per_device_hour").collect()
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        views.create_views(spark, temporary=True)
    assert starts and all(r.s % 3600 == 0 for r in starts), starts


def test_windows_files_without_gateway_downtime_ms_ingest_as_null(spark, tmp_path):
    import pyarrow.parquet as pq

    store = tmp_path / "store"
    old = synthetic.write_file(store, "windows_pitch", 1, [synthetic.pitch_window(0, 1000.0)])
    pq.write_table(pq.read_table(old).drop_columns(["gateway_downtime_ms"]), old)
    synthetic.write_file(
        store, "windows_pitch", 2, [{**synthetic.pitch_window(1, 1100.0), "gateway_downtime_ms": 1500}]
    )
    opts = job(store, tmp_path / "tables", tmp_path / "ck")
    opts.tables = ("windows_pitch",)
    run(spark, opts)
    rows = spark_contents(spark, tmp_path / "tables")["windows_pitch"]
    got = {r["window_start"]: r["gateway_downtime_ms"] for r in rows}
    assert got == {normalize(synthetic.at(0)): None, normalize(synthetic.at(1)): 1500}


def test_alerts_files_without_the_identity_columns_ingest_as_null_and_players_have_a_view(spark, tmp_path):
    store, target = tmp_path / "store", tmp_path / "tables"
    synthetic.write_alerts_old_and_new(store)
    opts = job(store, target, tmp_path / "ck")
    opts.tables = ("alerts",)
    run(spark, opts)
    rows = spark_contents(spark, target)["alerts"]
    assert synthetic.alert_identities(rows) == synthetic.EXPECTED_ALERT_IDENTITY

    spark_sinks.register_parquet_tables(spark, str(target))
    views.create_views(spark, temporary=True)
    got = {r.player_id: (r.player_name, r.alerts, r.metrics, r.devices)
           for r in spark.table("alerts_per_player_match").collect()}
    # The old file's wearable alert has no player; player 9 never sent a name.
    assert got == {7: ("Ada", 2, 2, 1), 9: (None, 1, 1, 1)}
