"""The delta-rs runner: idempotent MERGE into local Delta tables."""

from __future__ import annotations

from datetime import date

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

import synthetic
from pitchside_ingest import local_runner
from pitchside_ingest.tables import TABLE_NAMES, table


def contents(target, name: str) -> list[dict]:
    """A Delta table's rows in a canonical order."""
    path = target / name
    if not DeltaTable.is_deltatable(str(path)):
        return []
    data = DeltaTable(str(path)).to_pyarrow_table()
    return sorted(data.to_pylist(), key=repr)


def all_contents(target) -> dict[str, list[dict]]:
    return {name: contents(target, name) for name in TABLE_NAMES}


def counts(target) -> dict[str, int]:
    return {name: len(rows) for name, rows in all_contents(target).items()}


@pytest.fixture
def store(tmp_path):
    s = tmp_path / "store"
    synthetic.write_outbox(s, 1)
    return s


def test_two_runs_over_the_same_files_give_identical_tables(store, tmp_path):
    target = tmp_path / "delta"
    first = local_runner.run(str(store), target)
    before = all_contents(target)
    assert counts(target) == synthetic.EXPECTED_ROWS_PART1
    assert sum(r.rows_inserted for r in first.values()) == sum(synthetic.EXPECTED_ROWS_PART1.values())

    again = local_runner.run(str(store), target, reprocess=True)  # every file read and merged again
    assert all(r.files == first[n].files for n, r in again.items())
    assert sum(r.rows_inserted + r.rows_updated for r in again.values()) == 0
    assert all_contents(target) == before


def test_a_run_after_new_files_adds_only_the_new_rows(store, tmp_path):
    target = tmp_path / "delta"
    local_runner.run(str(store), target)
    before = all_contents(target)
    synthetic.write_outbox(store, 2)

    result = local_runner.run(str(store), target)
    assert counts(target) == synthetic.EXPECTED_ROWS_BOTH
    # Only part 2's files were read (the ingest log skips part 1's).
    assert {n: r.files for n, r in result.items() if r.files} == {
        "alerts": 1, "windows_wearable": 1, "raw": 1, "rejects": 1, "progress": 1, "alert_acks": 1,
        "device_events": 1, "load_player_1m": 1, "load_alerts": 1}
    inserted = {n: r.rows_inserted for n, r in result.items()}
    assert inserted == {n: synthetic.EXPECTED_ROWS_BOTH[n] - synthetic.EXPECTED_ROWS_PART1[n] for n in TABLE_NAMES}
    # Insert-only tables keep every old row untouched.
    for name in ("alerts", "raw", "rejects", "progress", "fatigue_alerts", "alert_acks", "device_events",
                 "load_alerts"):
        after = contents(target, name)
        assert all(row in after for row in before[name]), name
    # The re-emitted window from the newer file replaced the old one.
    assert result["windows_wearable"].rows_updated == 1
    minute3 = [r for r in contents(target, "windows_wearable") if r["window_start"] == synthetic.at(3)]
    assert [(r["events"], r["heart_rate_mean"], r["source_file"]) for r in minute3] == [
        (12, 141.0, "gw-1-000000000002.parquet")]
    assert result["load_player_1m"].rows_updated == 1
    load3 = [r for r in contents(target, "load_player_1m") if r["window_start"] == synthetic.at(3)]
    assert [(r["distance_m"], r["sprints"], r["on_roster"], r["source_file"]) for r in load3] == [
        (120.0, 1, True, "gw-1-000000000002.parquet")]


def test_identical_rejects_in_one_file_are_both_kept_and_never_duplicated(store, tmp_path):
    target = tmp_path / "delta"
    synthetic.write_outbox(store, 2)
    local_runner.run(str(store), target)
    oops = [(r["occurrence"], r["source_file"]) for r in contents(target, "rejects") if r["payload"] == b"{oops"]
    assert sorted(oops) == [(1, "gw-1-000000000001.parquet"), (2, "gw-1-000000000001.parquet")]


