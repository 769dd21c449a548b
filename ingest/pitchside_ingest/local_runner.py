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

Exactly once (issue 39). Each batch of files is numbered and written down
*before* it is merged (`TARGET/_ingest_log/T.batches/{n:012}.tsv`, created
exclusively: a write-ahead plan), and its Delta commit carries one Delta
transaction per gateway in it, app id `pitchside/{venue_id}/{gateway_id}/{table}`,
version `n`. A run first finishes the plans the log does not yet hold (a crash
between plan and commit, or between commit and log): when the table's
transaction version of one of the plan's app ids is already >= n the commit
happened and only the log is written, otherwise the same files are merged
again. The version is the batch number, not the file's `seq`: a file that
arrives after a file with a higher `seq` was committed simply goes into the next
batch, so it is neither skipped (as `version <= seq` would) nor applied twice.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import logging
import os
import re
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.fs as pafs
from deltalake import CommitProperties, DeltaTable, Transaction
from deltalake import Field as DeltaField

from . import arrow_batch
from .conflicts import retry_conflicts
from .merge import SOURCE_ALIAS, TARGET_ALIAS, matched_update_condition, merge_predicate
from .tables import PARTITION_COLUMNS, TABLE_NAMES, TableSpec, table

log = logging.getLogger("pitchside_ingest.local_runner")

LOG_DIR = "_ingest_log"

APP_ID_PREFIX = "pitchside"

CRASH_ENV = "PITCHSIDE_INGEST_CRASH_AT"
"""Tests only: `POINT[:N[:SECONDS]]` kills this process with SIGKILL at POINT of
the N-th batch (1-based, default 1) of this run. POINT is `planned` (plan
written, not merged), `committed` (Delta commit done, ingest log not written) or
`merging` (SECONDS after the MERGE began, by another process, so the kill lands
wherever the MERGE, its commit or the run has got to by then)."""

