"""The Databricks Asset Bundle (databricks.yml, resources/), checked offline.

The `databricks` CLI (which has `bundle validate`) is a Go binary that no
package registry this project reaches ships, so the job resource is checked
with the bundle's own Python types (`databricks-bundles` on PyPI), which refuse
unknown or misspelt fields, and the rest by hand: variables used are declared,
the script and its options exist.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from pitchside_ingest.spark_job import parse_args

INGEST = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bundle():
    root = yaml.safe_load((INGEST / "databricks.yml").read_text())
    resources = {}
    for pattern in root["include"]:
        for f in sorted(INGEST.glob(pattern)):
            resources[f] = yaml.safe_load(f.read_text())
    return root, resources


def jobs_module():
    try:
        import databricks.bundles.jobs as jobs
    except ImportError:
        if os.environ.get("PITCHSIDE_REQUIRE_SERVICES") == "1":
            pytest.fail("databricks-bundles is not installed (ingest/requirements.txt)")
        pytest.skip("databricks-bundles is not installed (ingest/requirements.txt)")
    return jobs


def test_bundle_top_level(bundle):
    root, resources = bundle
    assert set(root) <= {"bundle", "include", "variables", "targets", "resources", "workspace", "artifacts", "sync"}
    assert root["bundle"]["name"] == "pitchside-ingest"
    assert {t: v.get("mode") for t, v in root["targets"].items()} == {"dev": "development", "prod": "production"}
    assert [t for t, v in root["targets"].items() if v.get("default")] == ["dev"]
    assert resources, "include matched no resource file"


def test_every_variable_used_is_declared(bundle):
    root, resources = bundle
    used = set()
    for f in resources:
        used |= set(re.findall(r"\$\{var\.([a-z_]+)\}", f.read_text()))
    assert used == set(root["variables"])
    assert all("default" in v and "description" in v for v in root["variables"].values())


def test_the_job_is_a_valid_job_and_runs_the_ingest_script(bundle):
    jobs = jobs_module()
    _, resources = bundle
    [(path, doc)] = resources.items()
    [(key, spec)] = doc["resources"]["jobs"].items()
    job = jobs.Job.from_dict(spec)  # raises on an unknown field at any depth
    assert key == "pitchside_ingest" and job.max_concurrent_runs == 1
    [task] = job.tasks
    script = (path.parent / task.spark_python_task.python_file).resolve()
    assert script == INGEST / "run_ingest.py" and script.exists()
    raw = spec["tasks"][0]["spark_python_task"]["parameters"]
    args = [a.replace("${var.", "").replace("}", "") for a in raw]
    opts = parse_args(args)  # the job's command line is one run_ingest.py accepts
    assert (opts.source, opts.target, opts.checkpoint) == ("source", "target", "checkpoint")
    assert opts.auto_loader and opts.available_now and opts.create_tables
    assert task.job_cluster_key == job.job_clusters[0].job_cluster_key
