#!/usr/bin/env python3
"""Writes each device profile's sample and its SPEC §1 twin.

For every profile in this folder: `<profile>.sample`, the bytes the device
sends, and `<profile>.expected.jsonl`, the same events as §1 JSON lines.
Each reading is drawn once and written in both forms, so the twin does not
depend on pitchside's decoder. Numbers use the arithmetic the gateway uses
(a parsed decimal, times `scale`), printed with Python's repr, which Rust
parses to the same f64. Deterministic (seeded), standard library only.

Arrival-time profiles (radar, BLE) give line n the event time that
`replay --received-at 2026-11-29T14:00:00Z --received-step 1s` gives it:
start + (n - 1) s, every line counted (header, blank and bad lines too).

The BLE sample holds payloads only; they stand for the topic
    ble/hr/7/C7:1A:2B:3C:4D:5E
(replay and tap it with --topic ble/hr/7/C7:1A:2B:3C:4D:5E).

Each sample has one clear spike and a couple of bad lines (rejected as
`unmapped` or `non_finite`, and absent from the twin).
Run: python3 config/devices/make_samples.py
"""

import json
import os
import random
from datetime import datetime, timedelta, timezone

HERE = os.path.dirname(os.path.abspath(__file__))
ARRIVAL = datetime(2026, 11, 29, 14, 0, 0, tzinfo=timezone.utc)
START = datetime(2026, 11, 29, 14, 0, 0, tzinfo=timezone.utc)  # 19:30 at +05:30
LOCAL = timezone(timedelta(hours=5, minutes=30))
MPH = 1.609344
BLE_MAC, BLE_PLAYER = "C7:1A:2B:3C:4D:5E", 7