def test_an_ack_is_who_saw_which_alert_when(store, tmp_path):
    target = tmp_path / "delta"
    synthetic.write_outbox(store, 2)
    local_runner.run(str(store), target)
    khan = sorted((r["acked_at"], r["note"], r["source_file"]) for r in contents(target, "alert_acks")
                  if r["alert_id"] == synthetic.alert_id("g-1", 1))
    # Acked twice by the same person: both kept; the copy in file 2 (same acked_at) added nothing.
    assert khan == [(synthetic.at(1, 30), "seen", "gw-1-000000000001.parquet"),
                    (synthetic.at(3), "still high", "gw-1-000000000001.parquet")]
    p1 = sorted((r["event"], r["at"]) for r in contents(target, "device_events") if r["device_id"] == "p-1")
    # Silent and back at the same instant are two events.
    assert p1 == [("back", synthetic.at(4)), ("silent", synthetic.at(4))]


def test_date_partition_is_the_rows_own_utc_date(store, tmp_path):
    target = tmp_path / "delta"
    local_runner.run(str(store), target)
    dates = {r["event_time"]: r["date"] for r in contents(target, "raw")}
    # Both rows came in a file of the date=2026-11-29 folder.
    assert dates[synthetic.NEAR_MIDNIGHT] == date(2026, 11, 29)
    assert dates[synthetic.AFTER_MIDNIGHT] == date(2026, 11, 30)
    dt = DeltaTable(str(target / "raw"))
    assert dt.metadata().partition_columns == ["venue_id", "date"]


def test_change_data_feed_records_each_alert_once(store, tmp_path):
    target = tmp_path / "delta"
    local_runner.run(str(store), target)
    synthetic.write_outbox(store, 2)
    local_runner.run(str(store), target, reprocess=True)
    dt = DeltaTable(str(target / "alerts"))
    assert dt.metadata().configuration.get("delta.enableChangeDataFeed") == "true"
    changes = pa.table(dt.load_cdf(starting_version=0))
    kinds = changes.column("_change_type").to_pylist()
    assert kinds == ["insert"] * 3  # the re-emitted alert and the re-read file changed nothing
    # The same for load alerts, acks and device events: each once, as an insert.
    for name in ("load_alerts", "alert_acks", "device_events"):
        changes = pa.table(DeltaTable(str(target / name)).load_cdf(starting_version=0))
        assert changes.column("_change_type").to_pylist() == ["insert"] * synthetic.EXPECTED_ROWS_BOTH[name], name


def test_a_file_missing_a_required_column_is_refused(tmp_path):
    store = tmp_path / "store"
    path = synthetic.write_file(store, "progress", 1, [synthetic.progress(0, 1, 0, 0, None)])
    data = pq.read_table(path).drop_columns(["input_rows"])
    pq.write_table(data, path)
    with pytest.raises(ValueError, match="input_rows"):
        local_runner.run(str(store), tmp_path / "delta", tables=["progress"])


def test_table_schema_and_partitions_match_the_ddl(store, tmp_path):
    target = tmp_path / "delta"
    local_runner.run(str(store), target)
    for name in ("alerts", "rejects", "windows_pitch", "alert_acks", "device_events", "load_alerts"):
        schema = pa.schema(DeltaTable(str(target / name)).schema())
        assert schema.names == table(name).table_column_names


def test_windows_files_of_older_gateways_without_gateway_downtime_ms_still_ingest(tmp_path):
    store = tmp_path / "store"
    old = synthetic.write_file(store, "windows_pitch", 1, [synthetic.pitch_window(0, 1000.0)])
    pq.write_table(pq.read_table(old).drop_columns(["gateway_downtime_ms"]), old)
    synthetic.write_file(
        store, "windows_pitch", 2, [{**synthetic.pitch_window(1, 1100.0), "gateway_downtime_ms": 1500}]
    )
    target = tmp_path / "delta"
    local_runner.run(str(store), target, tables=["windows_pitch"])
    got = {r["window_start"]: r["gateway_downtime_ms"] for r in contents(target, "windows_pitch")}
    # NULL: written before the gateway recorded its downtime (unknown, not 0).
    assert got == {synthetic.at(0): None, synthetic.at(1): 1500}


