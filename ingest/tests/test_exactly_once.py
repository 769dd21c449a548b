"""Exactly once with delta-rs (issue 39): the runner killed with SIGKILL at each
point of a batch, re-delivered and out-of-order files, two runners at once.

Each case ends in tables equal to an uninterrupted run's: the same row counts
and the same digest of the sorted rows, and (after a crash) the same Delta
transactions (`pitchside/{venue}/{gateway}/{table}` -> batch number) and no
more commits than the uninterrupted run made: a batch committed before the
crash is not merged again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from deltalake import DeltaTable

import synthetic
from helpers import delta_contents, spark_contents
from pitchside_ingest import local_runner
from pitchside_ingest.tables import TABLE_NAMES

INGEST = Path(__file__).resolve().parents[1]


def runner(store: Path, target: Path, crash: str | None = None, files_per_batch: int = 1,
           extra: tuple[str, ...] = ()) -> subprocess.Popen:
    """The runner as its own process (so SIGKILL is a real crash)."""
    env = {k: v for k, v in os.environ.items() if k != local_runner.CRASH_ENV}
    if crash:
        env[local_runner.CRASH_ENV] = crash
    return subprocess.Popen(
        [sys.executable, "-m", "pitchside_ingest.local_runner", str(store), str(target),
         "--files-per-batch", str(files_per_batch), *extra],
        cwd=INGEST, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )


def finish(proc: subprocess.Popen) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=300)
    return proc.returncode, out


def state(target: Path) -> dict[str, tuple[int, str]]:
    """Per table: (rows, sha256 of the sorted rows)."""
    out = {}
    for name in TABLE_NAMES:
        rows = delta_contents(target, name)
        out[name] = (len(rows), hashlib.sha256(repr(rows).encode()).hexdigest())
    return out


def transactions(target: Path) -> dict[str, dict[str, int | None]]:
    """Per table: the transaction version of every app id its plans named."""
    out = {}
    for name in TABLE_NAMES:
        path = target / name
        if not DeltaTable.is_deltatable(str(path)):
            continue
        dt = DeltaTable(str(path))
        apps = {f"pitchside/{synthetic.VENUE}/{gw}/{name}" for gw in ("gw-1", "gw-2")}
        out[name] = {a: dt.transaction_version(a) for a in sorted(apps)}
    return out


def commits(target: Path) -> dict[str, int]:
    return {name: DeltaTable(str(target / name)).version() for name in TABLE_NAMES
            if DeltaTable.is_deltatable(str(target / name))}


def two_part_store(root: Path) -> Path:
    store = root / "store"
    synthetic.write_outbox(store, 1)
    synthetic.write_outbox(store, 2)
    return store


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The uninterrupted run: one file per batch, in a subprocess like the others."""
    root = tmp_path_factory.mktemp("exactly-once-reference")
    store = two_part_store(root)
    target = root / "delta"
    rc, out = finish(runner(store, target))
    assert rc == 0, out
    assert {n: c for n, (c, _) in state(target).items()} == synthetic.EXPECTED_ROWS_BOTH
    return state(target), transactions(target), commits(target)


@pytest.mark.parametrize("crash", ["planned:1", "planned:2", "committed:1", "committed:2"])
def test_a_runner_killed_at_each_point_then_restarted_equals_an_uninterrupted_run(crash, reference, tmp_path):
    store = two_part_store(tmp_path)
    target = tmp_path / "delta"
    rc, out = finish(runner(store, target, crash=crash))
    assert rc == -signal.SIGKILL, out

    rc, out = finish(runner(store, target))
    assert rc == 0, out
    want_state, want_txn, want_commits = reference
    assert state(target) == want_state
    assert transactions(target) == want_txn
    # A batch committed before the kill is found by its transaction, not merged again.
    assert commits(target) == want_commits
    if crash.startswith("committed"):
        assert "(1 found committed)" in out, out
    else:
        assert "found committed" not in out.replace("(0 found committed)", ""), out
    # Everything is logged: a third run reads nothing.
    rc, out = finish(runner(store, target))
    assert rc == 0 and state(target) == want_state and commits(target) == want_commits


