"""Where a de-duplicated micro-batch goes: a Delta MERGE, or plain Parquet tables.

`DeltaSink` is the product: `MERGE INTO` Delta tables on Databricks or on Spark
with delta-spark. `ParquetSink` applies the same semantics to plain Parquet
folders, for Spark without the Delta jars (they come from Maven; see README):
insert-only tables get an anti-join and an append, windows a rewrite of the
partitions the batch touches, where the newer file wins exactly as in the MERGE.
"""

from __future__ import annotations

import logging

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from .conflicts import retry_conflicts
from .ddl import create_reference_table_sql, create_table_sql
from .merge import merge_sql
from .spark_batch import table_schema
from .tables import INSERT_ONLY, PARTITION_COLUMNS, REFERENCE_TABLES, SOURCE_FILE_COLUMN, TABLES, TableSpec

log = logging.getLogger("pitchside_ingest.spark_sinks")

TXN_APP_ID_CONF = "spark.databricks.delta.write.txnAppId"
TXN_VERSION_CONF = "spark.databricks.delta.write.txnVersion"

def path_exists(spark: SparkSession, path: str) -> bool:
    """Whether a file or folder exists, through Spark's Hadoop filesystems.

    Where the JVM is out of reach (Spark Connect: Databricks shared access mode
    and serverless), the answer is True and a missing folder fails its stream.
    """
    try:
        jvm = spark.sparkContext._jvm
        hpath = jvm.org.apache.hadoop.fs.Path(path)
        conf = spark.sparkContext._jsc.hadoopConfiguration()
    except Exception:  # noqa: BLE001 - any Connect-side refusal means "cannot tell"
        log.info("Cannot check %s without the JVM; assuming it exists.", path)
        return True
    return bool(hpath.getFileSystem(conf).exists(hpath))


def is_path(target: str) -> bool:
    """Whether a target names a folder (else a schema)."""
    return "/" in target or ":" in target


class DeltaSink:
    """MERGE micro-batches into Delta tables.

    `target` is a schema (`pitchside`, `main.pitchside`), whose tables are
    `{target}.{table}`, or a path, whose tables are ``delta.`{target}/{table}` ``.
    """

    def __init__(self, target: str):
        self.target = target.rstrip("/")

    def table_name(self, spec: TableSpec) -> str:
        if is_path(self.target):
            return f"delta.`{self.target}/{spec.name}`"
        return f"{self.target}.{spec.name}"

    def create_tables(self, spark: SparkSession, specs: list[TableSpec]) -> None:
        """Run the DDL of `ddl/` for these tables (IF NOT EXISTS).

        The tables the club fills (`match_periods`) are created too, empty: the
        views read them.
        """
        if not is_path(self.target):
            spark.sql(f"CREATE SCHEMA IF NOT EXISTS {self.target}")
        for spec in specs:
            spark.sql(create_table_sql(spec, self.table_name(spec)))
        for ref in REFERENCE_TABLES:
            spark.sql(create_reference_table_sql(ref, self.table_name(ref)))

    def merge(self, batch: DataFrame, spec: TableSpec, txn: tuple[str, int] | None = None) -> None:
        """MERGE the batch; with `txn = (app_id, version)` the commit carries that
        Delta transaction, and Delta skips the MERGE when the table already holds
        a version >= this one for the app id (the batch was committed before a
        crash, then read again from the same checkpoint).

        MERGE takes no writer options, so the transaction goes through the session
        confs `spark.databricks.delta.write.txnAppId` / `txnVersion` (delta-spark >= 2.3
        and Databricks). Each stream runs its batches in its own clone of the
        session, so concurrent streams do not see each other's confs.
        """
        view = f"pitchside_batch_{spec.name}"
        batch.createOrReplaceTempView(view)
        spark = batch.sparkSession
        sql = merge_sql(spec, self.table_name(spec), view)
        if txn is None:
            retry_conflicts(lambda: spark.sql(sql), spec.name)
            return
        spark.conf.set(TXN_APP_ID_CONF, txn[0])
        spark.conf.set(TXN_VERSION_CONF, str(txn[1]))
        try:
            retry_conflicts(lambda: spark.sql(sql), f"{spec.name} batch {txn[1]}")
        finally:
            spark.conf.unset(TXN_APP_ID_CONF)
            spark.conf.unset(TXN_VERSION_CONF)


