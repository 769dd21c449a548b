"""Acks end to end: `pitchside run` (simulator in, venue console on loopback),
acks POSTed to the console, then both engines and `open_alerts` (SPEC §10).

`replay` never writes `alert_acks` (acks come from people on the console), so
this runs the daemon: it waits for two z-score alerts and a player load rule
alert (SPEC §11: a `[[load.rules]]` entry every player's heart rate reaches) on
`/api/state`, acks the first z-score alert three times (Dr Khan twice, the physio
once: an ack is once per person, so Dr Khan's second is answered with his first,
as a retry would be) and the load alert once, stops the gateway with SIGTERM
(which writes and uploads every row) and ingests the store twice.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from datetime import datetime

import pytest

import gateway_input as gi
from helpers import canonical, delta_contents, gateway_files, normalize, read_gateway_table, spark_contents
from pitchside_ingest import local_runner, spark_sinks, views
from pitchside_ingest.spark_job import JobOptions, run
from test_tables import SPEC_COLUMNS, parquet_columns

ACKS = [("Dr Khan", "seen"), ("Dr Khan", None), ("Physio", "iced")]
# An ack is idempotent per (alert_id, by): the first of each person's is kept.
KEPT = [("Dr Khan", "seen"), ("Physio", "iced")]
# Loopback only, whatever the environment's proxy settings say.
HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def config(work, port: int) -> str:
    return f"""[venue]
id = "{gi.VENUE}"
gateway_id = "{gi.GATEWAY}"

[output]
store = "file://{work}/store"
spool_dir = "{work}/spool"
flush_interval = "1s"

[metrics]
listen = ""

[console]
listen = "127.0.0.1:{port}"

[load]

[[load.rules]]
name = "any-heart-rate"
watch = "hr_pct"
at_least = 1

[sources.simulator]
rate = 200
anomaly_rate = 0.02
seed = 7
"""


def alerts_of(base: str, kind: str) -> list[dict]:
    """The console's alerts of a kind now, newest first ([] while it is not up yet)."""
    try:
        with HTTP.open(f"{base}/api/state", timeout=2) as r:
            return [a for a in json.load(r)["alerts"] if a["kind"] == kind]
    except OSError:
        return []


def post_ack(base: str, alert_id: str, by: str, note: str | None) -> dict:
    body = json.dumps({"by": by, **({"note": note} if note is not None else {})}).encode()
    url = f"{base}/api/alerts/{urllib.parse.quote(alert_id, safe='')}/ack"
    req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    with HTTP.open(req, timeout=10) as r:
        assert r.status == 200
        return json.load(r)


@pytest.fixture(scope="module")
def gateway(pitchside_bin, tmp_path_factory):
    work = tmp_path_factory.mktemp("console_acks")
    port = free_port()
    (work / "pitchside.toml").write_text(config(work, port))
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([str(pitchside_bin), "run", "--config", str(work / "pitchside.toml")],
                            stdout=subprocess.DEVNULL, stderr=(work / "stderr.log").open("wb"))
    try:
        deadline = time.monotonic() + 60
        seen, load = alerts_of(base, "anomaly"), alerts_of(base, "load")
        while (len(seen) < 2 or not load) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            seen, load = alerts_of(base, "anomaly"), alerts_of(base, "load")
        assert len(seen) >= 2 and load, (
            f"no two z-score alerts and a load alert on the console in 60 s: "
            f"{(work / 'stderr.log').read_text()[-2000:]}")
        acked = seen[-1]["alert_id"]  # newest first: the oldest
        replies = []
        for by, note in ACKS:
            replies.append(post_ack(base, acked, by, note))
            time.sleep(0.01)  # distinct acked_at even on a coarse clock
        acked_load = load[-1]["alert_id"]
        post_ack(base, acked_load, "Physio", None)
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    assert code == 0, (work / "stderr.log").read_text()[-2000:]
    return {"store": work / "store", "acked": acked, "acked_load": acked_load, "replies": replies}


def test_the_gateway_writes_each_ack_in_the_spec_layout(gateway):
    files = gateway_files(gateway["store"], "alert_acks")
    assert files, "no alert_acks files"
    for path in files:
        assert parquet_columns(path) == SPEC_COLUMNS["alert_acks"], path
    rows = read_gateway_table(gateway["store"], "alert_acks").to_pylist()
    assert sorted(((r["alert_id"], r["by"], r["note"]) for r in rows), key=repr) == sorted(
        [(gateway["acked"], by, note) for by, note in KEPT] + [(gateway["acked_load"], "Physio", None)], key=repr)
    replied = {datetime.fromisoformat(r["acked_at"]) for r in gateway["replies"]}
    assert {r["acked_at"] for r in rows if r["alert_id"] == gateway["acked"]} == replied and len(replied) == len(KEPT)
    assert gateway["replies"][1] == gateway["replies"][0], "the repeat gets the first ack back"


def test_both_engines_hold_each_ack_once_and_open_alerts_leaves_the_acked_one_out(spark, gateway, tmp_path):
    store = str(gateway["store"])
    target = tmp_path / "delta"
    local_runner.run(store, target)
    again = local_runner.run(store, target, reprocess=True)
    assert sum(r.rows_inserted + r.rows_updated for r in again.values()) == 0
    delta = delta_contents(target, "alert_acks")
    assert len(delta) == len(KEPT) + 1

    run(spark, JobOptions(source=store, target=str(tmp_path / "spark"), checkpoint=str(tmp_path / "ck"),
                          target_format="parquet", auto_loader=False))
    tables = spark_contents(spark, tmp_path / "spark")
    assert tables["alert_acks"] == delta

    spark_sinks.register_parquet_tables(spark, str(tmp_path / "spark"))
    views.create_views(spark, temporary=True)
    raised = {r["alert_id"] for name in ("alerts", "fatigue_alerts", "load_alerts") for r in tables[name]}
    # The console's alert ids are the tables' (the ack joins on them), load alerts' too.
    assert gateway["acked"] in raised and gateway["acked_load"] in {r["alert_id"] for r in tables["load_alerts"]}
    assert len(raised) >= 3
    open_ids = {r.alert_id for r in spark.table("open_alerts").collect()}
    assert open_ids == raised - {gateway["acked"], gateway["acked_load"]}
    assert {r.kind for r in spark.table("open_alerts").collect()} >= {"anomaly", "load"}
    assert all(normalize(r["acked_at"]).date() == r["date"] for r in tables["alert_acks"])
