"""Local runner: gateway files from a folder or bucket -> local Delta tables, with delta-rs.

For users without a Spark cluster. Same tables, keys and MERGE semantics as the
Spark job (see `merge`), written with delta-rs (`deltalake` on PyPI)::

    python -m pitchside_ingest.local_runner SOURCE TARGET [--table NAME ...] [--reprocess]

SOURCE is the gateways' store: a local folder, `file://…`, `s3://bucket/prefix`
or `gs://bucket/prefix` (whatever `pyarrow.fs` opens; credentials from the usual
environment variables). TARGET is a local folder; table T is the Delta table
`TARGET/T`.

Like Auto Loader's checkpoint, `TARGET/_ingest_log/T.txt` remembers the files
already merged (relative path and size), so a run reads only new files.
`--reprocess` ignores the log; the MERGE makes that harmless (nothing is
duplicated), only slower.
"""

from __future__ import annotations

import argparse
import logging
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
from deltalake import DeltaTable
from deltalake import Field as DeltaField

from . import arrow_batch
from .merge import SOURCE_ALIAS, TARGET_ALIAS, matched_update_condition, merge_predicate
from .tables import PARTITION_COLUMNS, TABLE_NAMES, TableSpec, table

log = logging.getLogger("pitchside_ingest.local_runner")

LOG_DIR = "_ingest_log"

# Arrow type → Delta primitive type, for columns added to existing tables.
_DELTA_TYPES = {
    "string": "string",
    "int64": "long",
    "double": "double",
    "timestamp[us, tz=UTC]": "timestamp",
    "binary": "binary",
    "bool": "boolean",
    "date32[day]": "date",
}


@dataclass
class TableRun:
    """What one run did to one table."""

    table: str
    files: int = 0
    rows_read: int = 0
    rows_inserted: int = 0
    rows_updated: int = 0


@dataclass(frozen=True)
class SourceFile:
    """A gateway file: its path for the filesystem, and its path below SOURCE."""

    path: str
    relative: str
    size: int


def open_source(source: str) -> tuple[pafs.FileSystem, str]:
    """The filesystem and root path of SOURCE (a folder or a bucket URI)."""
    if "://" not in source:
        source = os.path.abspath(source)
    return pafs.FileSystem.from_uri(source)


def list_files(fs: pafs.FileSystem, root: str, spec: TableSpec) -> list[SourceFile]:
    """Every gateway file of a table under root, in path order.

    Hidden and temporary files (name starting with `.` or `_`) are skipped, like
    Spark does, so a file being written is never read.
    """
    base = f"{root.rstrip('/')}/{spec.name}"
    if fs.get_file_info(base).type == pafs.FileType.NotFound:
        return []
    infos = fs.get_file_info(pafs.FileSelector(base, recursive=True))
    files = []
    for info in infos:
        name = info.base_name
        if info.type != pafs.FileType.File or not name.endswith(".parquet") or name[0] in "._":
            continue
        relative = info.path[len(root.rstrip("/")) + 1 :]
        files.append(SourceFile(info.path, relative, info.size))
    return sorted(files, key=lambda f: f.relative)