def orphans(table: Path) -> set[Path]:
    """Data files under a Delta table that no commit names: what a MERGE killed
    after writing its files and before its commit leaves behind."""
    named = {Path(uri.removeprefix("file://")).resolve() for uri in DeltaTable(str(table)).file_uris()}
    return {p.resolve() for p in table.rglob("*.parquet")
            if "_delta_log" not in p.parts and "_change_data" not in p.parts} - named


def alerts_over_many_days(root: Path) -> Path:
    """Four alerts files over about 150 days (so a MERGE writes about 150 partition
    files, and takes long enough to be killed inside); file 3 re-delivers file 1."""
    store = root / "store"
    for seq in (1, 2, 3, 4):
        base = 1 if seq == 3 else seq
        rows = [synthetic.alert(f"d-{i % 40}", (base * 7 + i) * 37, 30.0 + i % 9, delivery_id=seq)
                for i in range(3000)]
        synthetic.write_file(store, "alerts", seq, rows)
    return store


def test_a_runner_killed_inside_a_merge_then_restarted_equals_an_uninterrupted_run(tmp_path):
    """SIGKILL some time after the second MERGE began, the time halved towards the
    moment its data files are written and not yet committed, until a kill lands
    there; after every kill, a restart gives the uninterrupted run's table."""
    store = alerts_over_many_days(tmp_path)
    args = {"files_per_batch": 2, "extra": ("--table", "alerts")}
    rc, out = finish(runner(store, tmp_path / "reference", **args))
    assert rc == 0, out
    want = state(tmp_path / "reference")["alerts"], commits(tmp_path / "reference")["alerts"]
    early, late, landed = 0.0, 0.4, []
    while "inside" not in landed and len(landed) < 12:
        delay = (early + late) / 2
        target = tmp_path / f"kill-{len(landed)}"
        finish(runner(store, target, crash=f"merging:2:{delay}", **args))
        table = target / "alerts"
        if orphans(table):
            landed.append("inside")  # files written, no commit names them
        elif DeltaTable(str(table)).version() == want[1]:
            landed.append("after")  # committed (or the run was over)
            late = delay
        else:
            landed.append("before")
            early = delay
        rc, out = finish(runner(store, target, **args))
        assert rc == 0, out
        assert (state(target)["alerts"], commits(target)["alerts"]) == want, (delay, landed)
    assert landed[-1] == "inside", landed


def test_a_re_delivered_file_changes_nothing(tmp_path):
    store = two_part_store(tmp_path)
    target = tmp_path / "delta"
    local_runner.run(str(store), target, files_per_batch=1)
    before, versions = state(target), commits(target)
    # The same file uploaded again (overwritten in place, same bytes): the log skips it.
    f = next((store / "alerts").rglob("gw-1-000000000001.parquet"))
    f.write_bytes(f.read_bytes())
    assert sum(r.files for r in local_runner.run(str(store), target).values()) == 0
    # Read again on purpose: new batches, whose MERGE changes no row.
    again = local_runner.run(str(store), target, reprocess=True, files_per_batch=1)
    assert sum(r.rows_inserted + r.rows_updated for r in again.values()) == 0
    assert state(target) == before
    # delta-rs 1.6 commits nothing for a MERGE that changes no row, so such a
    # batch leaves no transaction either: harmless, re-running it is a no-op too.
    assert commits(target) == versions


