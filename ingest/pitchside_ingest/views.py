"""The venue's analyses as SQL views over the ingested tables.

Each view is one file in `views/` holding a SELECT over bare table names
(`alerts`, `windows_pitch`, ...). Create them in the schema that holds the tables
(`USE pitchside` first, or pass `schema=`); Spark records that schema with the
view. `ddl/90_views.sql` is the same, generated, for a SQL editor.

Plain text only: this module imports nothing of the package, so that the DDL
(`ddl.py`) and the Spark side can both build on it. Views over plain Parquet
tables (no Delta) are `spark_sinks.register_parquet_tables`.
"""

from __future__ import annotations

from importlib import resources

VIEW_NAMES: tuple[str, ...] = (
    "fatigue_pitch_context",
    "alerts_per_device_hour",
    "alerts_per_player_match",
    "fleet_health",
    "fleet_health_timeline",
    "open_alerts",
    "device_outages",
    "player_load_match",
    "player_load_period",
    "player_load_acwr",
)


def view_sql(name: str) -> str:
    """The SELECT statement of view `name` (with its header comment)."""
    if name not in VIEW_NAMES:
        raise KeyError(f"unknown view {name!r}; known: {', '.join(VIEW_NAMES)}")
    return resources.files(__package__).joinpath("views", f"{name}.sql").read_text()


def create_view_sql(name: str, qualified_name: str | None = None, temporary: bool = False) -> str:
    """`CREATE OR REPLACE [TEMP] VIEW` for view `name`."""
    kind = "TEMPORARY VIEW" if temporary else "VIEW"
    return f"CREATE OR REPLACE {kind} {qualified_name or name} AS\n{view_sql(name).rstrip()}"


def create_views(spark, schema: str | None = None, temporary: bool = False) -> None:
    """Create every view with `spark`, in `schema` (the current one when None)."""
    if schema and not temporary:
        spark.sql(f"USE {schema}")
    for name in VIEW_NAMES:
        spark.sql(create_view_sql(name, temporary=temporary))

