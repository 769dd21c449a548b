"""Schema evolution, the stated rule (README "Schema evolution"): a gateway file
from before a column existed and a newer file, of one gateway, in one table and
one batch; both engines ingest both, and the old file's rows read NULL there.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import DeltaTable

import synthetic
from helpers import canonical, delta_contents, spark_contents
from pitchside_ingest import local_runner
from pitchside_ingest.spark_job import JobOptions, run
from pitchside_ingest.tables import table

# (table, columns an older gateway did not write, a row for minute m)
CASES = [
    ("windows_wearable", ("gateway_downtime_ms",),
     lambda m: {**synthetic.wearable_window(m, 120.0 + m), "gateway_downtime_ms": 0}),
    ("load_player_1m", ("target_trimp", "gateway_downtime_ms"), lambda m: synthetic.load_window(m, 100.0 + m)),
    ("raw", ("clock_synchronized",),
     lambda m: {**synthetic.reading("g-1", synthetic.at(m), 20.0 + m), "clock_synchronized": True}),
    ("alerts", synthetic.ALERT_IDENTITY,
     lambda m: synthetic.alert("w-7", m, 190.0, "wearable", "heart_rate", player_id=7, player_name="Ada",
                               zone_id=None, delivery_id=m)),
    ("progress", ("spool_evictions", "duplicate_conflicts"),
     lambda m: synthetic.progress(m, 100, 0, 0, synthetic.at(m))),
]


def old_and_new(store, name, dropped, row):
    synthetic.old_file(synthetic.write_file(store, name, 1, [row(0)]), *dropped)
    synthetic.write_file(store, name, 2, [row(1)])


@pytest.mark.parametrize("name,dropped,row", CASES, ids=[c[0] for c in CASES])
def test_old_and_new_gateway_files_in_one_batch(name, dropped, row, spark, tmp_path):
    store = tmp_path / "store"
    old_and_new(store, name, dropped, row)
    target = tmp_path / "delta"
    result = local_runner.run(str(store), target, tables=[name])
    assert result[name].files == 2 and result[name].batches == 1
    rows = delta_contents(target, name)
    assert len(rows) == 2
    old = [r for r in rows if r["source_file"].endswith("-000000000001.parquet")]
    new = [r for r in rows if r["source_file"].endswith("-000000000002.parquet")]
    assert all(old[0][c] is None for c in dropped)
    assert any(new[0][c] is not None for c in dropped)

    run(spark, JobOptions(source=str(store), target=str(tmp_path / "parquet"), checkpoint=str(tmp_path / "ck"),
                          target_format="parquet", auto_loader=False, tables=(name,)))
    assert spark_contents(spark, tmp_path / "parquet")[name] == canonical(rows), "Spark and delta-rs differ"


def test_a_progress_table_created_when_they_were_not_null_takes_an_old_file(tmp_path):
    """A table made from the DDL of before (NOT NULL): the runner drops NOT NULL
    (ALTER COLUMN … DROP NOT NULL) instead of refusing the older gateway's file."""
    spec = table("progress")
    strict = {"spool_evictions", "duplicate_conflicts"}
    old_schema = pa.schema([f.with_nullable(False) if f.name in strict else f
                            for f in local_runner.arrow_batch.table_schema(spec)])
    target = tmp_path / "delta"
    DeltaTable.create(str(target / "progress"), schema=old_schema, partition_by=["venue_id", "date"])
    store = tmp_path / "store"
    old_and_new(store, "progress", tuple(strict), CASES[-1][2])
    local_runner.run(str(store), target, tables=["progress"])
    assert len(delta_contents(target, "progress")) == 2
    nullable = {f.name: f.nullable for f in pa.schema(DeltaTable(str(target / "progress")).schema())}
    assert all(nullable[c] for c in strict)