def test_a_deleted_ingest_log_never_makes_new_files_look_committed(tmp_path):
    """Batch numbers continue above the table's transactions, not from 1 again."""
    store = tmp_path / "store"
    synthetic.write_outbox(store, 1)
    target = tmp_path / "delta"
    local_runner.run(str(store), target, files_per_batch=1)
    shutil.rmtree(target / local_runner.LOG_DIR)
    synthetic.write_outbox(store, 2)
    again = local_runner.run(str(store), target, files_per_batch=1)
    assert sum(r.batches_already_committed for r in again.values()) == 0
    assert {n: c for n, (c, _) in state(target).items()} == synthetic.EXPECTED_ROWS_BOTH
    dt = DeltaTable(str(target / "alerts"))
    # Part 1 was batch 1; the re-read of part 1 (no change, no commit) was 2; part 2 is 3.
    assert dt.transaction_version(f"pitchside/{synthetic.VENUE}/gw-1/alerts") == 3


def write_seqs(store: Path, seqs: tuple[int, ...]) -> None:
    """gw-1's files `seqs` (and gw-2's seq 1) of alerts and windows_wearable."""
    for seq in seqs:
        # seq 2 and 3 both carry minute 3: the newer file (3) must win whatever the arrival order.
        synthetic.write_file(store, "windows_wearable", seq,
                             [synthetic.wearable_window(seq, 120.0 + seq), synthetic.wearable_window(3, 130.0 + seq)])
        synthetic.write_file(store, "alerts", seq, [synthetic.alert(f"g-{seq}", seq, 30.0 + seq)])
    gw2 = {**synthetic.alert("g-9", 9, 39.0), "gateway_id": "gw-2"}
    synthetic.write_file(store, "alerts", 1, [gw2], gateway="gw-2")


def late_store(root: Path) -> Path:
    """gw-1's seq 1 and 3, without seq 2 (it arrives later: `write_seqs(store, (2,))`)."""
    late = root / "late"
    write_seqs(late, (1, 3))
    (late / "alerts" / f"venue_id={synthetic.VENUE}").joinpath("x").mkdir()  # no effect: not a file
    for p in late.rglob("gw-1-000000000002.parquet"):
        p.unlink()
    return late


def test_a_file_arriving_after_a_later_one_is_neither_lost_nor_doubled(tmp_path):
    """gw-1's seq 2 lands after its seq 3 (and gw-2's seq 1) were committed."""
    at_once = tmp_path / "at-once"
    write_seqs(at_once, (1, 2, 3))
    local_runner.run(str(at_once), tmp_path / "delta-at-once", ("alerts", "windows_wearable"))

    late = late_store(tmp_path)
    target = tmp_path / "delta-late"
    local_runner.run(str(late), target, ("alerts", "windows_wearable"))
    write_seqs(late, (2,))  # seq 2 arrives now (the others are rewritten byte for byte: already logged)
    second = local_runner.run(str(late), target, ("alerts", "windows_wearable"))
    assert {n: r.files for n, r in second.items()} == {"alerts": 1, "windows_wearable": 1}

    for name in ("alerts", "windows_wearable"):
        assert delta_contents(target, name) == delta_contents(tmp_path / "delta-at-once", name), name
    minute3 = [r for r in delta_contents(target, "windows_wearable") if r["window_start"] == synthetic.at(3).replace(tzinfo=None)]
    assert [r["source_file"] for r in minute3] == ["gw-1-000000000003.parquet"]
    dt = DeltaTable(str(target / "alerts"))
    # Batch 2 carried only gw-1's seq 2: gw-1 moved to version 2, gw-2 stayed at 1.
    assert dt.transaction_version(f"pitchside/{synthetic.VENUE}/gw-1/alerts") == 2
    assert dt.transaction_version(f"pitchside/{synthetic.VENUE}/gw-2/alerts") == 1


