"""The streaming ingest job: gateway files -> Delta tables, one stream per table.

For each table, a file stream over `{source}/{table}/` — Auto Loader
(`cloudFiles`, format parquet) on Databricks, or Spark's plain file source
elsewhere (`--no-auto-loader`) — feeds `foreachBatch`, which adds the derived
columns, de-duplicates the micro-batch and MERGEs it (`spark_sinks`). Each
table's stream has its own checkpoint under `{checkpoint}/{table}`, so a file is
read once; the MERGE makes a re-read (a new checkpoint, a backfill) harmless.

Run it with spark-submit (see README.md)::

    spark-submit ... ingest/run_ingest.py --source s3://bucket/pitchside \\
        --target pitchside --checkpoint s3://bucket/_checkpoints/pitchside --create-tables

or from a notebook: `run(spark, JobOptions(...))` (see notebooks/).
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming import StreamingQuery

from . import spark_batch, views
from .spark_sinks import DeltaSink, ParquetSink, is_path, path_exists
from .tables import TABLE_NAMES, TableSpec, table

log = logging.getLogger("pitchside_ingest.spark_job")


@dataclass
class JobOptions:
    """What to ingest from where to where."""

    source: str
    """The gateways' store: the folder holding `{table}/venue_id=…/…`."""
    target: str
    """Delta: a schema name (`pitchside`) or a folder; parquet: a folder."""
    checkpoint: str
    """Folder for the streams' checkpoints (and Auto Loader's schema location)."""
    target_format: str = "delta"
    """`delta` (MERGE INTO) or `parquet` (the same semantics on plain Parquet)."""
    auto_loader: bool = True
    """Read with Auto Loader (`cloudFiles`, Databricks only) or the plain file source."""
    tables: tuple[str, ...] = TABLE_NAMES
    available_now: bool = True
    """Process what is there now and stop (a scheduled job); else run continuously."""
    processing_time: str = "1 minute"
    """Trigger interval when running continuously."""
    max_files_per_trigger: int | None = None
    create_tables: bool = False
    """Run the DDL (CREATE TABLE IF NOT EXISTS) first; Delta only."""
    create_views: bool = False
    """Create the analysis views afterwards (Delta schema targets only)."""


def configure_session(spark: SparkSession) -> None:
    """Session settings the job relies on."""
    # Parquet written by the Parquet sink keeps microsecond UTC timestamps, like the gateway's.
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")


def read_stream(spark: SparkSession, opts: JobOptions, spec: TableSpec) -> DataFrame:
    """A stream of one table's gateway files: its columns plus `source_file`.

    Columns come from the file only: the `venue_id=`/`date=` folders are not read
    as partition columns (Spark would infer their types and could turn venue
    `123` into an integer; `date` is derived from each row instead).
    """
    path = f"{opts.source.rstrip('/')}/{spec.name}"
    if opts.auto_loader:
        reader = (
            spark.readStream.format("cloudFiles")
            .option("cloudFiles.format", "parquet")
            .option("cloudFiles.schemaLocation", f"{opts.checkpoint.rstrip('/')}/{spec.name}/_schema")
            .option("cloudFiles.partitionColumns", "")
        )
        if opts.max_files_per_trigger:
            reader = reader.option("cloudFiles.maxFilesPerTrigger", opts.max_files_per_trigger)
    else:
        reader = spark.readStream.format("parquet").option("recursiveFileLookup", "true")
        if opts.max_files_per_trigger:
            reader = reader.option("maxFilesPerTrigger", opts.max_files_per_trigger)
    stream = reader.option("pathGlobFilter", "*.parquet").schema(spark_batch.file_schema(spec)).load(path)
    return spark_batch.select_file_columns(stream, spec)


def stream_id(spark: SparkSession, checkpoint: str) -> str:
    """The id of the stream whose checkpoint this is (`{checkpoint}/metadata`).

    It stays the same across restarts from the checkpoint and changes with a new
    checkpoint, whose batch ids start again at 0.
    """
    return spark.read.json(f"{checkpoint.rstrip('/')}/metadata").first()["id"]


def txn_app_id(spec: TableSpec, stream: str) -> str:
    """The Delta transaction app id of one table's stream."""
    return f"pitchside/{spec.name}/{stream}"


def batch_writer(spec: TableSpec, sink, checkpoint: str | None = None):
    """The foreachBatch function of one table: enrich, de-duplicate, merge.

    With the stream's checkpoint, each MERGE carries the Delta transaction
    (`pitchside/{table}/{stream id}`, batch id): Spark runs a batch again with
    the same id and the same files after a crash between the MERGE's commit and
    the checkpoint's, and Delta then skips it (exactly once). A file that
    arrives late (a lower `seq` after a higher one) is in a later batch, with a
    higher id, so it is never skipped for its `seq`.
    """
    app: list[str] = []

    def write(batch: DataFrame, batch_id: int) -> None:
        txn = None
        if checkpoint is not None:
            if not app:
                app.append(txn_app_id(spec, stream_id(batch.sparkSession, checkpoint)))
            txn = (app[0], batch_id)
        rows = spark_batch.dedup(spark_batch.enrich(batch, spec), spec).persist()
        try:
            sink.merge(rows, spec, txn)
        finally:
            rows.unpersist()

    return write


