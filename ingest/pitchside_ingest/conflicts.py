"""Lost commit races: which errors they are, and running a MERGE again after one.

Delta commits optimistically: a writer whose version was taken by another
writer's commit fails, and may try again on the new snapshot. Both the delta-rs
runner and the Spark job's Delta sink do, through `retry_conflicts`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger("pitchside_ingest.conflicts")

MERGE_ATTEMPTS = 5
"""MERGE attempts of one micro-batch when another writer's commit conflicts."""

CONFLICTS = (
    # Delta on Spark / Databricks (io.delta.exceptions.*): optimistic concurrency lost.
    "ConcurrentAppendException", "ConcurrentDeleteReadException", "ConcurrentDeleteDeleteException",
    "ConcurrentTransactionException", "ConcurrentWriteException", "MetadataChangedException",
    # delta-rs: the commit's version was taken by another writer.
    "CommitFailedError",
)


def is_conflict(error: BaseException) -> bool:
    """Whether an error is a lost commit race, after which the MERGE may run again.

    Spark raises Delta's Java exceptions wrapped (Py4J / captured exceptions),
    so the class names are looked for in the message as well as the type.
    """
    text = f"{type(error).__name__}: {error}"
    return any(name in text for name in CONFLICTS)


def retry_conflicts(merge: Callable[[], None], what: str, attempts: int = MERGE_ATTEMPTS) -> None:
    """Run `merge`, again after a lost commit race (up to `attempts` times in all).

    Running a batch's MERGE again is safe: with its transaction set, Delta skips
    it if the batch got in after all; without, the MERGE keys make it a no-op.
    """
    for attempt in range(1, attempts + 1):
        try:
            merge()
            return
        except Exception as error:  # noqa: BLE001 - anything but a conflict is raised
            if attempt == attempts or not is_conflict(error):
                raise
            log.warning("%s: another writer committed first (attempt %d of %d); merging again",
                        what, attempt, attempts)