class ParquetSink:
    """The MERGE's semantics on plain Parquet folders `{target}/{table}`."""

    def __init__(self, target: str):
        self.target = target.rstrip("/")

    def table_path(self, spec: TableSpec) -> str:
        return f"{self.target}/{spec.name}"

    def create_tables(self, spark: SparkSession, specs: list[TableSpec]) -> None:
        """Nothing to do: a Parquet folder appears with its first rows."""

    def read(self, spark: SparkSession, spec: TableSpec) -> DataFrame | None:
        """The table as it is, or None before its first rows.

        Read with the table's schema so that partition values are never
        type-inferred (a venue `123` would otherwise become an integer).
        """
        path = self.table_path(spec)
        if not path_exists(spark, path):
            return None
        return spark.read.schema(table_schema(spec)).parquet(path)

    def merge(self, batch: DataFrame, spec: TableSpec, txn: tuple[str, int] | None = None) -> None:
        """Plain Parquet has no transactions: `txn` is ignored; a batch read again
        is harmless only through the anti-join / newer-file-wins (not atomic)."""
        spark = batch.sparkSession
        current = self.read(spark, spec)
        if current is not None:
            touched = batch.select(*PARTITION_COLUMNS).distinct()
            current = current.join(F.broadcast(touched), list(PARTITION_COLUMNS), "left_semi")
        if spec.mode == INSERT_ONLY:
            self._insert_new(batch, current, spec)
        else:
            self._upsert_newer(batch, current, spec)

    def _write(self, rows: DataFrame, spec: TableSpec, mode: str) -> None:
        (
            rows.select(*spec.table_column_names)
            .write.mode(mode)
            .option("partitionOverwriteMode", "dynamic")
            .partitionBy(*PARTITION_COLUMNS)
            .parquet(self.table_path(spec))
        )

    def _insert_new(self, batch: DataFrame, current: DataFrame | None, spec: TableSpec) -> None:
        """WHEN NOT MATCHED THEN INSERT *: append the rows whose key is new."""
        new = batch
        if current is not None:
            on = list(PARTITION_COLUMNS) + [c for c in spec.key if c not in PARTITION_COLUMNS]
            new = batch.join(current.select(*on), on, "left_anti")
        self._write(new, spec, "append")

    def _upsert_newer(self, batch: DataFrame, current: DataFrame | None, spec: TableSpec) -> None:
        """WHEN MATCHED AND s.source_file > t.source_file THEN UPDATE SET * / INSERT *.

        Rewrites only the partitions the batch touches (dynamic overwrite).
        """
        if current is None:
            self._write(batch, spec, "append")
            return
        both = current.withColumn("__incoming", F.lit(1)).unionByName(batch.withColumn("__incoming", F.lit(2)))
        # Newest file first; on a tie the row already in the table stays.
        winner = Window.partitionBy(*spec.key).orderBy(F.col(SOURCE_FILE_COLUMN).desc(), F.col("__incoming"))
        result = (
            both.withColumn("__rank", F.row_number().over(winner))
            .where("__rank = 1")
            .drop("__rank", "__incoming")
        )
        # Materialize before overwriting the files it was read from.
        self._write(result.localCheckpoint(eager=True), spec, "overwrite")


def register_parquet_tables(spark: SparkSession, root: str) -> None:
    """Temp views named like the tables over the Parquet sink's folders `{root}/{table}`.

    For querying the views (`views.create_views`) without Delta
    (`--target-format parquet`); a table with no folder yet is an empty view
    with the right columns. `match_periods` (filled by the club, not by the
    job) is read from `{root}/match_periods` when it is there.
    """
    sink = ParquetSink(root)
    for spec in TABLES:
        df = sink.read(spark, spec)
        if df is None:
            df = spark.createDataFrame([], table_schema(spec))
        df.createOrReplaceTempView(spec.name)
    # The tables the club fills (match_periods), as Parquet under {root}/{name} if it put them there.
    for ref in REFERENCE_TABLES:
        path = f"{sink.target}/{ref.name}"
        if path_exists(spark, path):
            df = spark.read.schema(table_schema(ref)).parquet(path)
        else:
            df = spark.createDataFrame([], table_schema(ref))
        df.createOrReplaceTempView(ref.name)