def test_a_windows_table_created_before_gateway_downtime_ms_gets_the_column(tmp_path):
    spec = table("windows_pitch")
    target = tmp_path / "delta"
    old_schema = pa.schema([f for f in local_runner.arrow_batch.table_schema(spec) if f.name != "gateway_downtime_ms"])
    DeltaTable.create(str(target / spec.name), schema=old_schema, partition_by=["venue_id", "date"])
    store = tmp_path / "store"
    synthetic.write_file(
        store, "windows_pitch", 1, [{**synthetic.pitch_window(0, 1000.0), "gateway_downtime_ms": 250}]
    )
    local_runner.run(str(store), target, tables=["windows_pitch"])
    assert [r["gateway_downtime_ms"] for r in contents(target, "windows_pitch")] == [250]


def test_alerts_files_of_older_gateways_without_the_identity_columns_still_ingest(tmp_path):
    store, target = tmp_path / "store", tmp_path / "delta"
    synthetic.write_alerts_old_and_new(store)
    local_runner.run(str(store), target, tables=["alerts"])
    # The old file's alert: NULL identity (unknown); the new file's: its kind's identity.
    assert synthetic.alert_identities(contents(target, "alerts")) == synthetic.EXPECTED_ALERT_IDENTITY


def test_an_alerts_table_created_before_the_identity_columns_gets_them(tmp_path):
    spec = table("alerts")
    target = tmp_path / "delta"
    old_schema = pa.schema(
        [f for f in local_runner.arrow_batch.table_schema(spec) if f.name not in synthetic.ALERT_IDENTITY])
    DeltaTable.create(str(target / spec.name), schema=old_schema, partition_by=["venue_id", "date"],
                      configuration={"delta.enableChangeDataFeed": "true"})
    store = tmp_path / "store"
    synthetic.write_alerts_old_and_new(store)
    local_runner.run(str(store), target, tables=["alerts"])
    # Added at the end of the old table (ALTER TABLE ADD COLUMNS); the MERGE matches names.
    names = pa.schema(DeltaTable(str(target / "alerts")).schema()).names
    assert names[-4:] == list(synthetic.ALERT_IDENTITY) and sorted(names) == sorted(spec.table_column_names)
    assert synthetic.alert_identities(contents(target, "alerts")) == synthetic.EXPECTED_ALERT_IDENTITY


def test_load_files_and_tables_from_before_target_trimp_still_ingest(tmp_path):
    """load_player_1m gained target_trimp (nullable) after its first release: files of
    gateways before it read NULL (no target known), and a table created before it gets
    the column (at the end; the MERGE matches names)."""
    spec = table("load_player_1m")
    target = tmp_path / "delta"
    old_schema = pa.schema([f for f in local_runner.arrow_batch.table_schema(spec) if f.name != "target_trimp"])
    DeltaTable.create(str(target / spec.name), schema=old_schema, partition_by=["venue_id", "date"])
    store = tmp_path / "store"
    synthetic.old_file(synthetic.write_file(store, "load_player_1m", 1, [synthetic.load_window(0, 100.0)]),
                       "target_trimp")
    synthetic.write_file(store, "load_player_1m", 2, [synthetic.load_window(1, 100.0)])
    local_runner.run(str(store), target, tables=["load_player_1m"])
    names = pa.schema(DeltaTable(str(target / spec.name)).schema()).names
    assert names[-1] == "target_trimp" and sorted(names) == sorted(spec.table_column_names)
    got = {r["window_start"]: r["target_trimp"] for r in contents(target, "load_player_1m")}
    assert got == {synthetic.at(0): None, synthetic.at(1): 5.0}
