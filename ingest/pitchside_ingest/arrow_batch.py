"""pyarrow side of a batch: read gateway files, add derived columns, de-duplicate.

Pure functions over `pyarrow.Table`s (plus one reader); the delta-rs runner
wires them to a file listing and a Delta table.
"""

from __future__ import annotations

import posixpath

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .merge import batch_order
from .tables import (
    DATE_COLUMN,
    OCCURRENCE_COLUMN,
    SOURCE_FILE_COLUMN,
    TableSpec,
)

_TYPES = {
    "string": pa.string(),
    "long": pa.int64(),
    "double": pa.float64(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "binary": pa.binary(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
}

_MICROS_PER_DAY = 86_400_000_000


class FileSchemaError(ValueError):
    """A gateway file lacks a column, or has nulls in a required one."""


def file_schema(spec: TableSpec) -> pa.Schema:
    """The exact Parquet schema of a gateway file of this table."""
    return pa.schema([pa.field(c.name, _TYPES[c.type], c.nullable) for c in spec.columns])


def table_schema(spec: TableSpec) -> pa.Schema:
    """The schema of the lakehouse table (gateway columns + derived columns)."""
    return pa.schema([pa.field(c.name, _TYPES[c.type], c.nullable) for c in spec.table_columns])


def read_gateway_file(path: str, spec: TableSpec, filesystem=None) -> pa.Table:
    """Read one gateway file, conformed to `file_schema(spec)`.

    Only the file's own columns are read (`venue_id` and `date` in the folder
    names are ignored). Extra columns are dropped; a missing nullable column is
    filled with nulls (an older gateway); a missing required column, or a null
    in one, raises `FileSchemaError`.
    """
    with (filesystem.open_input_file(path) if filesystem else open(path, "rb")) as f:
        data = pq.ParquetFile(f).read()
    return conform(data, spec, what=path)


def conform(data: pa.Table, spec: TableSpec, what: str = "batch") -> pa.Table:
    """Select, order and cast `data`'s columns to `file_schema(spec)`."""
    schema = file_schema(spec)
    arrays = []
    for field in schema:
        if field.name in data.column_names:
            column = data.column(field.name).cast(field.type)
            if not field.nullable and column.null_count:
                raise FileSchemaError(f"{what}: {column.null_count} nulls in required column {field.name}")
        elif field.nullable:
            column = pa.nulls(data.num_rows, field.type)
        else:
            raise FileSchemaError(f"{what}: required column {field.name} is missing")
        arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=schema)


def utc_date(timestamps: pa.ChunkedArray | pa.Array) -> pa.Array:
    """UTC calendar date of microsecond timestamps (floor division by a day)."""
    micros = pc.cast(timestamps, pa.int64())
    shifted = pc.if_else(pc.less(micros, 0), pc.subtract(micros, _MICROS_PER_DAY - 1), micros)
    days = pc.divide(shifted, _MICROS_PER_DAY)
    return pc.cast(pc.cast(days, pa.int32()), pa.date32())


def enrich(data: pa.Table, spec: TableSpec, source_file: str) -> pa.Table:
    """Add the derived columns to one file's rows (in file order).

    `source_file` may be a path; only its base name is kept.
    """
    n = data.num_rows
    out = data.append_column(
        pa.field(DATE_COLUMN, pa.date32(), False), utc_date(data.column(spec.time_column))
    ).append_column(
        pa.field(SOURCE_FILE_COLUMN, pa.string(), False),
        pa.array([posixpath.basename(source_file)] * n, pa.string()),
    )
    if OCCURRENCE_COLUMN in spec.table_column_names:
        out = out.append_column(
            pa.field(OCCURRENCE_COLUMN, pa.int64(), False), _occurrences(out, spec)
        )
    return out.cast(table_schema(spec))


def _occurrences(data: pa.Table, spec: TableSpec) -> pa.Array:
    """1, 2, … for rows of one file that agree on every key column but `occurrence`."""
    natural_key = [c for c in spec.key if c != OCCURRENCE_COLUMN]
    seen: dict[tuple, int] = {}
    counts = []
    for row in data.select(natural_key).to_pylist():
        k = tuple(row.values())
        seen[k] = seen.get(k, 0) + 1
        counts.append(seen[k])
    return pa.array(counts, pa.int64())


def dedup(data: pa.Table, spec: TableSpec) -> pa.Table:
    """Keep the first row per key in `merge.batch_order(spec)`."""
    if data.num_rows == 0:
        return data
    # Spark's order: nulls first when ascending, last when descending.
    order = [
        (c, "ascending", "at_start") if asc else (c, "descending", "at_end")
        for c, asc in batch_order(spec)
    ]
    indices = pc.sort_indices(data, sort_keys=order)
    ordered = data.take(indices)
    rank = pa.array(range(ordered.num_rows), pa.int64())
    firsts = (
        ordered.select(list(spec.key))
        .append_column("__rank", rank)
        .group_by(list(spec.key), use_threads=False)
        .aggregate([("__rank", "min")])
        .column("__rank_min")
    )
    return ordered.take(pc.take(firsts, pc.sort_indices(firsts)))
