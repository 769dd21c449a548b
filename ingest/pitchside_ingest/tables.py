"""The catalogue of pitchside's output tables (SPEC §5) and how each is merged.

Everything else in this package is derived from the `TABLES` list below: the
Parquet schema a gateway file must have, the Spark schema the streaming reader
uses, the Delta DDL, and the MERGE keys. Change a table here and regenerate
`ddl/` with `python -m pitchside_ingest.ddl ingest/ddl`.

Columns are described with a small type vocabulary so that this module imports
neither pyarrow nor pyspark:

    string, long (INT64), double, timestamp (µs, UTC), binary, boolean, date

Besides the gateway's own columns, every lakehouse table has derived columns:

* `date` (DATE): the UTC date of the row's own time column (`event_time`,
  `window_start`, `received_at`, `timestamp`, `acked_at` or `at`). It is a
  partition column. It is *not* the `date=` folder of the file: that is the
  date of the file's earliest row, so the same row re-emitted in another file
  could land in another folder, while a date derived from the row is always the
  same, which lets the MERGE predicate prune on it safely.
* `source_file` (STRING): the gateway file the row came from,
  `{gateway_id}-{seq:012}.parquet` (lineage; for windows, the newer file wins).
* `occurrence` (BIGINT, `rejects` only): 1 for the first of identical rejects in
  one file, 2 for the second, … (see `REJECTS_KEY_DOC`).
"""

from __future__ import annotations

from dataclasses import dataclass

# Merge modes.
INSERT_ONLY = "insert_only"
"""A row whose key is already in the table is ignored (first file wins)."""
UPSERT_NEWER = "upsert_newer"
"""A row whose key is already in the table replaces it if it comes from a newer file."""

PARTITION_COLUMNS = ("venue_id", "date")
DATE_COLUMN = "date"
SOURCE_FILE_COLUMN = "source_file"
OCCURRENCE_COLUMN = "occurrence"

REJECTS_KEY_DOC = (
    "rejects have no id. Their key is (venue_id, gateway_id, source, received_at, "
    "reason, payload, occurrence), where occurrence numbers identical rejects within "
    "one file. Re-uploading a file, or the gateway writing the same rejects into "
    "another file, adds nothing; two identical bad lines received in the same "
    "microsecond are both kept."
)


@dataclass(frozen=True)
class Column:
    """One column: name, type from the vocabulary above, and nullability."""

    name: str
    type: str
    nullable: bool = False


@dataclass(frozen=True)
class TableSpec:
    """One output table: its file columns, how rows are keyed and merged."""

    name: str
    columns: tuple[Column, ...]
    """The gateway's Parquet columns, in file order."""
    time_column: str
    """The column whose UTC date is the `date` partition."""
    key: tuple[str, ...]
    """The MERGE key (columns of the lakehouse table)."""
    mode: str
    change_data_feed: bool = False
    comment: str = ""

    @property
    def derived_columns(self) -> tuple[Column, ...]:
        """Columns the ingest adds to the gateway's columns."""
        cols = [Column(DATE_COLUMN, "date"), Column(SOURCE_FILE_COLUMN, "string")]
        if self.name == "rejects":
            cols.append(Column(OCCURRENCE_COLUMN, "long"))
        return tuple(cols)

    @property
    def table_columns(self) -> tuple[Column, ...]:
        """Every column of the lakehouse table, in table order."""
        return self.columns + self.derived_columns

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def table_column_names(self) -> list[str]:
        return [c.name for c in self.table_columns]

    @property
    def non_key_columns(self) -> list[str]:
        """Table columns outside the key (tie-breakers when de-duplicating a batch)."""
        return [c for c in self.table_column_names if c not in self.key and c != SOURCE_FILE_COLUMN]