_GATEWAY_FILE = re.compile(r"^(?P<gateway>.+)-(?P<seq>\d{12})\.parquet$")

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
    batches: int = 0
    batches_already_committed: int = 0
    """Planned batches found committed but not logged (a crash after the commit)."""


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
        self.forget_done_plans()

    @property
    def plan_dir(self) -> Path:
        return self.path.with_suffix(".batches")

    def plans(self) -> list[tuple[int, list[str]]]:
        """Every batch plan on disk: (batch number, file entries), in order."""
        if not self.plan_dir.exists():
            return []
        out = []
        for plan in sorted(self.plan_dir.glob("*.tsv")):
            try:
                out.append((int(plan.stem), plan.read_text().splitlines()))
            except FileNotFoundError:  # done, and forgotten by a racing runner meanwhile
                continue
        return out

    def open_plans(self) -> list[tuple[int, list[str]]]:
        """Plans with files the log does not hold yet: not (known to be) committed."""
        self.reload()
        return [(n, entries) for n, entries in self.plans() if not all(e in self.seen for e in entries)]

    def reload(self) -> None:
        if self.path.exists():
            self.seen = set(self.path.read_text().splitlines())

    def next_batch(self, floor: int = 0) -> int:
        """The next batch number: above every plan and above `floor` (the table's
        highest transaction version, so a deleted log never reuses a number the
        table holds, which would make new files look committed)."""
        plans = self.plans()
        return max(plans[-1][0] if plans else 0, floor) + 1

    def write_plan(self, n: int, files: list[SourceFile]) -> bool:
        """Write batch n's plan unless it exists (another runner took n): atomic and exclusive."""
        self.plan_dir.mkdir(parents=True, exist_ok=True)
        final = self.plan_dir / f"{n:012d}.tsv"
        tmp = self.plan_dir / f".{n:012d}.{os.getpid()}.tmp"
        tmp.write_text("".join(self.entry(f) + "\n" for f in files))
        try:
            os.link(tmp, final)  # fails if final exists; never a half-written plan
            return True
        except FileExistsError:
            return False
        finally:
            tmp.unlink()

    @contextlib.contextmanager
    def locked(self):
        """Held by the runner working on this table (the target is a local folder:
        flock works; the kernel releases it when the process dies)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def forget_done_plans(self) -> None:
        """Delete fully logged plans except the newest (it keeps the batch numbering)."""
        plans = self.plans()
        for n, entries in plans[:-1]:
            if all(e in self.seen for e in entries):
                (self.plan_dir / f"{n:012d}.tsv").unlink(missing_ok=True)


def app_id(spec: TableSpec, f: SourceFile) -> str:
    """The Delta transaction app id of a gateway file: `pitchside/{venue}/{gateway}/{table}`.

    From the layout `{table}/venue_id={venue}/date={date}/{gateway}-{seq:012}.parquet`;
    a file outside it gets `pitchside/{table}`.
    """
    parts = f.relative.split("/")
    match = _GATEWAY_FILE.match(parts[-1])
    venue = next((p[len("venue_id="):] for p in parts if p.startswith("venue_id=")), None)
    if match is None or venue is None:
        return f"{APP_ID_PREFIX}/{spec.name}"
    return f"{APP_ID_PREFIX}/{venue}/{match['gateway']}/{spec.name}"


def committed(dt: DeltaTable, app_ids: list[str], n: int) -> bool:
    """Whether batch n is in the table: its transactions are all written by one commit,
    so one app id at version >= n is enough (versions only grow)."""
    versions = [dt.transaction_version(a) for a in app_ids]
    return any(v is not None and v >= n for v in versions)


def crash_point(point: str, batch_index: int) -> None:
    """Tests only: SIGKILL ourselves at `point` when CRASH_ENV asks (see its doc)."""
    want = os.environ.get(CRASH_ENV)
    if not want:
        return
    name, _, rest = want.partition(":")
    index, _, delay = rest.partition(":")
    if name != point or batch_index != int(index or 1):
        return
    if delay:
        subprocess.Popen(["sh", "-c", f"sleep {float(delay)}; kill -KILL {os.getpid()}"])
    else:
        os.kill(os.getpid(), signal.SIGKILL)


def open_table(target: Path, spec: TableSpec) -> DeltaTable:
    """The Delta table of `spec` under target, created (as in `ddl/`) if missing."""
    path = target / spec.name
    if not DeltaTable.is_deltatable(str(path)):
        config = {"delta.enableChangeDataFeed": "true"} if spec.change_data_feed else None
        try:
            return DeltaTable.create(
                str(path),
                schema=arrow_batch.table_schema(spec),
                partition_by=list(PARTITION_COLUMNS),
                name=spec.name,
                description=spec.comment,
                configuration=config,
            )
        except Exception:  # noqa: BLE001 - another runner created it first: open theirs
            if not DeltaTable.is_deltatable(str(path)):
                raise
    dt = DeltaTable(str(path))
    add_missing_columns(dt, spec)
    relax_not_null(dt, spec)
    return dt


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


def relax_not_null(dt: DeltaTable, spec: TableSpec) -> None:
    """Drops NOT NULL from columns the catalogue now marks nullable (e.g.
    `progress.spool_evictions`, once NOT NULL): a table created by an older
    version would refuse an older gateway's file that lacks them."""
    strict = {f.name for f in pa.schema(dt.schema()) if not f.nullable}
    for f in arrow_batch.table_schema(spec):
        if f.nullable and f.name in strict:
            dt.alter.drop_column_not_null(f.name)


