"""The Spark job (real file source, checkpoints, batch ids) with a sink that
commits through delta-rs, for the exactly-once tests: no delta-spark jars can
be had here (they come from Maven), so the Delta commit is delta-rs's while
everything that decides *which* batch is re-run, with which id, is Spark's.

    python tests/spark_delta_rs_job.py SOURCE TARGET CHECKPOINT TABLE...

`SPARK_JOB_CRASH=POINT:TABLE:BATCH_ID` kills the process with SIGKILL at POINT
(`before_commit` or `after_commit`, i.e. before Spark's own checkpoint commit)
of that batch.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402
from deltalake import CommitProperties, Transaction  # noqa: E402

from pitchside_ingest import arrow_batch, local_runner  # noqa: E402
from pitchside_ingest.spark_job import JobOptions, run  # noqa: E402
from pitchside_ingest.conflicts import is_conflict, retry_conflicts  # noqa: E402


def crash(point: str, table: str, batch_id: int) -> None:
    if os.environ.get("SPARK_JOB_CRASH") == f"{point}:{table}:{batch_id}":
        os.kill(os.getpid(), signal.SIGKILL)


class DeltaRsSink:
    """`DeltaSink.merge` with delta-rs: the same MERGE and the same transaction check."""

    def __init__(self, target: str):
        self.target = Path(target)

    def create_tables(self, spark, specs) -> None:
        pass

    def merge(self, batch, spec, txn=None) -> None:
        app, version = txn
        rows = pa.Table.from_pylist([r.asDict() for r in batch.collect()], schema=arrow_batch.table_schema(spec))

        def attempt() -> None:
            dt = local_runner.open_table(self.target, spec)
            committed = dt.transaction_version(app)
            print(f"BATCH {spec.name} {version} app={app} committed={committed}", flush=True)
            if committed is not None and committed >= version:
                print(f"SKIPPED {spec.name} {version}", flush=True)  # what Delta does with txnAppId/txnVersion
                return
            crash("before_commit", spec.name, version)
            try:
                local_runner.merge_batch(dt, spec, rows, CommitProperties(app_transactions=[Transaction(app, version)]))
            except Exception as error:
                if is_conflict(error):
                    print(f"CONFLICT {spec.name} {version}", flush=True)
                raise
            crash("after_commit", spec.name, version)

        retry_conflicts(attempt, f"{spec.name} batch {version}")


def main(source: str, target: str, checkpoint: str, *tables: str) -> None:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]").appName("pitchside-exactly-once")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.session.timeZone", "UTC").getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    opts = JobOptions(source=source, target=target, checkpoint=checkpoint, auto_loader=False,
                      tables=tuple(tables), max_files_per_trigger=1)
    run(spark, opts, sink=DeltaRsSink(target))
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
