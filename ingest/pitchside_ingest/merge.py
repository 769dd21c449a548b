"""MERGE semantics shared by the Spark job and the delta-rs runner.

Both engines apply the same three rules to a batch of gateway rows:

1. **De-duplicate the batch** on the table's key: keep one row per key, ordered by
   `source_file` (first file wins for insert-only tables, newest file wins for
   windows), ties broken by the row's other columns so the result never depends
   on the order an engine happens to read rows in. (A MERGE whose source has two
   rows for one target row is an error in Delta, so this step is required.)
2. **Match** batch rows to table rows with `merge_predicate`: the partition
   columns (for pruning; both are functions of the key, so this is safe) and the
   key columns.
3. **Apply the table's mode**: insert-only tables insert unmatched rows and never
   touch matched ones; windows also replace a matched row when the batch row comes
   from a newer gateway file (`seq` is zero-padded, so file names compare in
   order within one gateway, and the key contains the gateway).

The predicates are plain SQL that both Spark and delta-rs (DataFusion) parse.
"""

from __future__ import annotations

from .tables import PARTITION_COLUMNS, SOURCE_FILE_COLUMN, UPSERT_NEWER, TableSpec

TARGET_ALIAS = "t"
SOURCE_ALIAS = "s"


def merge_predicate(spec: TableSpec, target: str = TARGET_ALIAS, source: str = SOURCE_ALIAS) -> str:
    """The ON condition of the MERGE: partition columns, then key columns."""
    columns = list(PARTITION_COLUMNS) + [c for c in spec.key if c not in PARTITION_COLUMNS]
    return " AND ".join(f"{target}.{c} = {source}.{c}" for c in columns)


def matched_update_condition(
    spec: TableSpec, target: str = TARGET_ALIAS, source: str = SOURCE_ALIAS
) -> str | None:
    """The condition under which a matched row is replaced, or None (never)."""
    if spec.mode == UPSERT_NEWER:
        return f"{source}.{SOURCE_FILE_COLUMN} > {target}.{SOURCE_FILE_COLUMN}"
    return None


def batch_order(spec: TableSpec) -> list[tuple[str, bool]]:
    """How rows with the same key are ranked in a batch: (column, ascending) pairs.

    The first row in this order is kept.
    """
    newest_first = spec.mode == UPSERT_NEWER
    return [(SOURCE_FILE_COLUMN, not newest_first)] + [(c, True) for c in spec.non_key_columns]


def merge_sql(spec: TableSpec, target_table: str, source_view: str) -> str:
    """A Delta `MERGE INTO` statement for Spark SQL / Databricks.

    `source_view` must hold a de-duplicated batch with every table column.
    """
    lines = [
        f"MERGE INTO {target_table} AS {TARGET_ALIAS}",
        f"USING {source_view} AS {SOURCE_ALIAS}",
        f"ON {merge_predicate(spec)}",
    ]
    condition = matched_update_condition(spec)
    if condition is not None:
        lines.append(f"WHEN MATCHED AND {condition} THEN UPDATE SET *")
    lines.append("WHEN NOT MATCHED THEN INSERT *")
    return "\n".join(lines)