def merge_batch(
    dt: DeltaTable, spec: TableSpec, batch: pa.Table, commit: CommitProperties | None = None
) -> tuple[int, int]:
    """MERGE a de-duplicated batch into dt; returns (rows inserted, rows updated)."""
    merger = dt.merge(
        source=batch,
        predicate=merge_predicate(spec),
        source_alias=SOURCE_ALIAS,
        target_alias=TARGET_ALIAS,
        commit_properties=commit,
    )
    condition = matched_update_condition(spec)
    if condition is not None:
        merger = merger.when_matched_update_all(predicate=condition)
    metrics = merger.when_not_matched_insert_all().execute()
    return metrics.get("num_target_rows_inserted", 0), metrics.get("num_target_rows_updated", 0)


def apply_batch(
    fs: pafs.FileSystem, target: Path, spec: TableSpec, n: int, files: list[SourceFile],
    ingest_log: IngestLog, run: TableRun,
) -> None:
    """Merge planned batch n exactly once, then log its files.

    If the table already holds batch n (a crash after the commit, or another
    runner that got there first) only the log is written.
    """
    apps = sorted({app_id(spec, f) for f in files})
    run.batches += 1
    batch: pa.Table | None = None
    rows_read = 0

    def attempt() -> None:
        nonlocal batch, rows_read
        dt = open_table(target, spec)
        if committed(dt, apps, n):
            # After a crash past the commit, or a racing runner's commit of batch n.
            run.batches_already_committed += 1
            return
        if batch is None:
            parts = [
                arrow_batch.enrich(arrow_batch.read_gateway_file(f.path, spec, fs), spec, f.path)
                for f in files
            ]
            read = pa.concat_tables(parts)
            rows_read = read.num_rows
            batch = arrow_batch.dedup(read, spec)
            crash_point("merging", run.batches)
        commit = CommitProperties(
            app_transactions=[Transaction(a, n) for a in apps],
            custom_metadata={"pitchside.batch": str(n), "pitchside.files": str(len(files))},
        )
        inserted, updated = merge_batch(dt, spec, batch, commit)
        run.files += len(files)
        run.rows_read += rows_read
        run.rows_inserted += inserted
        run.rows_updated += updated

    retry_conflicts(attempt, f"{spec.name} batch {n}")
    crash_point("committed", run.batches)
    ingest_log.add(files)


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
    listed = list_files(fs, root, spec)
    by_entry = {IngestLog.entry(f): f for f in listed}

    def finish_open_plans() -> None:
        for n, entries in ingest_log.open_plans():
            missing = [e for e in entries if e not in by_entry]
            if missing:
                raise RuntimeError(
                    f"{spec.name}: batch {n} was planned with files no longer in the source: {missing[:3]}"
                )
            apply_batch(fs, target, spec, n, [by_entry[e] for e in entries], ingest_log, run)

    # One runner per table at a time: batches then commit in the order of their
    # numbers, which is what makes "a transaction version >= n" mean "batch n is
    # in". (Were a racing runner's batch n+1 committed before batch n, batch n's
    # gateways would already be at n+1 and batch n would be skipped: lost.)
    with ingest_log.locked():
        ingest_log.reload()
        finish_open_plans()
        floor = 0
        path = str(target / spec.name)
        if listed and DeltaTable.is_deltatable(path):
            dt = DeltaTable(path)
            floor = max((dt.transaction_version(a) or 0 for a in {app_id(spec, f) for f in listed}), default=0)
        pending = [f for f in listed if reprocess or ingest_log.is_new(f)]
        while pending:
            chunk = pending[:files_per_batch]
            n = ingest_log.next_batch(floor)
            if not ingest_log.write_plan(n, chunk):
                raise RuntimeError(f"{spec.name}: batch {n} planned twice")
            crash_point("planned", run.batches + 1)
            apply_batch(fs, target, spec, n, chunk, ingest_log, run)
            pending = pending[len(chunk):]
    log.info(
        "%s: %d files, %d rows read, %d inserted, %d updated, %d batches (%d found committed)",
        spec.name, run.files, run.rows_read, run.rows_inserted, run.rows_updated,
        run.batches, run.batches_already_committed,
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