def test_spark_job_given_a_file_after_a_later_one_equals_delta_rs_given_all_at_once(spark, tmp_path):
    """The same late seq 2 for the Spark job (one checkpoint, two runs): its file
    source picks the file up in the next run, and the newer window still wins."""
    from pitchside_ingest.spark_job import JobOptions, run

    names = ("alerts", "windows_wearable")
    at_once = tmp_path / "at-once"
    write_seqs(at_once, (1, 2, 3))
    local_runner.run(str(at_once), tmp_path / "delta-at-once", names)

    late = late_store(tmp_path)
    opts = JobOptions(source=str(late), target=str(tmp_path / "parquet"), checkpoint=str(tmp_path / "ck"),
                      target_format="parquet", auto_loader=False, tables=names)
    run(spark, opts)
    write_seqs(late, (2,))
    assert run(spark, opts) == {"alerts": 1, "windows_wearable": 2}  # rows of seq 2 only
    got = spark_contents(spark, tmp_path / "parquet")
    for name in names:
        assert got[name] == delta_contents(tmp_path / "delta-at-once", name), name


def test_three_runners_racing_on_one_target_equal_one_run(reference, tmp_path):
    store = two_part_store(tmp_path)
    target = tmp_path / "delta"
    procs = [runner(store, target) for _ in range(3)]
    results = [finish(p) for p in procs]
    for rc, out in results:
        assert rc == 0, out
    want_state, want_txn, _ = reference
    assert state(target) == want_state
    assert transactions(target) == want_txn


# --- The Spark job: its checkpoints and batch ids decide what is re-run --------

SPARK_TABLES = ("alerts", "windows_wearable")