def _cols(*specs: str) -> tuple[Column, ...]:
    """Build columns from "name:type" or "name:type?" (nullable) strings."""
    out = []
    for spec in specs:
        name, typ = spec.split(":")
        out.append(Column(name, typ.rstrip("?"), typ.endswith("?")))
    return tuple(out)


def _metrics(*names: str) -> tuple[str, ...]:
    """`{m}_mean`, `{m}_min`, `{m}_max` as nullable doubles for each metric."""
    return tuple(f"{m}_{agg}:double?" for m in names for agg in ("mean", "min", "max"))


_GATEWAY = ("venue_id:string", "gateway_id:string")
_WINDOW = _GATEWAY + ("window_start:timestamp", "window_end:timestamp")
_READING = _GATEWAY + (
    "sensor:string",
    "device_id:string",
    "metric:string",
    "value:double",
    "match_id:long",
    "event_id:long?",
    "event_time:timestamp",
    "received_at:timestamp",
)
_DOWNTIME = "gateway_downtime_ms:long?"
"""Every windows table ends with it: ms of the window the gateway itself was not
running (0: ran throughout). Nullable: files of gateways before it have no such
column and ingest as NULL (unknown)."""
_ALERT_IDENTITY = ("player_id:long?", "player_name:string?", "zone_id:string?", "delivery_id:long?")
"""The identity of the event that raised a z-score alert (SPEC §10), NULL where
its kind has none. Files of gateways before SPEC §10 have no such columns and
ingest as NULL."""
_CLOCK = "clock_synchronized:boolean?"
"""The last column of raw, late and alerts: whether the gateway's clock was
synchronised when the event was accepted (SPEC §5); NULL from `replay` and from
gateways before the column."""
_READING_KEY = ("venue_id", "gateway_id", "sensor", "device_id", "metric", "event_time")

TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        name="alerts",
        columns=_cols(
            "alert_id:string", *_GATEWAY, "sensor:string", "device_id:string", "metric:string",
            "value:double", "z_score:double", "baseline_mean:double", "baseline_std:double",
            "baseline_count:long", "match_id:long", "event_time:timestamp", "detected_at:timestamp",
            *_ALERT_IDENTITY, _CLOCK,
        ),
        time_column="event_time",
        key=("alert_id",),
        mode=INSERT_ONLY,
        change_data_feed=True,
        comment="Rolling z-score alerts (SPEC §2) with the player, zone or delivery (SPEC §10), one row per alert_id.",
    ),
    TableSpec(
        name="windows_wearable",
        columns=_cols(
            *_WINDOW, "match_id:long", "player_id:long", "player_name:string?", "events:long",
            *_metrics("heart_rate", "acceleration", "running_dist"), _DOWNTIME,
        ),
        time_column="window_start",
        key=("venue_id", "gateway_id", "match_id", "player_id", "window_start"),
        mode=UPSERT_NEWER,
        comment="1-minute wearable windows per match and player (SPEC §3).",
    ),
    TableSpec(
        name="windows_pitch",
        columns=_cols(
            *_WINDOW, "match_id:long", "events:long",
            *_metrics("impact_x", "impact_y", "ball_speed", "spin_rate"), _DOWNTIME,
        ),
        time_column="window_start",
        key=("venue_id", "gateway_id", "match_id", "window_start"),
        mode=UPSERT_NEWER,
        comment="1-minute pitch windows per match (SPEC §3).",
    ),
    TableSpec(
        name="windows_crowd",
        columns=_cols(
            *_WINDOW, "match_id:long", "zone_id:string", "events:long",
            *_metrics("decibels", "density"), _DOWNTIME,
        ),
        time_column="window_start",
        key=("venue_id", "gateway_id", "match_id", "zone_id", "window_start"),
        mode=UPSERT_NEWER,
        comment="1-minute crowd windows per match and zone (SPEC §3).",
    ),
    TableSpec(
        name="windows_generic",
        columns=_cols(
            *_WINDOW, "device_id:string", "metric:string", "events:long",
            "value_mean:double?", "value_min:double?", "value_max:double?", _DOWNTIME,
        ),
        time_column="window_start",
        key=("venue_id", "gateway_id", "device_id", "metric", "window_start"),
        mode=UPSERT_NEWER,
        comment="1-minute generic-sensor windows per device and metric (SPEC §3).",
    ),
    TableSpec(
        name="fatigue_alerts",
        columns=_cols(
            "alert_id:string", *_GATEWAY, "match_id:long", "player_id:long", "player_name:string?",
            "window_start:timestamp", "window_end:timestamp", "heart_rate_mean:double",
            "baseline_mean:double", "baseline_std:double", "baseline_windows:long",
        ),
        time_column="window_start",
        key=("alert_id",),
        mode=INSERT_ONLY,
        change_data_feed=True,
        comment="Fatigue alerts from wearable windows (SPEC §4), one row per alert_id.",
    ),
    TableSpec(
        name="raw",
        columns=_cols(*_READING, _CLOCK),
        time_column="event_time",
        key=_READING_KEY,
        mode=INSERT_ONLY,
        comment="Every accepted, non-duplicate reading, long format (SPEC §5).",
    ),
    TableSpec(
        name="late",
        columns=_cols(*_READING, "watermark:timestamp", _CLOCK),
        time_column="event_time",
        key=_READING_KEY,
        mode=INSERT_ONLY,
        comment="Readings of late events with the watermark they missed (SPEC §3).",
    ),
    TableSpec(
        name="rejects",
        columns=_cols(
            *_GATEWAY, "source:string", "reason:string", "detail:string", "payload:binary",
            "received_at:timestamp",
        ),
        time_column="received_at",
        key=("venue_id", "gateway_id", "source", "received_at", "reason", "payload", OCCURRENCE_COLUMN),
        mode=INSERT_ONLY,
        comment="Rejected input with reason code and raw bytes (SPEC §1).",
    ),
    TableSpec(
        name="progress",
        columns=_cols(
            *_GATEWAY, "timestamp:timestamp", "input_rows:long", "input_rows_per_second:double",
            "processed_rows_per_second:double", "batch_duration_ms:double", "state_keys:long",
            "state_bytes:long", "open_windows:long", "watermark_wearable:timestamp?",
            "watermark_pitch:timestamp?", "watermark_crowd:timestamp?",
            "watermark_generic:timestamp?", "late_rows:long", "rejected_rows:long",
            "duplicate_rows:long", "alerts:long", "evictions:long", "spool_files:long",
            "spool_bytes:long", "uploaded_files:long", "upload_failures:long",
            "last_upload_at:timestamp?", "spool_evictions:long?",
            "duplicate_conflicts:long?",
        ),
        time_column="timestamp",
        key=("venue_id", "gateway_id", "timestamp"),
        mode=INSERT_ONLY,
        comment="Gateway progress rows every metrics.progress_interval (SPEC §6).",
    ),
    TableSpec(
        name="alert_acks",
        columns=_cols(
            *_GATEWAY, "alert_id:string", "by:string", "note:string?", "acked_at:timestamp",
        ),
        time_column="acked_at",
        # An ack is a fact: who saw which alert when. The same person acking the
        # same alert again later is a second fact (a second row); the same ack in
        # a re-uploaded file, or re-written after the gateway replays its journal
        # (same acked_at), is one. `note` is not part of it: one person cannot
        # ack one alert twice in the same microsecond with two notes.
        key=("venue_id", "gateway_id", "alert_id", "by", "acked_at"),
        mode=INSERT_ONLY,
        change_data_feed=True,
        comment="Acknowledgements of alerts on the venue console (SPEC §10), one row per ack.",
    ),
    TableSpec(
        name="device_events",
        columns=_cols(
            *_GATEWAY, "sensor:string", "device_id:string", "player_id:long?", "zone_id:string?",
            "event:string", "last_seen:timestamp", "at:timestamp",
        ),
        time_column="at",
        # A device has at most one event of a kind at one instant on one gateway.
        # player_id and zone_id describe the device (where it was last seen) and
        # are left out: nullable, and not what tells two events apart.
        key=("venue_id", "gateway_id", "sensor", "device_id", "event", "at"),
        mode=INSERT_ONLY,
        change_data_feed=True,
        comment="Device health events (SPEC §10): a device went silent, or came back.",
    ),
    TableSpec(
        # SPEC §11: written with each windows_wearable row (same window and
        # player), so it is keyed and merged like windows_wearable; the zones,
        # TRIMP, distance and sprint formulas are SPEC §11's.
        name="load_player_1m",
        columns=_cols(
            *_WINDOW, "match_id:long", "player_id:long", "player_name:string?", "position:string?",
            "on_roster:boolean", "hr_max:double", "target_trimp:double?",
            "zone1_s:double", "zone2_s:double", "zone3_s:double", "zone4_s:double", "zone5_s:double",
            "trimp_edwards:double", "trimp_banister:double", "distance_m:double", "hsr_distance_m:double",
            "hsr_s:double", "sprints:long", "accel_load:double",
            "session_distance_m:double", "session_hsr_distance_m:double", "session_sprints:long",
            "session_trimp_edwards:double", "session_accel_load:double", _DOWNTIME,
        ),
        time_column="window_start",
        key=("venue_id", "gateway_id", "match_id", "player_id", "window_start"),
        mode=UPSERT_NEWER,
        comment="Player load per match, player and minute: HR zones, TRIMP, distance, sprints (SPEC §11).",
    ),
    TableSpec(
        # SPEC §11 "Rules.": each firing of a [[load.rules]] entry, with an id
        # that holds its event_time, so it is keyed and merged like alerts.
        name="load_alerts",
        columns=_cols(
            "alert_id:string", *_GATEWAY, "rule:string", "watch:string", "match_id:long", "player_id:long",
            "player_name:string?", "position:string?", "device_id:string", "value:double", "threshold:double",
            "event_time:timestamp", "detected_at:timestamp",
        ),
        time_column="event_time",
        key=("alert_id",),
        mode=INSERT_ONLY,
        change_data_feed=True,
        comment="Player load rule alerts (SPEC §11): a [[load.rules]] entry fired for a player, one row per alert_id.",
    ),
)


