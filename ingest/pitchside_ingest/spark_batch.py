"""Spark side of a batch: schema, derived columns, de-duplication.

Pure DataFrame transformations (no reads, no writes), the Spark twin of
`arrow_batch`. Both follow `tables` and `merge`, and a test checks that they
produce the same rows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .merge import batch_order
from .tables import DATE_COLUMN, OCCURRENCE_COLUMN, SOURCE_FILE_COLUMN, TableSpec

_TYPES = {
    "string": T.StringType(),
    "long": T.LongType(),
    "double": T.DoubleType(),
    "timestamp": T.TimestampType(),
    "binary": T.BinaryType(),
    "boolean": T.BooleanType(),
    "date": T.DateType(),
}

_MICROS_PER_DAY = 86_400_000_000


def file_schema(spec: TableSpec) -> T.StructType:
    """The gateway file's columns as a Spark schema (for the streaming reader).

    Everything is nullable here: Spark's file sources make every column nullable
    anyway; required columns are enforced by the NOT NULL of the Delta table.
    """
    return T.StructType([T.StructField(c.name, _TYPES[c.type], True) for c in spec.columns])


def table_schema(spec: TableSpec) -> T.StructType:
    """The lakehouse table's columns as a Spark schema."""
    return T.StructType([T.StructField(c.name, _TYPES[c.type], c.nullable) for c in spec.table_columns])


def utc_date(column: str) -> Column:
    """UTC date of a timestamp column, whatever `spark.sql.session.timeZone` is."""
    return F.expr(
        f"date_from_unix_date(CAST(floor(unix_micros(`{column}`) / {_MICROS_PER_DAY}D) AS INT))"
    )


def select_file_columns(df: DataFrame, spec: TableSpec) -> DataFrame:
    """The gateway columns in order plus `source_file` from the file source's metadata."""
    return df.select(
        *[F.col(c) for c in spec.column_names],
        F.col("_metadata.file_name").alias(SOURCE_FILE_COLUMN),
    )


def enrich(df: DataFrame, spec: TableSpec) -> DataFrame:
    """Add `date` (and `occurrence` for rejects) to rows from `select_file_columns`.

    Run this on a whole micro-batch: a file is never split across micro-batches,
    so numbering identical rejects within a file sees the whole file.
    """
    out = df.withColumn(DATE_COLUMN, utc_date(spec.time_column))
    if OCCURRENCE_COLUMN in spec.table_column_names:
        natural_key = [c for c in spec.key if c != OCCURRENCE_COLUMN]
        same_rows = Window.partitionBy(SOURCE_FILE_COLUMN, *natural_key).orderBy(
            *[c for c in spec.column_names if c not in natural_key]
        )
        out = out.withColumn(OCCURRENCE_COLUMN, F.row_number().over(same_rows).cast("long"))
    return out.select(*spec.table_column_names)


def dedup(df: DataFrame, spec: TableSpec) -> DataFrame:
    """Keep the first row per key in `merge.batch_order(spec)`."""
    order = [F.col(c).asc_nulls_first() if asc else F.col(c).desc_nulls_last() for c, asc in batch_order(spec)]
    rank = Window.partitionBy(*spec.key).orderBy(*order)
    return df.withColumn("__rank", F.row_number().over(rank)).where("__rank = 1").drop("__rank")