def spark_job(store: Path, target: Path, checkpoint: Path, crash: str | None = None) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_JOB_CRASH"}
    env.update(TZ="UTC", PYSPARK_PYTHON=sys.executable)
    if crash:
        env["SPARK_JOB_CRASH"] = crash
    proc = subprocess.Popen(
        [sys.executable, str(INGEST / "tests" / "spark_delta_rs_job.py"), str(store), str(target),
         str(checkpoint), *SPARK_TABLES],
        cwd=INGEST, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    return finish(proc)


def spark_state(target: Path) -> dict:
    return {n: v for n, v in state(target).items() if n in SPARK_TABLES}


@pytest.fixture(scope="module")
def spark_reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("exactly-once-spark-reference")
    store = two_part_store(root)
    rc, out = spark_job(store, root / "delta", root / "checkpoint")
    assert rc == 0, out
    assert {n: c for n, (c, _) in spark_state(root / "delta").items()} == {
        n: synthetic.EXPECTED_ROWS_BOTH[n] for n in SPARK_TABLES}
    assert "SKIPPED" not in out
    return spark_state(root / "delta"), commits(root / "delta")


@pytest.mark.parametrize("crash", ["before_commit:alerts:1", "after_commit:alerts:1",
                                   "after_commit:windows_wearable:0"])
def test_spark_job_killed_then_restarted_from_its_checkpoint_equals_an_uninterrupted_run(
        crash, spark_reference, tmp_path):
    store = two_part_store(tmp_path)
    target, checkpoint = tmp_path / "delta", tmp_path / "checkpoint"
    rc, crashed = spark_job(store, target, checkpoint, crash)
    assert rc == -signal.SIGKILL, crashed

    rc, out = spark_job(store, target, checkpoint)
    assert rc == 0, out
    want_state, want_commits = spark_reference
    assert spark_state(target) == want_state
    assert {n: c for n, c in commits(target).items() if n in SPARK_TABLES} == want_commits
    _, table, batch_id = crash.split(":")
    if crash.startswith("after_commit"):
        # Spark ran the batch again with the same id; its transaction was in the table.
        assert f"SKIPPED {table} {batch_id}" in out, out
        # The app id is the stream's, from the checkpoint: the same after the restart.
        line = f"BATCH {table} {batch_id} app="
        app = {ln.split("app=")[1].split()[0] for ln in (crashed + out).splitlines() if ln.startswith(line)}
        assert len(app) == 1 and app.pop().startswith(f"pitchside/{table}/"), (crashed, out)
    else:
        assert "SKIPPED" not in out, out


def test_two_spark_jobs_racing_on_one_target_equal_one_run(spark_reference, tmp_path):
    """Two streams (their own checkpoints, so their own app ids) ingest the same
    store into one target at once, a file per micro-batch: a commit one loses to
    the other is merged again (`retry_conflicts`), and the MERGE keys keep the
    second stream's rows from doubling the first's."""
    store = two_part_store(tmp_path)
    target = tmp_path / "delta"
    env = {**os.environ, "TZ": "UTC", "PYSPARK_PYTHON": sys.executable}
    env.pop("SPARK_JOB_CRASH", None)
    procs = [subprocess.Popen(
        [sys.executable, str(INGEST / "tests" / "spark_delta_rs_job.py"), str(store), str(target),
         str(tmp_path / f"checkpoint-{k}"), *SPARK_TABLES],
        cwd=INGEST, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for k in (1, 2)]
    outs = [finish(p) for p in procs]
    for rc, out in outs:
        assert rc == 0, out
    assert spark_state(target) == spark_reference[0]
    apps = {ln.split("app=")[1].split()[0] for _, out in outs for ln in out.splitlines() if ln.startswith("BATCH ")}
    assert len(apps) == 2 * len(SPARK_TABLES), apps  # two streams, each with its own app id per table


def test_only_a_lost_commit_race_is_merged_again():
    from pitchside_ingest.conflicts import MERGE_ATTEMPTS, is_conflict, retry_conflicts

    class CommitFailedError(Exception):
        pass

    # How Spark surfaces Delta's exception: wrapped, the Java class in the text.
    wrapped = RuntimeError("An error occurred while calling o87.sql.\n: "
                           "io.delta.exceptions.ConcurrentAppendException: Files were added to partition")
    assert is_conflict(wrapped) and is_conflict(CommitFailedError("version 3 exists"))
    assert not is_conflict(ValueError("NOT NULL constraint violated for column: spool_evictions"))

    calls = []

    def merge(errors):
        def attempt():
            calls.append(1)
            if errors:
                raise errors.pop(0)
        return attempt

    retry_conflicts(merge([wrapped, CommitFailedError("taken")]), "alerts")
    assert len(calls) == 3
    calls.clear()
    with pytest.raises(ValueError):
        retry_conflicts(merge([ValueError("bad file")]), "alerts")
    assert len(calls) == 1
    calls.clear()
    with pytest.raises(CommitFailedError):
        retry_conflicts(merge([CommitFailedError("taken")] * MERGE_ATTEMPTS), "alerts")
    assert len(calls) == MERGE_ATTEMPTS


def test_delta_sink_sets_the_transaction_confs_only_around_its_merge():
    """`DeltaSink.merge` with a transaction: the session confs Delta reads for a
    MERGE (delta-spark >= 2.3, Databricks) are set while the MERGE runs, then unset."""
    from pitchside_ingest.spark_sinks import TXN_APP_ID_CONF, TXN_VERSION_CONF, DeltaSink
    from pitchside_ingest.tables import table

    class Conf(dict):
        def set(self, k, v):
            self[k] = v

        def unset(self, k):
            self.pop(k, None)

    class Session:
        conf = Conf()
        seen: list = []

        def sql(self, text):
            self.seen.append((text.splitlines()[0], dict(self.conf)))

    class Batch:
        sparkSession = Session()

        def createOrReplaceTempView(self, name):
            pass

    batch = Batch()
    DeltaSink("main.pitchside").merge(batch, table("alerts"), ("pitchside/alerts/abc", 7))
    DeltaSink("main.pitchside").merge(batch, table("alerts"))
    assert batch.sparkSession.seen == [
        ("MERGE INTO main.pitchside.alerts AS t", {TXN_APP_ID_CONF: "pitchside/alerts/abc", TXN_VERSION_CONF: "7"}),
        ("MERGE INTO main.pitchside.alerts AS t", {}),
    ]
    assert dict(batch.sparkSession.conf) == {}