class IngestLog:
    """The files already merged into one table: `TARGET/_ingest_log/{table}.txt`."""

    def __init__(self, target: Path, table_name: str):
        self.path = target / LOG_DIR / f"{table_name}.txt"
        self.seen: set[str] = set()
        if self.path.exists():
            self.seen = set(self.path.read_text().splitlines())

    @staticmethod
    def entry(f: SourceFile) -> str:
        return f"{f.relative}\t{f.size}"

    def is_new(self, f: SourceFile) -> bool:
        return self.entry(f) not in self.seen

    def add(self, files: list[SourceFile]) -> None:
        """Record files, after their rows are committed."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as out:
            for f in files:
                out.write(self.entry(f) + "\n")
                self.seen.add(self.entry(f))


def open_table(target: Path, spec: TableSpec) -> DeltaTable:
    """The Delta table of `spec` under target, created (as in `ddl/`) if missing."""
    path = target / spec.name
    if DeltaTable.is_deltatable(str(path)):
        dt = DeltaTable(str(path))
        add_missing_columns(dt, spec)
        return dt
    config = {"delta.enableChangeDataFeed": "true"} if spec.change_data_feed else None
    return DeltaTable.create(
        str(path),
        schema=arrow_batch.table_schema(spec),
        partition_by=list(PARTITION_COLUMNS),
        name=spec.name,
        description=spec.comment,
        configuration=config,
    )


def add_missing_columns(dt: DeltaTable, spec: TableSpec) -> None:
    """Adds the catalogue's nullable columns that a table created by an older
    version lacks (e.g. `gateway_downtime_ms`); its old rows read NULL."""
    have = set(pa.schema(dt.schema()).names)
    missing = [f for f in arrow_batch.table_schema(spec) if f.name not in have]
    if not missing:
        return
    required = [f.name for f in missing if not f.nullable]
    if required:
        raise ValueError(f"{spec.name}: the table lacks required columns {required}; recreate it from ddl/")
    dt.alter.add_columns([DeltaField(f.name, _DELTA_TYPES[str(f.type)], nullable=True) for f in missing])


def merge_batch(dt: DeltaTable, spec: TableSpec, batch: pa.Table) -> tuple[int, int]:
    """MERGE a de-duplicated batch into dt; returns (rows inserted, rows updated)."""
    merger = dt.merge(
        source=batch,
        predicate=merge_predicate(spec),
        source_alias=SOURCE_ALIAS,
        target_alias=TARGET_ALIAS,
    )
    condition = matched_update_condition(spec)
    if condition is not None:
        merger = merger.when_matched_update_all(predicate=condition)
    metrics = merger.when_not_matched_insert_all().execute()
    return metrics.get("num_target_rows_inserted", 0), metrics.get("num_target_rows_updated", 0)


def ingest_table(
    fs: pafs.FileSystem,
    root: str,
    target: Path,
    spec: TableSpec,
    reprocess: bool = False,
    files_per_batch: int = 256,
) -> TableRun:
    """Merge one table's new files (all files with `reprocess`) into its Delta table."""
    run = TableRun(spec.name)
    ingest_log = IngestLog(target, spec.name)
    files = [f for f in list_files(fs, root, spec) if reprocess or ingest_log.is_new(f)]
    for start in range(0, len(files), files_per_batch):
        chunk = files[start : start + files_per_batch]
        parts = [
            arrow_batch.enrich(arrow_batch.read_gateway_file(f.path, spec, fs), spec, f.path)
            for f in chunk
        ]
        batch = pa.concat_tables(parts)
        run.files += len(chunk)
        run.rows_read += batch.num_rows
        inserted, updated = merge_batch(open_table(target, spec), spec, arrow_batch.dedup(batch, spec))
        run.rows_inserted += inserted
        run.rows_updated += updated
        ingest_log.add(chunk)
    log.info(
        "%s: %d files, %d rows read, %d inserted, %d updated",
        spec.name, run.files, run.rows_read, run.rows_inserted, run.rows_updated,
    )
    return run


def run(
    source: str,
    target: str | Path,
    tables: tuple[str, ...] | list[str] = TABLE_NAMES,
    reprocess: bool = False,
    files_per_batch: int = 256,
) -> dict[str, TableRun]:
    """Ingest every named table from source into target; returns what was done."""
    fs, root = open_source(source)
    target = Path(target)
    target.mkdir(parents=True, exist_ok=True)
    return {
        name: ingest_table(fs, root, target, table(name), reprocess, files_per_batch)
        for name in tables
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m pitchside_ingest.local_runner",
        description="Merge pitchside gateway files into local Delta tables (delta-rs).",
    )
    parser.add_argument("source", help="gateway store: folder, file://, s3:// or gs:// URI")
    parser.add_argument("target", help="folder of the Delta tables")
    parser.add_argument("--table", action="append", choices=TABLE_NAMES, help="only this table (repeatable)")
    parser.add_argument("--reprocess", action="store_true", help="read every file again (MERGE keeps it idempotent)")
    parser.add_argument("--files-per-batch", type=int, default=256, help="files merged per Delta commit")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    run(args.source, args.target, args.table or TABLE_NAMES, args.reprocess, args.files_per_batch)


if __name__ == "__main__":
    main()
