"""Input for the end-to-end tests: a 6-minute match, and what pitchside must make of it.

One JSON line per event (SPEC §1), in arrival order, from 19:30:00Z:

* wearable: player 7 (w-7, "Ada") and player 9 (w-9), a heart rate every 10 s.
  Player 7's minute means are 120, 121, 122, 140, 125, 124, so minute 3 (19:33)
  is a fatigue alert (baseline 120/121/122: mean 121, sample std 1) and its first
  140 a z-score alert. Player 9 is a steady 130 (no alert of either kind).
* pitch: three deliveries a minute with spin rates around 1000, 1100, 1200,
  1500, 1300, 900 (so minute 3 spins above the match average) and a ball speed.
* crowd: zone "north", decibels every 30 s.
* generic: g-1 "temp" every 10 s for 2 minutes, alternating 20/21, then 60.
* one late wearable event (19:30:05 after 19:32:00 arrived), one exact
  duplicate, and five lines pitchside must reject (two of them identical).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

VENUE = "testvenue"
GATEWAY = "gw-1"
T0 = datetime(2026, 11, 29, 19, 30, tzinfo=timezone.utc)
MINUTES = 6
P7_HR = [120, 121, 122, 140, 125, 124]
SPIN = [1000, 1100, 1200, 1500, 1300, 900]
FATIGUE_MINUTE = 3
BAD_LINES = [
    "this is not json",
    '{"sensor":"wearable","device_id":"w-1","match_id":1,"player_id":1,"heart_rate":80}',
    '{"sensor":"pitch","device_id":"p-1","event_time":"2026-11-29T19:31:00Z","match_id":1,"spin_rate":"fast"}',
    "[1, 2, 3]",
    "this is not json",  # the same bad line again: in replay both get the same received_at
]
LATE_EVENT = {"sensor": "wearable", "device_id": "w-9", "event_time": "2026-11-29T19:30:05Z",
              "match_id": 1, "player_id": 9, "heart_rate": 130}


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def events() -> list[dict]:
    """The accepted events in time order (without the late event and duplicate)."""
    out = []
    for s in range(0, MINUTES * 60, 10):
        t = T0 + timedelta(seconds=s)
        minute = s // 60
        out.append({"sensor": "wearable", "device_id": "w-7", "event_time": iso(t), "match_id": 1,
                    "player_id": 7, "player_name": "Ada", "heart_rate": P7_HR[minute]})
        out.append({"sensor": "wearable", "device_id": "w-9", "event_time": iso(t), "match_id": 1,
                    "player_id": 9, "heart_rate": 130})
        if s % 20 == 0:
            spin = SPIN[minute] + (s % 60 - 20) / 2  # -10, 0, +10 around the minute's mean
            out.append({"sensor": "pitch", "device_id": "p-1", "event_time": iso(t), "match_id": 1,
                        "delivery_id": s // 20, "spin_rate": spin, "ball_speed": 130.0})
        if s % 30 == 0:
            out.append({"sensor": "crowd", "device_id": "c-1", "event_time": iso(t), "match_id": 1,
                        "zone_id": "north", "decibels": 80.0 + minute})
        if s <= 120:
            value = 60.0 if s == 120 else 20.0 + (s // 10) % 2
            out.append({"sensor": "generic", "device_id": "g-1", "event_time": iso(t), "match_id": 1,
                        "metric": "temp", "value": value})
    return out


def lines() -> list[str]:
    """The input file, in arrival order."""
    out = []
    for event in events():
        out.append(json.dumps(event))
        if event["device_id"] == "w-9" and event["event_time"] == "2026-11-29T19:31:00Z":
            out.append(json.dumps(event))  # exact duplicate: counted, goes nowhere
        if event["device_id"] == "w-9" and event["event_time"] == "2026-11-29T19:32:00Z":
            out.append(json.dumps(LATE_EVENT))
    return out[:20] + BAD_LINES + out[20:]


def config_toml(workdir: Path, venue: str = VENUE, gateway: str = GATEWAY) -> str:
    return f"""[venue]
id = "{venue}"
gateway_id = "{gateway}"

[output]
store = "file://{workdir}/store"
spool_dir = "{workdir}/spool"
"""


# What pitchside must write, per SPEC.

METRICS = {"wearable": ["heart_rate"], "pitch": ["spin_rate", "ball_speed"], "crowd": ["decibels"],
           "generic": None}


def readings() -> list[tuple[str, str, str, float, str]]:
    """(sensor, device, metric, value, event_time) of every accepted reading, arrival order."""
    out = []
    for line in lines():
        try:
            e = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(e, dict) or "event_time" not in e or isinstance(e.get("spin_rate"), str):
            continue
        names = METRICS[e["sensor"]]
        if names is None:
            out.append((e["sensor"], e["device_id"], e["metric"], e["value"], e["event_time"]))
        else:
            out += [(e["sensor"], e["device_id"], m, e[m], e["event_time"]) for m in names]
    seen = set()
    unique = []
    for r in out:  # the duplicate goes nowhere
        key = (r[0], r[1], r[2], r[4])
        if key not in seen:
            seen.add(key)
            unique.append(r)
    return unique


def expected_alerts(window: int = 100, threshold: float = 3.5, min_baseline: int = 10) -> dict[str, dict]:
    """SPEC §2 computed directly: alert_id -> value, z_score, baseline mean/std/count."""
    history: dict[tuple, list[float]] = defaultdict(list)
    alerts = {}
    for sensor, device, metric, x, event_time in readings():
        values = history[(sensor, device, metric)]
        n = len(values)
        if n >= min_baseline:
            mean = sum(values) / n
            std = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
            if std > 0 and abs(x - mean) / std > threshold:
                micros = int(datetime.fromisoformat(event_time.replace("Z", "+00:00")).timestamp()) * 1_000_000
                alerts[f"{VENUE}/{sensor}/{device}/{metric}/{micros}"] = {
                    "value": x, "z_score": (x - mean) / std, "baseline_mean": mean,
                    "baseline_std": std, "baseline_count": n,
                }
        values.append(x)
        del values[:-window]
    return alerts


EXPECTED_ROWS = {
    "windows_wearable": 2 * MINUTES,
    "windows_pitch": MINUTES,
    "windows_crowd": MINUTES,
    "windows_generic": 3,
    "fatigue_alerts": 1,
    "raw": None,  # len(readings()), see expected_rows()
    "late": 1,
    "rejects": len(BAD_LINES),
    "load_player_1m": 2 * MINUTES,  # SPEC §11: one with each windows_wearable row, [load] or not
}


def expected_rows() -> dict[str, int]:
    return {**EXPECTED_ROWS, "raw": len(readings()), "alerts": len(expected_alerts())}


def fatigue_alert_id() -> str:
    micros = int((T0 + timedelta(minutes=FATIGUE_MINUTE)).timestamp()) * 1_000_000
    return f"{VENUE}/fatigue/1/7/{micros}"