def rfc3339(t):
    """A UTC instant as RFC 3339 with Z (ms when it has them)."""
    s = t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return s + (".%03dZ" % (t.microsecond // 1000) if t.microsecond else "Z")


def event(sensor, device, t, **rest):
    """One §1 line: identity first, then the metrics (floats as repr)."""
    e = {"sensor": sensor, "device_id": device, "event_time": rfc3339(t)}
    e.update(rest)
    return json.dumps(e, separators=(",", ":"))


def sound_level_meter(rng):
    """crowd/decibels; local time at +05:30; a reading every 2 s."""
    lines, twin = [], []
    for i in range(80):
        t = START + timedelta(seconds=2 * i)
        stamp = t.astimezone(LOCAL).strftime("%Y-%m-%d %H:%M:%S")
        if i in (30, 61):
            lines.append(f"{stamp} LAeq,1s=--.- dB OVLD" if i == 30 else "CAL 94.0 dB")
            continue
        db = "%.1f" % (106.5 if i == 50 else rng.gauss(84.0, 1.2))
        peak = " LCpeak=%.1f dB" % (float(db) + 15 + rng.random() * 5) if i % 3 == 0 else ""
        lines.append(f"{stamp} LAeq,1s={db} dB{peak}")
        twin.append(event("crowd", "slm-north", t, zone_id="north-stand", decibels=float(db)))
    return lines, twin, {30: "unmapped", 61: "unmapped"}


def radar_gun(rng):
    """pitch/ball_speed from mph; arrival time; one line a second."""
    lines, twin = [], []
    for i in range(125):
        t = ARRIVAL + timedelta(seconds=i)
        if i in (40, 77, 100):
            lines.append({40: "S --.- MPH", 77: "", 100: "ERR LOW BATT"}[i])
            continue
        mph = "%.1f" % (118.0 if i == 90 else rng.gauss(84.0, 1.5))
        form = i % 3
        lines.append(f"S {mph} MPH" if form == 0 else f"A {mph}" if form == 1 else "%05.1f" % float(mph))
        twin.append(event("pitch", "radar-bowling-end", t, ball_speed=float(mph) * MPH + 0.0))
    return lines, twin, {40: "unmapped", 100: "unmapped"}


def ble_heart_rate(rng):
    """wearable/heart_rate from the bridge's JSON; arrival time; ids from the topic."""
    lines, twin = [], []
    for i in range(125):
        t = ARRIVAL + timedelta(seconds=i)
        if i in (33, 88):
            hr = {"bpm": "--"} if i == 33 else {"bpm": "NaN"}
            lines.append(json.dumps({"id": BLE_MAC, "hr": hr, "rssi": -70}, separators=(",", ":")))
            continue
        bpm = 196 if i == 70 else round(rng.gauss(142.0, 2.0))
        rssi = -55 - rng.randrange(15)
        lines.append(json.dumps({"id": BLE_MAC, "hr": {"bpm": bpm}, "rssi": rssi}, separators=(",", ":")))
        twin.append(event("wearable", BLE_MAC, t, player_id=BLE_PLAYER, heart_rate=float(bpm)))
    return lines, twin, {33: "unmapped", 88: "non_finite"}


def ball_tracker(rng):
    """pitch/ball_speed, spin_rate, impact from CSV with a header; epoch ms."""
    lines = ["timestamp_ms,tracker,delivery,speed_kmh,spin_rpm,impact_x,impact_y"]
    twin = []
    base_ms = int(START.timestamp()) * 1000
    for i in range(80):
        ms = base_ms + 2000 * i + rng.randrange(1000)
        t = datetime.fromtimestamp(ms // 1000, timezone.utc) + timedelta(milliseconds=ms % 1000)
        if i in (25, 57):
            lines.append(f"{ms},bt-main,{i + 1},fast,1850,0.1,-0.2" if i == 25 else f'{ms},bt-main,"{i + 1},141.2')
            continue
        speed = "%.1f" % (171.5 if i == 45 else rng.gauss(136.0, 2.5))
        spin = "%d" % round(rng.gauss(1850, 60))
        x, y = "%.2f" % rng.gauss(0, 0.15), "%.2f" % rng.gauss(-0.3, 0.2)
        lines.append(f"{ms},bt-main,{i + 1},{speed},{spin},{x},{y}")
        twin.append(event("pitch", "bt-main", t, delivery_id=i + 1, ball_speed=float(speed),
                          spin_rate=float(spin), impact_x=float(x), impact_y=float(y)))
    return lines, twin, {26: "unmapped", 58: "unmapped"}


def crowd_counter(rng):
    """crowd/density from line protocol; epoch ns; a point every 2 s."""
    lines, twin = [], []
    base_ns = int(START.timestamp()) * 10**9
    for i in range(80):
        ns = base_ns + 2 * 10**9 * i + rng.randrange(1000) * 10**6
        t = datetime.fromtimestamp(ns // 10**9, timezone.utc) + timedelta(microseconds=ns % 10**9 // 1000)
        if i in (20, 66):
            lines.append(f'crowd,zone=north-stand,counter=cc-12 density="high" {ns}' if i == 20
                         else f"crowd,zone=north-stand,counter=cc-12 density=nan {ns}")
            continue
        density = "%.2f" % (5.9 if i == 48 else rng.gauss(3.2, 0.08))
        count = round(float(density) * 250)
        lines.append(f"crowd,zone=north-stand,counter=cc-12 density={density},count={count}i {ns}")
        twin.append(event("crowd", "cc-12", t, zone_id="north-stand", density=float(density)))
    return lines, twin, {20: "unmapped", 66: "unmapped"}


def wearable_hub(rng):
    """wearable/heart_rate, acceleration, running_dist from logfmt; RFC 3339."""
    vests = [("vest-07", 7, "R. Sharma", 148.0), ("vest-10", 10, "K. Osei", 139.0), ("vest-18", 18, "Li", 152.0)]
    dist = {v[0]: 4000.0 + 300 * n for n, v in enumerate(vests)}
    lines, twin = [], []
    for r in range(33):
        for n, (vest, player, name, base) in enumerate(vests):
            t = START + timedelta(seconds=4 * r, milliseconds=250 + 400 * n)
            if (r, n) in ((12, 1), (27, 2)):
                lines.append(f"ts={rfc3339(t)} hub=wh-1 status=relink" if r == 12
                             else f"ts={rfc3339(t)} hub=wh-1 vest={vest} player={player} hr=NaN acc=1.0")
                continue
            hr = "%.0f" % (201 if (r, n) == (22, 0) else rng.gauss(base, 2.0))
            acc = "%.2f" % abs(rng.gauss(1.2, 0.3))
            dist[vest] += 8 + rng.random() * 12
            d = "%.1f" % dist[vest]
            quoted = f'"{name}"' if " " in name else name
            lines.append(f"ts={rfc3339(t)} hub=wh-1 vest={vest} player={player} name={quoted} hr={hr} acc={acc} dist={d}")
            twin.append(event("wearable", vest, t, player_id=player, player_name=name, heart_rate=float(hr),
                              acceleration=float(acc), running_dist=float(d)))
    return lines, twin, {12 * 3 + 1: "unmapped", 27 * 3 + 2: "non_finite"}


PROFILES = [sound_level_meter, radar_gun, ble_heart_rate, ball_tracker, crowd_counter, wearable_hub]

if __name__ == "__main__":
    for seed, make in enumerate(PROFILES, start=12):
        name = make.__name__.replace("_", "-")
        lines, twin, bad = make(random.Random(seed))
        with open(os.path.join(HERE, name + ".sample"), "w", newline="\n") as f:
            f.write("".join(line + "\n" for line in lines))
        with open(os.path.join(HERE, name + ".expected.jsonl"), "w", newline="\n") as f:
            f.write("".join(line + "\n" for line in twin))
        # Bad lines, 1-based as replay counts them, for tests/devices.rs.
        print(name, {i + 1: why for i, why in bad.items()})