def make_sink(opts: JobOptions):
    if opts.target_format == "delta":
        return DeltaSink(opts.target)
    if opts.target_format == "parquet":
        return ParquetSink(opts.target)
    raise ValueError(f"target_format must be delta or parquet, not {opts.target_format!r}")


def start_stream(spark: SparkSession, opts: JobOptions, spec: TableSpec, sink) -> StreamingQuery:
    trigger = {"availableNow": True} if opts.available_now else {"processingTime": opts.processing_time}
    checkpoint = f"{opts.checkpoint.rstrip('/')}/{spec.name}"
    return (
        read_stream(spark, opts, spec)
        .writeStream.queryName(f"pitchside_{spec.name}")
        .foreachBatch(batch_writer(spec, sink, checkpoint))
        .option("checkpointLocation", checkpoint)
        .trigger(**trigger)
        .start()
    )


def _input_rows(query: StreamingQuery) -> int:
    return sum(p.get("numInputRows", 0) for p in query.recentProgress)


def run(spark: SparkSession, opts: JobOptions, sink=None) -> dict[str, int]:
    """Run the job; with `available_now`, returns the rows read per table.

    `sink` replaces the one `opts.target_format` names (tests).

    Tables whose folder does not exist yet (no gateway has written one) are
    skipped with a warning: Spark's file sources cannot watch a missing folder.
    With `available_now` the tables run one after another, so the job needs no
    more cores than one stream; continuously, every stream runs at once until
    one fails.
    """
    configure_session(spark)
    sink = sink or make_sink(opts)
    specs = [table(name) for name in opts.tables]
    if opts.create_tables:
        sink.create_tables(spark, specs)
    present = []
    for spec in specs:
        if path_exists(spark, f"{opts.source.rstrip('/')}/{spec.name}"):
            present.append(spec)
        else:
            log.warning("No files for table %s under %s yet; skipped.", spec.name, opts.source)
    rows: dict[str, int] = {}
    if opts.available_now:
        for spec in present:
            query = start_stream(spark, opts, spec, sink)
            query.awaitTermination()
            rows[spec.name] = _input_rows(query)
            log.info("%s: %d rows read.", spec.name, rows[spec.name])
    else:
        for spec in present:
            start_stream(spark, opts, spec, sink)
        spark.streams.awaitAnyTermination()
    if opts.create_views and opts.target_format == "delta" and not is_path(opts.target):
        views.create_views(spark, schema=opts.target)
    return rows


def parse_args(argv: list[str] | None = None) -> JobOptions:
    p = argparse.ArgumentParser(prog="run_ingest.py", description=__doc__.splitlines()[0])
    p.add_argument("--source", required=True, help="gateway store: folder with {table}/venue_id=.../")
    p.add_argument("--target", required=True, help="Delta: schema name or folder; parquet: folder")
    p.add_argument("--checkpoint", required=True, help="checkpoint folder (one sub-folder per table)")
    p.add_argument("--target-format", choices=("delta", "parquet"), default="delta")
    p.add_argument("--no-auto-loader", dest="auto_loader", action="store_false",
                   help="use Spark's plain file source instead of cloudFiles (off Databricks)")
    p.add_argument("--table", action="append", choices=TABLE_NAMES, help="only this table (repeatable)")
    p.add_argument("--continuous", action="store_true", help="keep running (default: process what is there and stop)")
    p.add_argument("--processing-time", default="1 minute", help="trigger interval with --continuous")
    p.add_argument("--max-files-per-trigger", type=int)
    p.add_argument("--create-tables", action="store_true", help="CREATE TABLE IF NOT EXISTS first (Delta)")
    p.add_argument("--create-views", action="store_true", help="create the analysis views (Delta schema target)")
    a = p.parse_args(argv)
    return JobOptions(
        source=a.source, target=a.target, checkpoint=a.checkpoint, target_format=a.target_format,
        auto_loader=a.auto_loader, tables=tuple(a.table or TABLE_NAMES), available_now=not a.continuous,
        processing_time=a.processing_time, max_files_per_trigger=a.max_files_per_trigger,
        create_tables=a.create_tables, create_views=a.create_views,
    )


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    opts = parse_args(argv)
    spark = SparkSession.builder.appName("pitchside-ingest").getOrCreate()
    run(spark, opts)


if __name__ == "__main__":
    main()
