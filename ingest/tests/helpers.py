"""Reading what the gateway wrote and what the ingest built, for comparisons in tests."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable

from pitchside_ingest.arrow_batch import file_schema
from pitchside_ingest.spark_sinks import ParquetSink
from pitchside_ingest.tables import TABLE_NAMES, table


def normalize(value):
    """Spark and delta-rs values in one form (naive UTC datetimes, bytes)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(timezone.utc).replace(tzinfo=None)
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def canonical(rows: list[dict]) -> list[dict]:
    """Rows with normalized values, in a canonical order."""
    return sorted(({k: normalize(v) for k, v in r.items()} for r in rows), key=repr)


def spark_contents(spark, target) -> dict[str, list[dict]]:
    """Every table the Parquet sink wrote under target, canonical."""
    sink = ParquetSink(str(target))
    out = {}
    for name in TABLE_NAMES:
        df = sink.read(spark, table(name))
        rows = [] if df is None else [r.asDict() for r in df.select(*table(name).table_column_names).collect()]
        out[name] = canonical(rows)
    return out


def delta_contents(target: Path, name: str, drop: tuple[str, ...] = ()) -> list[dict]:
    """A delta-rs table's rows, canonical (empty if the table does not exist)."""
    path = str(target / name)
    if not DeltaTable.is_deltatable(path):
        return []
    return canonical(DeltaTable(path).to_pyarrow_table().drop_columns(list(drop)).to_pylist())


def gateway_files(outbox: Path, name: str) -> list[Path]:
    return sorted((outbox / name).rglob("*.parquet")) if (outbox / name).exists() else []


def read_gateway_table(outbox: Path, name: str) -> pa.Table:
    """Every row pitchside wrote for a table, read with pyarrow (no ingest code)."""
    parts = [pq.ParquetFile(f).read() for f in gateway_files(outbox, name)]
    return pa.concat_tables(parts) if parts else file_schema(table(name)).empty_table()


def _minute(t: datetime) -> datetime:
    return normalize(t).replace(second=0, microsecond=0)


def expected_fatigue_context(outbox: Path) -> list[tuple]:
    """fatigue_pitch_context computed directly from the gateway's files.

    (alert_id, minute's spin_rate_mean, match average spin, spin above average),
    with the view's definitions: per (venue, match, minute) the mean of the pitch
    windows' spin_rate_mean; the match average is the mean of those minutes.
    """
    minutes = defaultdict(list)
    for p in read_gateway_table(outbox, "windows_pitch").to_pylist():
        if p["spin_rate_mean"] is not None:
            minutes[(p["venue_id"], p["match_id"], _minute(p["window_start"]))].append(p["spin_rate_mean"])
    minute_spin = {k: sum(v) / len(v) for k, v in minutes.items()}
    per_match = defaultdict(list)
    for (venue, match, _), spin in minute_spin.items():
        per_match[(venue, match)].append(spin)
    match_avg = {k: sum(v) / len(v) for k, v in per_match.items()}
    out = []
    for f in read_gateway_table(outbox, "fatigue_alerts").to_pylist():
        spin = minute_spin.get((f["venue_id"], f["match_id"], _minute(f["window_start"])))
        avg = match_avg.get((f["venue_id"], f["match_id"]))
        flag = None if spin is None or avg is None else spin > avg
        out.append((f["alert_id"], spin, avg, flag))
    return sorted(out, key=repr)


def view_fatigue_context(spark) -> list[tuple]:
    rows = spark.table("fatigue_pitch_context").collect()
    return sorted(((r.alert_id, r.spin_rate_mean, r.match_spin_rate_mean, r.spin_above_match_avg)
                   for r in rows), key=repr)


def plan_of(df) -> str:
    return df._jdf.queryExecution().executedPlan().toString()
