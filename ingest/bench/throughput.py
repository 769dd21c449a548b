"""Ingest throughput for one day of one venue: delta-rs runner vs a plain Spark append.

    cd ingest && python3 bench/throughput.py [--minutes 1440] [--raw-per-minute 3000]

Writes a day of one gateway's files (one flush a minute, as the gateway does:
raw readings, wearable windows, progress every 10 s, an alerts file every 5
minutes) in the gateway's schema and layout, then times

* the delta-rs runner (`local_runner.run`: read, enrich, de-duplicate, MERGE
  with its transaction, 256 files per commit), and
* a plain Spark append of the same files (read with the file schema, append to
  Parquet: no MERGE, no de-duplication; Delta jars are not available here),

and prints files/s and rows/s for each. Then it writes the next
`--increment-minutes` of files (what a job scheduled every few minutes finds)
and times the runner's incremental run against the tables now holding the day.
Numbers are for this machine only.

With `--replay BINARY` the day is the gateway's own output instead: for each
minute, `BINARY simulate` (the demo venue's sensors at `--rate` events/s) piped
into `BINARY replay --config ../config/demo.toml --output STORE`, so every
table the gateway writes gets a file a minute, as when it flushes each minute.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from pitchside_ingest import local_runner  # noqa: E402
from pitchside_ingest.arrow_batch import file_schema  # noqa: E402
from pitchside_ingest.tables import table  # noqa: E402

VENUE, GATEWAY = "bench", "gw-1"
DAY = datetime(2026, 11, 29, tzinfo=timezone.utc)
TABLES = ("raw", "windows_wearable", "progress", "alerts")
DEMO_CONFIG = Path(__file__).resolve().parents[2] / "config" / "demo.toml"


def write(store: Path, name: str, seq: int, rows: list[dict]) -> None:
    first = rows[0][table(name).time_column]
    folder = store / name / f"venue_id={VENUE}" / f"date={first:%Y-%m-%d}"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=file_schema(table(name))),
                   folder / f"{GATEWAY}-{seq:012d}.parquet", compression="zstd")


def make_minutes(store: Path, start: int, minutes: int, raw_per_minute: int,
                 seq: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """Files of minutes [start, start + minutes); `seq` (per table) goes on from
    where the last call left it. Returns the files and rows written per table."""
    gw = {"venue_id": VENUE, "gateway_id": GATEWAY}
    files = {n: 0 for n in TABLES}
    rows = {n: 0 for n in TABLES}

    def put(name, data):
        write(store, name, seq[name], data)
        seq[name] += 1
        files[name] += 1
        rows[name] += len(data)

    for m in range(start, start + minutes):
        t0 = DAY + timedelta(minutes=m)
        step = 60_000_000 // raw_per_minute
        put("raw", [{**gw, "sensor": "wearable", "device_id": f"band-{i % 22:02d}", "metric": "heart_rate",
                     "value": 120.0 + i % 40, "match_id": 1, "event_id": m * raw_per_minute + i,
                     "event_time": t0 + timedelta(microseconds=i * step),
                     "received_at": t0 + timedelta(microseconds=i * step + 2000), "clock_synchronized": True}
                    for i in range(raw_per_minute)])
        put("windows_wearable", [{**gw, "window_start": t0, "window_end": t0 + timedelta(minutes=1),
                                  "match_id": 1, "player_id": p, "player_name": f"P{p}", "events": 60,
                                  "heart_rate_mean": 140.0, "heart_rate_min": 120.0, "heart_rate_max": 160.0,
                                  "gateway_downtime_ms": 0} for p in range(22)])
        put("progress", [{**gw, "timestamp": t0 + timedelta(seconds=10 * k), "input_rows": raw_per_minute // 6,
                          "input_rows_per_second": raw_per_minute / 60, "processed_rows_per_second": 1e4,
                          "batch_duration_ms": 3.0, "state_keys": 22, "state_bytes": 1 << 20, "open_windows": 22,
                          "late_rows": 0, "rejected_rows": 0, "duplicate_rows": 0, "alerts": 0, "evictions": 0,
                          "spool_files": 1, "spool_bytes": 1 << 16, "uploaded_files": m, "upload_failures": 0,
                          "last_upload_at": t0, "spool_evictions": 0, "duplicate_conflicts": 0} for k in range(6)])
        if m % 5 == 4:
            put("alerts", [{**gw, "alert_id": f"{VENUE}/wearable/band-01/heart_rate/{m}", "sensor": "wearable",
                            "device_id": "band-01", "metric": "heart_rate", "value": 199.0, "z_score": 5.0,
                            "baseline_mean": 140.0, "baseline_std": 10.0, "baseline_count": 60, "match_id": 1,
                            "event_time": t0, "detected_at": t0}])
    return files, rows


def replay_minutes(store: Path, binary: str, start: int, minutes: int, rate: int) -> tuple[dict, dict]:
    """The gateway's output for minutes [start, start + minutes): one replay a minute
    into `store` (each replay continues every table's seq). Returns the files and
    rows it added per table."""
    before = store_contents(store)
    for m in range(start, start + minutes):
        t = (DAY + timedelta(minutes=m)).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines = subprocess.run([binary, "simulate", "--count", str(rate * 60), "--rate", str(rate), "--start", t,
                                "--seed", str(m)], check=True, capture_output=True).stdout
        subprocess.run([binary, "replay", "--config", str(DEMO_CONFIG), "--input", "-", "--output", str(store)],
                       input=lines, check=True, capture_output=True)
    after = store_contents(store)
    files = {n: after[n][0] - before.get(n, (0, 0))[0] for n in after}
    rows = {n: after[n][1] - before.get(n, (0, 0))[1] for n in after}
    return files, rows


def store_contents(store: Path) -> dict[str, tuple[int, int]]:
    """Per table folder: (files, rows)."""
    out = {}
    for folder in sorted(p for p in store.iterdir() if p.is_dir()) if store.exists() else []:
        paths = list(folder.rglob("*.parquet"))
        out[folder.name] = (len(paths), sum(pq.ParquetFile(p).metadata.num_rows for p in paths))
    return out


def spark_append(store: Path, out: Path) -> float:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from pitchside_ingest.spark_batch import file_schema as spark_schema

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.session.timeZone", "UTC").config("spark.driver.memory", "2g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.range(1).collect()  # start-up is not ingest
    start = time.perf_counter()
    for name in (p.name for p in sorted(store.iterdir()) if p.is_dir()):
        (spark.read.schema(spark_schema(table(name))).option("recursiveFileLookup", "true")
         .parquet(str(store / name)).write.mode("append").parquet(str(out / name)))
    took = time.perf_counter() - start
    spark.stop()
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=int, default=1440)
    ap.add_argument("--raw-per-minute", type=int, default=3000)
    ap.add_argument("--increment-minutes", type=int, default=5)
    ap.add_argument("--replay", metavar="BINARY", help="the day from `BINARY simulate | BINARY replay`")
    ap.add_argument("--rate", type=int, default=50, help="events/s simulated, with --replay")
    ap.add_argument("--workdir", default=None)
    a = ap.parse_args()
    work = Path(a.workdir or tempfile.mkdtemp(prefix="pitchside-bench-"))
    store = work / "store"
    shutil.rmtree(work, ignore_errors=True)
    seq = {n: 0 for n in TABLES}

    def day_part(start: int, minutes: int) -> tuple[dict, dict]:
        if a.replay:
            return replay_minutes(store, a.replay, start, minutes, a.rate)
        return make_minutes(store, start, minutes, a.raw_per_minute, seq)

    files, rows = day_part(0, a.minutes)
    n_files, n_rows = sum(files.values()), sum(rows.values())
    print(f"one day: {a.minutes} minutes, {n_files} files, {n_rows} rows ({files}, rows {rows})")

    start = time.perf_counter()
    local_runner.run(str(store), work / "delta", tuple(files))
    rs = time.perf_counter() - start
    sp = spark_append(store, work / "spark")

    more_files, more_rows = day_part(a.minutes, a.increment_minutes)
    i_files, i_rows = sum(more_files.values()), sum(more_rows.values())
    start = time.perf_counter()
    local_runner.run(str(store), work / "delta", tuple(files))
    inc = time.perf_counter() - start
    print(f"then {a.increment_minutes} more minutes: {i_files} files, {i_rows} rows")

    print(f"{'run':<44}{'seconds':>9}{'files/s':>10}{'rows/s':>12}")
    for label, took, f, r in (("delta-rs runner, the day (MERGE, txn)", rs, n_files, n_rows),
                              ("Spark plain append, the day (Parquet)", sp, n_files, n_rows),
                              ("delta-rs runner, the next minutes (incremental)", inc, i_files, i_rows)):
        print(f"{label:<44}{took:>9.2f}{f / took:>10.0f}{r / took:>12.0f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
