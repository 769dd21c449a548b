"""fleet_health over 20 gateways (4 venues) written by the real binary into one store.

Each gateway is `pitchside replay` of the same simulated match under its own
venue and gateway id (two of them also get bad lines, which the gateway
rejects). A replay writes one progress row at the wall clock, so each gateway's
progress is then replaced by an hour of reports every 5 minutes, in the
gateway's schema, that make some gateways silent (no report for 30 minutes),
late (last upload 20 minutes before the last report) or evicting (spool
evictions); the rejecting ones keep the real replay's input and reject counts.
"""

from __future__ import annotations

import re
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import replay
from pitchside_ingest import spark_sinks, views
from pitchside_ingest.arrow_batch import file_schema
from pitchside_ingest.spark_job import JobOptions, run
from pitchside_ingest.tables import table

GATEWAYS = [(f"venue-{i % 4}", f"gw-{i:02d}") for i in range(1, 21)]
SILENT = {"gw-03", "gw-13"}
LATE = {"gw-07", "gw-17"}
EVICTING = {"gw-09"}
REJECTING = {"gw-05", "gw-15"}
END = datetime(2026, 11, 29, 21, 0, tzinfo=timezone.utc)
QUERIES = Path(__file__).resolve().parents[1] / "queries" / "fleet.sql"


def synthesized_progress(store: Path, venue: str, gateway: str) -> None:
    """Replace the replay's progress row by 12 reports, 5 minutes apart."""
    folder = store / "progress" / f"venue_id={venue}"
    files = sorted(folder.rglob(f"{gateway}-*.parquet"))
    [real] = pq.read_table(files[0]).to_pylist()
    seq = max(int(re.search(r"-(\d{12})\.parquet$", f.name)[1]) for f in files) + 1
    for f in files:
        f.unlink()
    last = END - timedelta(minutes=30) if gateway in SILENT else END
    rows = []
    for k in range(11, -1, -1):
        at = last - timedelta(minutes=5 * k)
        rows.append({
            **real, "timestamp": at, "input_rows": 50, "rejected_rows": 0,
            "last_upload_at": at - (timedelta(minutes=20) if gateway in LATE else timedelta(seconds=30)),
            "spool_evictions": 3 if gateway in EVICTING and k == 1 else 0,
            "spool_files": 25 if gateway in LATE else 1,
        })
    rows[-1].update(input_rows=real["input_rows"], rejected_rows=real["rejected_rows"])
    out = store / "progress" / f"venue_id={venue}" / f"date={rows[0]['timestamp']:%Y-%m-%d}"
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=file_schema(table("progress"))),
                   out / f"{gateway}-{seq:012d}.parquet")


@pytest.fixture(scope="module")
def fleet(spark, pitchside_bin, tmp_path_factory):
    base = tmp_path_factory.mktemp("fleet")
    sim = base / "sim.jsonl"
    subprocess.run([str(pitchside_bin), "simulate", "--count", "400", "--rate", "20", "--seed", "7",
                    "--start", "2026-11-29T20:00:00Z", "--output", str(sim)], check=True, capture_output=True)
    bad = "".join(f'{{"sensor":"wearable","device_id":"band-0{i % 3}","heart_rate":"oops"}}\n' for i in range(20))
    store = base / "store"
    for venue, gateway in GATEWAYS:
        work = base / gateway
        work.mkdir()
        lines = sim.read_text() + (bad if gateway in REJECTING else "")
        (work / "input.jsonl").write_text(lines)
        replay(pitchside_bin, work, work / "input.jsonl", store, venue=venue, gateway=gateway,
               extra_args=("--received-at", "2026-11-29T20:00:00Z", "--received-step", "50ms"))
        synthesized_progress(store, venue, gateway)
    target = base / "tables"
    run(spark, JobOptions(source=str(store), target=str(target), checkpoint=str(base / "ck"),
                          target_format="parquet", auto_loader=False, tables=("progress", "rejects")))
    spark_sinks.register_parquet_tables(spark, str(target))
    views.create_views(spark, temporary=True)
    return {r.gateway_id: r for r in spark.table("fleet_health").collect()}


def test_fleet_health_has_one_row_per_gateway_with_its_state(fleet):
    assert len(fleet) == 20
    assert {g: (v, r.venue_id) for g, r in fleet.items() for v in [r.venue_id]} == {
        g: (v, v) for v, g in GATEWAYS}
    expected = {g: ("silent" if g in SILENT else "late" if g in LATE else "evicting" if g in EVICTING
                    else "rejecting" if g in REJECTING else "ok") for _, g in GATEWAYS}
    assert {g: r.status for g, r in fleet.items()} == expected
    assert all(fleet[g].seconds_behind_fleet == 1800 for g in SILENT)
    assert all(fleet[g].upload_lag_seconds == 1200 for g in LATE)
    assert fleet["gw-09"].spool_evictions_1h == 3 and fleet["gw-09"].spool_evictions_total == 3
    for g in REJECTING:
        assert fleet[g].rejected_rows_1h == 20 and fleet[g].reject_rate_1h > 0.01
    assert all(fleet[g].reject_rate_1h == 0 for g in expected if g not in REJECTING)


def test_fleet_queries_run_and_agree_with_the_view(spark, fleet):
    statements = [s for s in QUERIES.read_text().split(";") if s.strip() and
                  any(not ln.strip().startswith("--") and ln.strip() for ln in s.splitlines())]
    assert len(statements) == 4
    needing_a_look, per_status, evicting, rejects = [spark.sql(s).collect() for s in statements]
    assert [r.gateway_id for r in needing_a_look] == [
        "gw-13", "gw-03", "gw-17", "gw-07", "gw-09", "gw-05", "gw-15"]
    assert {r.status: r.gateways for r in per_status} == {
        "ok": 13, "silent": 2, "late": 2, "evicting": 1, "rejecting": 2}
    assert [r.gateway_id for r in evicting] == ["gw-09"]
    assert {r.gateway_id for r in rejects} == REJECTING
    assert all(r.rejects == 20 for r in rejects), [tuple(r) for r in rejects]