@dataclass(frozen=True)
class ReferenceTable:
    """A table the venue or club fills itself, not from gateway files, that views read.

    Not ingested (no stream, no MERGE, no derived columns) and not partitioned:
    a few rows per match. `table_columns` is its columns, so the schema helpers
    of `arrow_batch` and `spark_batch` take it like a `TableSpec`.
    """

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    comment: str

    @property
    def table_columns(self) -> tuple[Column, ...]:
        return self.columns

    @property
    def table_column_names(self) -> list[str]:
        return [c.name for c in self.columns]


REFERENCE_TABLES: tuple[ReferenceTable, ...] = (
    ReferenceTable(
        # What the view player_load_period joins load_player_1m with (SPEC §11
        # knows nothing of halves: the gateway cannot tell kick-off from warm-up).
        name="match_periods",
        columns=_cols(
            "venue_id:string", "match_id:long", "period:string", "period_start:timestamp",
            "period_end:timestamp",
        ),
        key=("venue_id", "match_id", "period"),
        comment=(
            "Periods of each match (halves, extra time), filled by the club from its fixtures; "
            "read by the view player_load_period."
        ),
    ),
)

TABLE_NAMES: tuple[str, ...] = tuple(t.name for t in TABLES)
_BY_NAME = {t.name: t for t in TABLES}


def table(name: str) -> TableSpec:
    """The spec of table `name`; KeyError names the known tables."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown table {name!r}; known: {', '.join(TABLE_NAMES)}") from None
