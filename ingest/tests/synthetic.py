"""A small gateway outbox written with pyarrow, with known duplicates.

The real gateway (`pitchside replay`) never writes the same row into two files
within one run, so the awkward cases of the MERGE — a re-uploaded file, a window
re-emitted by a newer file (wearable and load), identical rejects, a row after midnight in a file
dated the day before, an ack written again after a journal replay, one person
acking an alert twice, a device silent and back at one instant, a load alert
re-emitted in a later file — are built here
by hand, in the gateway's exact layout
and schema (`arrow_batch.file_schema`, which a test checks against SPEC §5).

`write_outbox(store, part)` writes part 1 (the first upload) or part 2 (later
files, some repeating part 1's rows); `EXPECTED_*` say what the tables must hold.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pitchside_ingest.arrow_batch import file_schema
from pitchside_ingest.tables import table

VENUE = "testvenue"
GATEWAY = "gw-1"
T0 = datetime(2026, 11, 29, 19, 30, tzinfo=timezone.utc)


def at(minutes: float = 0, seconds: float = 0) -> datetime:
    return T0 + timedelta(minutes=minutes, seconds=seconds)


def write_file(store: Path, table_name: str, seq: int, rows: list[dict], gateway: str = GATEWAY) -> Path:
    """Write rows as the gateway would: `{table}/venue_id=V/date=D/{gw}-{seq:012}.parquet`."""
    spec = table(table_name)
    earliest = min(r[spec.time_column] for r in rows)
    folder = store / table_name / f"venue_id={VENUE}" / f"date={earliest:%Y-%m-%d}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{gateway}-{seq:012d}.parquet"
    data = pa.Table.from_pylist(rows, schema=file_schema(spec))
    pq.write_table(data, path, compression="zstd")
    return path


def _gw(**row) -> dict:
    return {"venue_id": VENUE, "gateway_id": GATEWAY, **row}


def alert(device: str, minute: float, value: float, sensor: str = "generic", metric: str = "temp",
          **identity) -> dict:
    """A z-score alert; `identity` sets player_id, player_name, zone_id, delivery_id (else NULL)."""
    t = at(minute)
    micros = int(t.timestamp() * 1_000_000)
    return _gw(
        alert_id=f"{VENUE}/{sensor}/{device}/{metric}/{micros}", sensor=sensor, device_id=device,
        metric=metric, value=value, z_score=5.0, baseline_mean=20.0, baseline_std=1.0,
        baseline_count=10, match_id=1, event_time=t, detected_at=t, **identity,
    )


def old_file(path: Path, *dropped: str) -> Path:
    """Rewrite a gateway file as a gateway from before `dropped` columns existed wrote it."""
    pq.write_table(pq.read_table(path).drop_columns(list(dropped)), path, compression="zstd")
    return path


ALERT_IDENTITY = ("player_id", "player_name", "zone_id", "delivery_id")


def write_alerts_old_and_new(store: Path) -> None:
    """An alerts file of a gateway before SPEC §10 (no identity columns), then a new one.

    The old file's alert is a wearable's (its player is unknown: NULL); the new
    file has one alert per kind, each with its kind's identity.
    """
    old_file(write_file(store, "alerts", 1, [alert("w-7", 0, 190.0, "wearable", "heart_rate")]),
             *ALERT_IDENTITY)
    write_file(store, "alerts", 2, [
        alert("w-7", 1, 191.0, "wearable", "heart_rate", player_id=7, player_name="Ada"),
        alert("w-7", 2, 30.0, "wearable", "acceleration", player_id=7, player_name="Ada"),
        alert("w-9", 2, 192.0, "wearable", "heart_rate", player_id=9),
        alert("slm-1", 1, 120.0, "crowd", "decibels", zone_id="north"),
        alert("p-1", 1, 160.0, "pitch", "ball_speed", delivery_id=4),
        alert("g-1", 1, 60.0),
    ])


# (device, metric) -> (player_id, player_name, zone_id, delivery_id) of write_alerts_old_and_new.
EXPECTED_ALERT_IDENTITY = {
    ("w-7", "heart_rate", 0): (None, None, None, None),
    ("w-7", "heart_rate", 1): (7, "Ada", None, None),
    ("w-7", "acceleration", 2): (7, "Ada", None, None),
    ("w-9", "heart_rate", 2): (9, None, None, None),
    ("slm-1", "decibels", 1): (None, None, "north", None),
    ("p-1", "ball_speed", 1): (None, None, None, 4),
    ("g-1", "temp", 1): (None, None, None, None),
}


def alert_identities(rows: list[dict]) -> dict:
    """Rows of the alerts table in the shape of EXPECTED_ALERT_IDENTITY."""
    out = {}
    for r in rows:
        t = r["event_time"].replace(tzinfo=timezone.utc) if r["event_time"].tzinfo is None else r["event_time"]
        minute = round((t - T0).total_seconds() / 60)
        out[(r["device_id"], r["metric"], minute)] = tuple(r[c] for c in ALERT_IDENTITY)
    return out


def wearable_window(minute: int, hr: float | None, events: int = 10) -> dict:
    row = _gw(
        window_start=at(minute), window_end=at(minute + 1), match_id=1, player_id=7,
        player_name="Ada", events=events,
    )
    for m in ("heart_rate", "acceleration", "running_dist"):
        v = hr if m == "heart_rate" else None
        row.update({f"{m}_mean": v, f"{m}_min": v, f"{m}_max": v})
    return row


def load_window(minute: int, distance: float, sprints: int = 0, session_distance: float | None = None) -> dict:
    """A load_player_1m row of player 7 (SPEC §11); the session totals as if every minute ran `distance`."""
    zones = {f"zone{k}_s": float(k) for k in range(1, 6)}  # 15 s in all, Edwards (1+4+9+16+25)/60
    edwards = 55 / 60
    return _gw(
        window_start=at(minute), window_end=at(minute + 1), match_id=1, player_id=7,
        player_name="Ada Lovelace", position="winger", on_roster=True, hr_max=200.0, target_trimp=5.0,
        **zones,
        trimp_edwards=edwards, trimp_banister=0.5, distance_m=distance, hsr_distance_m=distance / 4,
        hsr_s=10.0, sprints=sprints, accel_load=12.5,
        session_distance_m=session_distance if session_distance is not None else distance * (minute + 1),
        session_hsr_distance_m=distance / 4 * (minute + 1), session_sprints=sprints * (minute + 1),
        session_trimp_edwards=edwards * (minute + 1), session_accel_load=12.5 * (minute + 1),
        gateway_downtime_ms=0,
    )


def pitch_window(minute: int, spin: float) -> dict:
    row = _gw(window_start=at(minute), window_end=at(minute + 1), match_id=1, events=4)
    for m in ("impact_x", "impact_y", "ball_speed", "spin_rate"):
        v = spin if m == "spin_rate" else 1.0
        row.update({f"{m}_mean": v, f"{m}_min": v, f"{m}_max": v})
    return row


def fatigue(minute: int, hr: float) -> dict:
    micros = int(at(minute).timestamp() * 1_000_000)
    return _gw(
        alert_id=f"{VENUE}/fatigue/1/7/{micros}", match_id=1, player_id=7, player_name="Ada",
        window_start=at(minute), window_end=at(minute + 1), heart_rate_mean=hr,
        baseline_mean=121.0, baseline_std=1.0, baseline_windows=3,
    )


def reading(device: str, t: datetime, value: float) -> dict:
    return _gw(
        sensor="generic", device_id=device, metric="temp", value=value, match_id=1,
        event_id=None, event_time=t, received_at=t,
    )


def reject(payload: bytes, t: datetime) -> dict:
    return _gw(source="replay:input.jsonl", reason="invalid_json", detail="expected value", payload=payload, received_at=t)


def progress(minute: int, input_rows: int, late: int, rejected: int, uploaded_at: datetime | None) -> dict:
    return _gw(
        timestamp=at(minute), input_rows=input_rows, input_rows_per_second=input_rows / 10,
        processed_rows_per_second=input_rows / 5, batch_duration_ms=2.5, state_keys=3,
        state_bytes=1000 + minute, open_windows=2, watermark_wearable=at(minute, -30),
        watermark_pitch=None, watermark_crowd=None, watermark_generic=None, late_rows=late,
        rejected_rows=rejected, duplicate_rows=0, alerts=1, evictions=0, spool_files=1,
        spool_bytes=2048, uploaded_files=1, upload_failures=0, last_upload_at=uploaded_at,
        spool_evictions=0, duplicate_conflicts=0,
    )


def alert_id(device: str, minute: float, sensor: str = "generic", metric: str = "temp") -> str:
    """The id `alert(device, minute, ...)` gets."""
    return alert(device, minute, 0.0, sensor, metric)["alert_id"]


def ack(alert: str, by: str, t: datetime, note: str | None = None) -> dict:
    """An `alert_acks` row: `by` saw `alert` (an alert_id) at t."""
    return _gw(alert_id=alert, by=by, note=note, acked_at=t)


def device_event(device: str, event: str, last_seen: datetime, t: datetime, sensor: str = "wearable",
                 player_id: int | None = None, zone_id: str | None = None) -> dict:
    """A `device_events` row: `device` went `silent` or came `back` at t."""
    return _gw(sensor=sensor, device_id=device, player_id=player_id, zone_id=zone_id, event=event,
               last_seen=last_seen, at=t)


def fatigue_id(minute: int) -> str:
    return fatigue(minute, 0.0)["alert_id"]


def load_alert(rule: str, watch: str, minute: float, value: float, threshold: float, player: int = 7) -> dict:
    """A `load_alerts` row (SPEC §11): rule `rule` fired for player 7 (on the roster) or another (not)."""
    t = at(minute)
    micros = int(t.timestamp() * 1_000_000)
    on_roster = player == 7
    return _gw(
        alert_id=f"{VENUE}/load/{rule}/1/{player}/{micros}", rule=rule, watch=watch, match_id=1,
        player_id=player, player_name="Ada Lovelace" if on_roster else None,
        position="winger" if on_roster else None, device_id=f"w-{player}", value=value, threshold=threshold,
        event_time=t, detected_at=t + timedelta(milliseconds=3),
    )


def load_alert_id(rule: str, minute: float, player: int = 7) -> str:
    return load_alert(rule, "", minute, 0.0, 0.0, player)["alert_id"]


NEAR_MIDNIGHT = datetime(2026, 11, 29, 23, 59, 50, tzinfo=timezone.utc)
AFTER_MIDNIGHT = datetime(2026, 11, 30, 0, 0, 10, tzinfo=timezone.utc)


def write_outbox(store: Path, part: int) -> None:
    """Write part 1 or part 2 of the synthetic outbox into store."""
    if part == 1:
        write_file(store, "alerts", 1, [alert("g-1", 1, 30.0), alert("g-2", 2, 31.0)])
        write_file(store, "windows_wearable", 1, [wearable_window(m, hr) for m, hr in enumerate([120, 121, 122, 140])])
        write_file(store, "windows_pitch", 1, [pitch_window(m, s) for m, s in enumerate([1000, 1100, 1200, 1500])])
        write_file(store, "load_player_1m", 1, [load_window(m, 100.0 + m) for m in range(4)])
        write_file(store, "fatigue_alerts", 1, [fatigue(3, 140.0)])
        write_file(store, "load_alerts", 1, [
            load_alert("red-zone", "hr_pct", 2.5, 93.7, 92.0),
            load_alert("repeated-sprints", "sprints", 3.25, 3.0, 3.0, player=9),
        ])
        write_file(store, "raw", 1, [
            reading("g-1", at(0), 20.0), reading("g-1", at(1), 30.0),
            reading("g-2", NEAR_MIDNIGHT, 1.0), reading("g-2", AFTER_MIDNIGHT, 2.0),
        ])
        write_file(store, "late", 1, [{**reading("g-1", at(0, 5), 19.0), "watermark": at(0, 30)}])
        write_file(store, "rejects", 1, [reject(b"{oops", at(0)), reject(b"{oops", at(0)), reject(b"[1]", at(1))])
        write_file(store, "progress", 1, [progress(0, 100, 0, 3, None), progress(1, 50, 1, 0, at(1))])
        write_file(store, "alert_acks", 1, [
            ack(alert_id("g-1", 1), "Dr Khan", at(1, 30), "seen"),
            ack(fatigue_id(3), "Physio", at(4)),
            # The same person again, later: a second fact, kept.
            ack(alert_id("g-1", 1), "Dr Khan", at(3), "still high"),
            ack(load_alert_id("red-zone", 2.5), "Physio", at(2, 40), "subbed off"),
        ])
        write_file(store, "device_events", 1, [
            device_event("w-7", "silent", at(2), at(2, 15), player_id=7),
            device_event("w-7", "back", at(2), at(2, 40), player_id=7),
            device_event("slm-1", "silent", at(3), at(3, 15), "crowd", zone_id="north"),
            # Silent and back at the same instant (its own input advanced the clock).
            device_event("p-1", "back", at(3, 45), at(4), "pitch"),
            device_event("p-1", "silent", at(3, 45), at(4), "pitch"),
        ])
    else:
        # Re-emitted alert (same id) plus a new one.
        write_file(store, "alerts", 2, [alert("g-1", 1, 30.0), alert("g-1", 5, 40.0)])
        # The same for load alerts.
        write_file(store, "load_alerts", 2, [
            load_alert("red-zone", "hr_pct", 2.5, 93.7, 92.0),
            load_alert("match-load", "load_pct", 4.5, 80.4, 80.0),
        ])
        # Minute 3 re-emitted with more events (the newer file wins), minute 4 new.
        write_file(store, "windows_wearable", 2, [wearable_window(3, 141, events=12), wearable_window(4, 125)])
        # The same for load: minute 3 re-emitted with more distance (the newer file wins), minute 4 new.
        write_file(store, "load_player_1m", 2, [load_window(3, 120.0, sprints=1), load_window(4, 90.0)])
        # The same reading again, and a new one.
        write_file(store, "raw", 2, [reading("g-1", at(1), 30.0), reading("g-1", at(2), 21.0)])
        # One of the identical rejects again (dropped), and a new one.
        write_file(store, "rejects", 2, [reject(b"{oops", at(0)), reject(b"nope", at(2))])
        write_file(store, "progress", 2, [progress(1, 50, 1, 0, at(1)), progress(2, 70, 0, 1, at(2))])
        # An ack written again (a journal replay after a crash: same acked_at), and a new one.
        write_file(store, "alert_acks", 2, [
            ack(alert_id("g-1", 1), "Dr Khan", at(1, 30), "seen"),
            ack(alert_id("g-1", 5), "Dr Khan", at(6)),
        ])
        # w-7's back again (dropped), slm-1 back, w-7 silent again (no back yet).
        write_file(store, "device_events", 2, [
            device_event("w-7", "back", at(2), at(2, 40), player_id=7),
            device_event("slm-1", "back", at(3), at(3, 50), "crowd", zone_id="north"),
            device_event("w-7", "silent", at(5), at(5, 15), player_id=7),
        ])


# Rows each table holds after part 1, and after parts 1 and 2.
EXPECTED_ROWS_PART1 = {
    "alerts": 2, "windows_wearable": 4, "windows_pitch": 4, "windows_crowd": 0,
    "windows_generic": 0, "fatigue_alerts": 1, "raw": 4, "late": 1, "rejects": 3, "progress": 2,
    "alert_acks": 4, "device_events": 5, "load_player_1m": 4, "load_alerts": 2,
}
EXPECTED_ROWS_BOTH = {
    **EXPECTED_ROWS_PART1, "alerts": 3, "windows_wearable": 5, "raw": 5, "rejects": 4, "progress": 3,
    "alert_acks": 5, "device_events": 7, "load_player_1m": 5, "load_alerts": 3,
}

# After parts 1 and 2: the alerts nobody acked (kind, alert_id), and the outages
# (device, silent_at, back_at, outage_seconds) of `device_outages`.
EXPECTED_OPEN_ALERTS = {
    ("anomaly", alert_id("g-2", 2)),
    ("load", load_alert_id("repeated-sprints", 3.25, player=9)),
    ("load", load_alert_id("match-load", 4.5)),
}
EXPECTED_OUTAGES = {
    ("w-7", at(2, 15), at(2, 40), 40.0),
    ("slm-1", at(3, 15), at(3, 50), 50.0),
    ("p-1", at(4), at(4), 15.0),
    ("w-7", at(5, 15), None, None),
}
