"""The catalogue agrees with SPEC §5, and the generated DDL is checked in."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import synthetic

from pitchside_ingest import ddl, merge, views
from pitchside_ingest.arrow_batch import file_schema
from pitchside_ingest.tables import REFERENCE_TABLES, TABLE_NAMES, TABLES, table

INGEST = Path(__file__).resolve().parents[1]

# SPEC §5 written out independently of tables.py: "name type" with "?" for nullable.
_W = "venue_id str, gateway_id str, window_start ts, window_end ts"
_R = ("venue_id str, gateway_id str, sensor str, device_id str, metric str, value double, "
      "match_id int64, event_id int64?, event_time ts, received_at ts")


_DOWN = ", gateway_downtime_ms int64?"


def _aggs(*metrics: str) -> str:
    return ", ".join(f"{m}_{a} double?" for m in metrics for a in ("mean", "min", "max"))


SPEC_COLUMNS = {
    "alerts": "alert_id str, venue_id str, gateway_id str, sensor str, device_id str, metric str, "
              "value double, z_score double, baseline_mean double, baseline_std double, "
              "baseline_count int64, match_id int64, event_time ts, detected_at ts, "
              "player_id int64?, player_name str?, zone_id str?, delivery_id int64?, "
              "clock_synchronized bool?",
    "windows_wearable": f"{_W}, match_id int64, player_id int64, player_name str?, events int64, "
                        + _aggs("heart_rate", "acceleration", "running_dist") + _DOWN,
    "windows_pitch": f"{_W}, match_id int64, events int64, "
                     + _aggs("impact_x", "impact_y", "ball_speed", "spin_rate") + _DOWN,
    "windows_crowd": f"{_W}, match_id int64, zone_id str, events int64, " + _aggs("decibels", "density")
                     + _DOWN,
    "windows_generic": f"{_W}, device_id str, metric str, events int64, " + _aggs("value") + _DOWN,
    "fatigue_alerts": "alert_id str, venue_id str, gateway_id str, match_id int64, player_id int64, "
                      "player_name str?, window_start ts, window_end ts, heart_rate_mean double, "
                      "baseline_mean double, baseline_std double, baseline_windows int64",
    "raw": f"{_R}, clock_synchronized bool?",
    "late": f"{_R}, watermark ts, clock_synchronized bool?",
    "rejects": "venue_id str, gateway_id str, source str, reason str, detail str, payload binary, "
               "received_at ts",
    "progress": "venue_id str, gateway_id str, timestamp ts, input_rows int64, "
                "input_rows_per_second double, processed_rows_per_second double, "
                "batch_duration_ms double, state_keys int64, state_bytes int64, open_windows int64, "
                "watermark_wearable ts?, watermark_pitch ts?, watermark_crowd ts?, "
                "watermark_generic ts?, late_rows int64, rejected_rows int64, duplicate_rows int64, "
                "alerts int64, evictions int64, spool_files int64, spool_bytes int64, "
                "uploaded_files int64, upload_failures int64, last_upload_at ts?, "
                "spool_evictions int64?, duplicate_conflicts int64?",
    # SPEC §10.
    "alert_acks": "venue_id str, gateway_id str, alert_id str, by str, note str?, acked_at ts",
    "device_events": "venue_id str, gateway_id str, sensor str, device_id str, player_id int64?, "
                     "zone_id str?, event str, last_seen ts, at ts",
    # SPEC §11.
    "load_player_1m": f"{_W}, match_id int64, player_id int64, player_name str?, position str?, "
                      "on_roster bool, hr_max double, target_trimp double?, zone1_s double, zone2_s double, zone3_s double, "
                      "zone4_s double, zone5_s double, trimp_edwards double, trimp_banister double, "
                      "distance_m double, hsr_distance_m double, hsr_s double, sprints int64, "
                      "accel_load double, session_distance_m double, session_hsr_distance_m double, "
                      "session_sprints int64, session_trimp_edwards double, session_accel_load double"
                      + _DOWN,
    "load_alerts": "alert_id str, venue_id str, gateway_id str, rule str, watch str, match_id int64, "
                   "player_id int64, player_name str?, position str?, device_id str, value double, "
                   "threshold double, event_time ts, detected_at ts",
}
_ARROW = {"str": pa.string(), "int64": pa.int64(), "double": pa.float64(),
          "ts": pa.timestamp("us", tz="UTC"), "binary": pa.binary(), "bool": pa.bool_()}


def spec_schema(name: str) -> pa.Schema:
    fields = []
    for item in SPEC_COLUMNS[name].split(", "):
        col, typ = item.split(" ")
        fields.append(pa.field(col, _ARROW[typ.rstrip("?")], typ.endswith("?")))
    return pa.schema(fields)


def parquet_columns(path) -> str:
    """A Parquet file's columns in the notation of SPEC_COLUMNS, from its Parquet types.

    Read from the Parquet schema itself (physical and logical types, REQUIRED or
    OPTIONAL), not from an Arrow schema the writer may have embedded.
    """
    schema = pq.ParquetFile(path).schema
    out = []
    for i in range(len(schema)):
        c = schema.column(i)
        logical = str(c.logical_type)
        if c.physical_type == "BYTE_ARRAY" and logical == "String":
            typ = "str"
        elif c.physical_type == "BYTE_ARRAY" and logical == "None":
            typ = "binary"
        elif c.physical_type == "INT64" and logical.startswith("Timestamp("):
            utc_micros = "isAdjustedToUTC=true" in logical and "timeUnit=microseconds" in logical
            typ = "ts" if utc_micros else logical
        elif c.physical_type == "INT64" and logical in ("None", "Int(bitWidth=64, isSigned=true)"):
            typ = "int64"
        elif c.physical_type == "DOUBLE":
            typ = "double"
        elif c.physical_type == "BOOLEAN":
            typ = "bool"
        else:
            typ = f"{c.physical_type}/{logical}"
        out.append(f"{c.name} {typ}{'?' if c.max_definition_level else ''}")
    return ", ".join(out)


def test_every_spec_table_is_in_the_catalogue():
    assert set(TABLE_NAMES) == set(SPEC_COLUMNS)


@pytest.mark.parametrize("name", TABLE_NAMES)
def test_file_schema_matches_spec_section_5(name):
    assert file_schema(table(name)).equals(spec_schema(name), check_metadata=False)


def test_synthetic_files_have_the_spec_parquet_types(tmp_path):
    synthetic.write_outbox(tmp_path, 1)
    for path in tmp_path.rglob("*.parquet"):
        assert parquet_columns(path) == SPEC_COLUMNS[path.relative_to(tmp_path).parts[0]]


@pytest.mark.parametrize("spec", TABLES, ids=TABLE_NAMES)
def test_key_columns_exist_and_partitions_follow_from_the_key(spec):
    columns = spec.table_column_names
    assert all(k in columns for k in spec.key)
    # `date` is derived from time_column, so the key must determine it (safe to prune on).
    assert spec.time_column in spec.key or spec.key == ("alert_id",)
    assert not any(c.nullable for c in spec.table_columns if c.name in spec.key)


def test_checked_in_ddl_is_generated_from_the_catalogue():
    expected = ddl.ddl_files()
    actual = {p.name: p.read_text() for p in (INGEST / "ddl").glob("*.sql")}
    assert actual == expected, "run: cd ingest && python3 -m pitchside_ingest.ddl ddl"


def test_change_data_feed_is_on_for_the_alert_and_device_event_tables_only():
    # The gateway tables keep their numbers: a new one is added at the end.
    files = ddl.ddl_files()
    with_cdf = {n for n, text in files.items() if "enableChangeDataFeed" in text}
    assert with_cdf == {"01_alerts.sql", "06_fatigue_alerts.sql", "11_alert_acks.sql", "12_device_events.sql",
                        "14_load_alerts.sql"}
    assert all("PARTITIONED BY (venue_id, date)" in files[f"{i:02d}_{t}.sql"]
               for i, t in enumerate(TABLE_NAMES, start=1))


def test_deletion_vectors_stay_off_while_delta_rs_cannot_read_them_into_arrow(tmp_path):
    """README "Table properties": the MERGEs update rows in five tables, where
    deletion vectors would save rewriting files, but a table with the feature is
    refused by delta-rs's Arrow reader (`to_pyarrow_table`, what polars and most
    Python readers use). When this starts failing, delta-rs reads them: turn
    them on for the windows tables and load_player_1m."""
    from deltalake import DeltaTable
    from deltalake.exceptions import DeltaProtocolError

    files = ddl.ddl_files()
    off = {n for n, text in files.items() if "'delta.enableDeletionVectors' = 'false'" in text}
    assert off == {f"{i:02d}_{t}.sql" for i, t in enumerate(TABLE_NAMES, start=1)} | {"80_match_periods.sql"}
    path = str(tmp_path / "dv")
    schema = pa.schema([("k", pa.int64())])
    DeltaTable.create(path, schema=schema, configuration={"delta.enableDeletionVectors": "true"})
    with pytest.raises(DeltaProtocolError, match="deletionVectors"):
        DeltaTable(path).to_pyarrow_table()


def test_merge_statements_and_ddl_parse_in_spark(spark):
    """Spark's own SQL parser accepts every MERGE, CREATE TABLE and view (no Delta jars needed)."""
    parser = spark._jsparkSession.sessionState().sqlParser()
    for spec in TABLES:
        parser.parsePlan(merge.merge_sql(spec, f"pitchside.{spec.name}", "batch"))
        parser.parsePlan(ddl.create_table_sql(spec, f"pitchside.{spec.name}"))
        parser.parsePlan(ddl.create_table_sql(spec, f"delta.`/tmp/x/{spec.name}`"))
    for ref in REFERENCE_TABLES:
        parser.parsePlan(ddl.create_reference_table_sql(ref, f"pitchside.{ref.name}"))
    for name in views.VIEW_NAMES:
        parser.parsePlan(views.create_view_sql(name, f"pitchside.{name}"))


def test_load_table_is_keyed_and_merged_like_windows_wearable():
    load, wearable = table("load_player_1m"), table("windows_wearable")
    assert (load.key, load.mode, load.time_column) == (wearable.key, wearable.mode, wearable.time_column)


def test_load_alerts_are_keyed_and_merged_like_the_other_alerts():
    load, alerts, fatigue = table("load_alerts"), table("alerts"), table("fatigue_alerts")
    assert (load.key, load.mode, load.change_data_feed) == (alerts.key, alerts.mode, True) == (
        fatigue.key, fatigue.mode, True)
    assert load.time_column == "event_time" and TABLE_NAMES[-1] == "load_alerts"


def test_match_periods_ddl_is_a_small_unpartitioned_table_the_club_fills():
    text = ddl.ddl_files()["80_match_periods.sql"]
    assert "CREATE TABLE IF NOT EXISTS pitchside.match_periods (" in text
    assert "PARTITIONED" not in text and "match_periods" not in TABLE_NAMES
    assert [c.name for c in REFERENCE_TABLES[0].columns] == [
        "venue_id", "match_id", "period", "period_start", "period_end"]
