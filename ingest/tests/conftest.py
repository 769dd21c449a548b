"""Fixtures: one SparkSession per test run, the pitchside binary, output folders.

A test that needs the real gateway (`pitchside replay`) skips with a loud reason
when the binary is missing, and fails instead when PITCHSIDE_REQUIRE_SERVICES=1
(as in CI), so a green CI run means it ran. The binary is $PITCHSIDE_BIN, else
target/debug/pitchside (then target/release/pitchside) of this repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gateway_input

REPO = Path(__file__).resolve().parents[2]
REQUIRE = os.environ.get("PITCHSIDE_REQUIRE_SERVICES") == "1"


def _find_binary() -> tuple[Path | None, str]:
    """The pitchside binary and, when there is none that works, why."""
    candidates = [Path(os.environ["PITCHSIDE_BIN"])] if os.environ.get("PITCHSIDE_BIN") else [
        REPO / "target" / "debug" / "pitchside",
        REPO / "target" / "release" / "pitchside",
    ]
    for path in candidates:
        if not path.is_file():
            continue
        try:
            probe = subprocess.run([str(path), "replay", "--help"], capture_output=True, timeout=30)
        except OSError as e:
            return None, f"{path} does not run: {e}"
        if probe.returncode == 0 and b"--input" in probe.stdout + probe.stderr:
            return path, ""
        return None, (
            f"`{path} replay --help` exited {probe.returncode} without describing --input "
            f"(a stub build?): {(probe.stdout + probe.stderr).decode(errors='replace')[-300:]}"
        )
    return None, f"no pitchside binary ({', '.join(map(str, candidates))}); build it with `cargo build`"


@pytest.fixture(scope="session")
def pitchside_bin() -> Path:
    path, why = _find_binary()
    if path is not None:
        return path
    message = f"PITCHSIDE BINARY MISSING: {why}. The end-to-end ingest tests did not run."
    if REQUIRE:
        pytest.fail(message + " (PITCHSIDE_REQUIRE_SERVICES=1)", pytrace=False)
    print("\n" + "!" * 20 + " " + message, file=sys.stderr)
    pytest.skip(message)


def replay(binary: Path, workdir: Path, input_path: Path, outbox: Path,
           venue: str = gateway_input.VENUE, gateway: str = gateway_input.GATEWAY,
           extra_config: str = "", extra_args: tuple[str, ...] = ()) -> None:
    """Run `pitchside replay` with a test config; spool and state under workdir.

    `extra_config` is appended to the config file, `extra_args` to the command.
    """
    config = workdir / "pitchside.toml"
    config.write_text(gateway_input.config_toml(workdir, venue, gateway) + extra_config)
    result = subprocess.run(
        [str(binary), "replay", "--config", str(config), "--input", str(input_path), "--output", str(outbox),
         *extra_args],
        capture_output=True, timeout=300,
    )
    assert result.returncode == 0, f"pitchside replay failed:\n{result.stderr.decode()[-3000:]}"


@pytest.fixture(scope="session")
def replay_outbox(pitchside_bin, tmp_path_factory) -> Path:
    """The output folder of one real `pitchside replay` of gateway_input.lines()."""
    work = tmp_path_factory.mktemp("replay")
    input_path = work / "input.jsonl"
    input_path.write_text("".join(line + "\n" for line in gateway_input.lines()))
    outbox = work / "outbox"
    replay(pitchside_bin, work, input_path, outbox)
    return outbox


@pytest.fixture(scope="session")
def replay_again(pitchside_bin, replay_outbox):
    """Replay the same input once more into `outbox`, by the same gateway.

    Into a folder that already holds the first replay's files, the gateway
    numbers the new files on, so this is the same rows arriving in new files.
    """
    work = replay_outbox.parent

    def again(outbox: Path) -> None:
        replay(pitchside_bin, work, work / "input.jsonl", outbox)

    return again


@pytest.fixture(scope="session")
def spark():
    """One local SparkSession for the whole run (start-up takes seconds)."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("pitchside-ingest-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.streaming.minBatchesToRetain", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def copy_tree(src: Path, dst: Path) -> None:
    """Copy a gateway outbox into another (like a second upload into one bucket)."""
    shutil.copytree(src, dst, dirs_exist_ok=True)
