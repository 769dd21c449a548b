"""The venue's analyses as SQL views over the ingested tables.

Each view is one file in `views/` holding a SELECT over bare table names
(`alerts`, `windows_pitch`, ...). Create them in the schema that holds the tables
(`USE pitchside` first, or pass `schema=`); Spark records that schema with the
view. `ddl/90_views.sql` is the same, generated, for a SQL editor.
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


def register_parquet_tables(spark, root: str) -> None:
    """Temp views named like the tables over the Parquet sink's folders `{root}/{table}`.

    For querying the views without Delta (`--target-format parquet`); a table
    with no folder yet is an empty view with the right columns.
    """
    from .spark_batch import table_schema
    from .spark_sinks import ParquetSink
    from .tables import TABLES

    sink = ParquetSink(root)
    for spec in TABLES:
        df = sink.read(spark, spec)
        if df is None:
            df = spark.createDataFrame([], table_schema(spec))
        df.createOrReplaceTempView(spec.name)
