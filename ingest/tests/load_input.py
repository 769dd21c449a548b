"""Input for the player load end-to-end test (SPEC §11): ten minutes of a match.

Wearable events at about 1 Hz (each device on its own phase, with a few ms of
jitter), in arrival order, from 19:30:00Z. Each player runs at walking and
jogging pace with bursts of high-speed running and sprints, `running_dist`
cumulative in cm steps, heart rate following the effort with a lag (so it
crosses the zones), and an acceleration magnitude in g. On top of that, one
player each for SPEC §11's awkward cases:

* player 2: nothing for 8 s at 19:33:20 (a gap longer than max_gap), and a
  duplicate with other values (the first counts);
* player 4: a strap that drops out 1 s into a sprint, for 6 s;
* player 5: changes vest at 19:35:00 (the new vest counts from 0 m);
* player 6: a GPS jump of 25 m in one second at 19:36:30 (above max_speed);
* player 7: running_dist going back 3.2 m at 19:37:15;
* player 8: heart rate from a chest strap and distance from a GPS vest (two
  devices), a vest reading held back until it is late, a strap reading that
  arrives 4 s after later ones (out of order, not late), and one event whose
  only metric is null (rejected);
* player 3 also plays a second match (match 2) with player 30, 19:32–19:36;
* exact duplicate lines, pitch events in between, event times with 3, 6 and 9
  fraction digits, a `+05:30` offset and epoch milliseconds.

The roster has players 1, 2, 3, 4 and 7 (5, 6, 8 and 30 are not on it), one
without a name, positions with and without a `[[load.positions]]` entry.
"""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone

from load_reference import LoadParams, Position, RosterRow, Rule, WindowParams, event_time_us

VENUE = "testvenue"
GATEWAY = "gw-1"
T0 = datetime(2026, 11, 29, 19, 30, tzinfo=timezone.utc)
T0_MS = int(T0.timestamp()) * 1000
MINUTES = 10

ROSTER = [
    RosterRow(1, name="Ada Lovelace", position="winger", hr_max=200, target_trimp=250),
    RosterRow(2, name="Bea Okafor", position="winger"),
    RosterRow(3, name="O'Neil, Jr.", position="goalkeeper", hr_max=185, hr_rest=50, sprint_speed=6.5,
              target_trimp=120),
    RosterRow(4, position="defender", hr_max=195, hr_rest=58, hsr_speed=5.2),
    RosterRow(7, name="Zoë Ødegaard", position="midfielder", sprint_speed=7.2, target_trimp=300),
]
ROSTER_COMMENTS = ("Squad for 2026-11-29; hr_max from the pre-season test",)

# The configured run's [[load.rules]] (SPEC §11 "Rules."), each with a case of the text to check:
RULES = (
    # Held for 15 s: fires once per spell, again only after a reading below.
    Rule("red-zone", "hr_pct", 88, hold="15s"),
    # No hold: fires at the first reading of a spell. Player 4's strap drops out for 7 s
    # (> max_gap) at 77.4 % and comes back at 90.8 %: a gap starts a new spell, which
    # fires again; player 8's strap reading that arrives 4 s late is 77.4 % between
    # readings below 77 %: a reading at t ≤ p changes nothing, so it fires nothing.
    Rule("above-77", "hr_pct", 77, players=(2, 4, 8)),
    # 3 sprints within 3 minutes: a sprint older than that no longer counts.
    Rule("sprint-block", "sprints", 3, within="3m"),
    # Both limits: wingers and defenders among players 2, 4 and 7 (7, a midfielder, is not
    # watched though it sprints three times in a minute; 1, a winger, is not listed).
    Rule("repeated-sprints", "sprints", 2, within="90s", positions=("winger", "defender"), players=(2, 4, 7)),
    # Once per player and match (player 3 plays two); player 30 is listed but has no target.
    Rule("match-load", "load_pct", 8, players=(1, 3, 7, 30)),
)

# The configured run: every [load] key set, most away from their defaults, and rules.
LOAD = LoadParams(
    hr_max=190.0, hr_rest=55.0, zones=(55, 65, 75, 85, 92), hsr_speed=5.5, sprint_speed=7.0,
    sprint_dwell="2s", max_speed=12.0, max_gap="5s", max_players=1000,
    positions=(Position("winger", hsr_speed=6.0, sprint_speed=7.5), Position("defender", hsr_speed=5.0,
                                                                            sprint_speed=6.8)),
    rules=RULES,
)
WINDOWS = WindowParams(size="1m", watermark_delay="30s")

# player -> (match, device phase in ms, name carried by its events or None)
PLAYERS = {
    1: (1, 40, "Ada"),
    2: (1, 170, "Bea"),
    3: (1, 310, None),
    4: (1, 450, "Dee"),
    5: (1, 580, "Guest Five"),
    6: (1, 720, None),
    7: (1, 860, "Zoe"),
    8: (1, 900, "Guest Eight"),
}


def _ms(seconds: float) -> int:
    return T0_MS + round(seconds * 1000)


def _time_text(ms: int, style: int) -> str | int:
    """The event time in one of SPEC §1's spellings (all the same instant to the µs)."""
    t = datetime.fromtimestamp(ms // 1000, tz=timezone.utc)
    if style == 0:
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
    if style == 1:
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}000Z"
    if style == 2:  # nine digits: the last three are truncated
        return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}000789Z"
    if style == 3:
        local = t + timedelta(hours=5, minutes=30)
        return local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}+05:30"
    return ms  # epoch milliseconds


class Runner:
    """One player's effort second by second: speed (m/s), heart rate, acceleration."""

    def __init__(self, rng: random.Random, base: float):
        self.rng = rng
        self.base = base
        self.speed = base
        self.burst: list[float] = []
        self.hr = 100.0 + rng.uniform(-5, 5)
        self.dist = round(rng.uniform(0, 50), 2)

    def step(self, dt: float, forced: float | None = None) -> tuple[float, int, float]:
        rng = self.rng
        if forced is not None:
            speed = forced
        elif self.burst:
            speed = self.burst.pop(0)
        else:
            roll = rng.random()
            if roll < 0.012:  # a sprint of 2-6 s
                self.burst = [rng.uniform(7.3, 9.2) for _ in range(rng.randint(2, 6))] + [rng.uniform(4.5, 6.5)]
            elif roll < 0.035:  # high-speed running for 3-8 s
                self.burst = [rng.uniform(5.6, 6.9) for _ in range(rng.randint(3, 8))]
            self.base = min(max(self.base + rng.uniform(-0.4, 0.4), 0.8), 4.2)
            speed = self.burst.pop(0) if self.burst else self.base + rng.uniform(-0.3, 0.3)
        change = abs(speed - self.speed)
        self.speed = speed
        self.dist = round(self.dist + speed * dt, 2)
        target = 118 + 11 * speed
        self.hr += (target - self.hr) * 0.12 + rng.uniform(-1.5, 1.5)
        accel = round(1.0 + 0.35 * change / max(dt, 0.1) + abs(rng.gauss(0, 0.08)), 3)
        return self.dist, int(round(min(self.hr, 205))), accel


def events(seed: int = 29) -> list[dict]:
    """Every input event, in arrival order."""
    rng = random.Random(seed)
    timed: list[tuple[int, int, dict]] = []  # (event ms, tie-break, event)

    def add(ms: int, event: dict) -> None:
        timed.append((ms, len(timed), event))

    for player, (match, phase, name) in PLAYERS.items():
        runner = Runner(rng, rng.uniform(1.5, 3.0))
        device = f"vest-{player}"
        last_ms = None
        for s in range(MINUTES * 60):
            ms = _ms(s) + phase + rng.randint(-25, 25)
            seconds = ms / 1000 - T0_MS / 1000
            dt = 1.0 if last_ms is None else (ms - last_ms) / 1000
            forced = None
            if player == 4 and 240 <= s < 247:
                forced = 8.4  # the sprint the strap drops out of, 1 s in
            dist, hr, accel = runner.step(dt, forced)
            if player == 6 and s == 390:
                runner.dist = dist = round(dist + 25.0, 2)  # the GPS jump: 25 m more in one second
            last_ms = ms
            if player == 2 and 200 <= s < 208:
                continue  # 8 s of nothing
            if player == 4 and 241 <= s < 247:
                continue  # dropped out mid-sprint
            if player == 5 and s == 300:
                device, runner.dist = "vest-5b", 0.0  # a new vest counts from 0 m
                dist = round(runner.speed * dt, 2)
                runner.dist = dist
            if player == 7 and s == 435:
                runner.dist = round(runner.dist - 3.2, 2)
                dist = runner.dist
            event = {"sensor": "wearable", "device_id": device, "event_time": _time_text(ms, s % 5),
                     "match_id": match, "player_id": player}
            if name is not None and s % 9 != 4:  # not every event carries the name
                event["player_name"] = name
            if player == 8:
                # Two devices: the strap's heart rate, the vest's distance and acceleration.
                add(ms, {**event, "device_id": "strap-8", "heart_rate": hr})
                add(ms + 37, {**event, "device_id": "gps-8",
                              "event_time": _time_text(ms + 37, s % 5), "running_dist": dist,
                              "acceleration": accel})
                continue
            if rng.random() < 0.02:
                event["heart_rate"] = None  # null counts as absent
            else:
                event["heart_rate"] = hr
            event["running_dist"] = dist
            if rng.random() > 0.03:
                event["acceleration"] = accel
            add(ms, event)

    # Match 2 on the second pitch: player 3 again (another player there) and player 30.
    for player, phase in ((3, 500), (30, 650)):
        runner = Runner(rng, 2.0)
        for s in range(120, 360):
            ms = _ms(s) + phase
            dist, hr, accel = runner.step(1.0)
            add(ms, {"sensor": "wearable", "device_id": f"m2-vest-{player}", "event_time": _time_text(ms, 0),
                     "match_id": 2, "player_id": player, "player_name": f"Second {player}",
                     "heart_rate": hr, "running_dist": dist, "acceleration": accel})

    # Pitch deliveries (their own watermark: no effect on the wearables').
    for d in range(0, MINUTES * 60, 25):
        add(_ms(d) + 5, {"sensor": "pitch", "device_id": "radar-1", "event_time": _time_text(_ms(d) + 5, 0),
                         "match_id": 1, "delivery_id": d, "ball_speed": 120.0 + d % 17})

    timed.sort(key=lambda x: (x[0], x[1]))
    arrival = [e for _, _, e in timed]
    return _disorder(arrival)


def _find(arrival: list[dict], device: str, second: int) -> int:
    """Index of `device`'s event in second `second` after T0."""
    for i, e in enumerate(arrival):
        if e["device_id"] == device and _event_ms(e) // 1000 == T0_MS // 1000 + second:
            return i
    raise LookupError((device, second))


def _event_ms(e: dict) -> int:
    return event_time_us(e) // 1000


def _disorder(arrival: list[dict]) -> list[dict]:
    """The late event, the out-of-order one, duplicates and a rejected event."""
    # gps-8's 19:32:10 reading is held back until after 19:33:40: its window
    # (19:32) ends at or before the watermark (19:33:10 and more): late.
    late = arrival.pop(_find(arrival, "gps-8", 130))
    arrival.insert(_find(arrival, "vest-1", 220) + 1, late)
    # strap-8's 19:36:20 reading arrives after its 19:36:24 one: not late, but
    # before the player's previous heart rate (credits nothing).
    held = arrival.pop(_find(arrival, "strap-8", 380))
    arrival.insert(_find(arrival, "strap-8", 384) + 1, held)
    # Exact duplicate lines (the same reading again: counted once).
    for device, second in (("vest-1", 50), ("vest-3", 333), ("gps-8", 400), ("m2-vest-30", 200)):
        i = _find(arrival, device, second)
        arrival.insert(i + 1, dict(arrival[i]))
    # Player 2: the same device and time with other values: only the first counts.
    i = _find(arrival, "vest-2", 150)
    first = arrival[i]
    arrival.insert(i + 2, {**first, "heart_rate": 199, "running_dist": first["running_dist"] + 40.0})
    # An event whose only metric is null: rejected (no_metrics), moves nothing.
    i = _find(arrival, "vest-6", 500)
    arrival.insert(i + 1, {**{k: v for k, v in arrival[i].items()
                              if k not in ("heart_rate", "running_dist", "acceleration")}, "heart_rate": None,
                           "event_time": _time_text(_ms(599), 0)})
    return arrival


def lines(evs: list[dict]) -> list[str]:
    return [json.dumps(e, ensure_ascii=False) for e in evs]


def config_toml(roster_path: str | None, load: LoadParams | None) -> str:
    """What the replay's config adds to the base one: [windows] and [load] (none: defaults)."""
    out = f'\n[windows]\nsize = "{WINDOWS.size}"\nwatermark_delay = "{WINDOWS.watermark_delay}"\n'
    if load is not None:
        out += "\n" + load.toml(roster_path)
    return out


def speeds_of(evs: list[dict], device: str) -> list[float]:
    """The device's speeds between consecutive running_dist readings (for the scenario's own checks)."""
    points = [(_event_ms(e), e["running_dist"]) for e in evs
              if e["device_id"] == device and e.get("running_dist") is not None]
    points.sort()
    return [(d1 - d0) / ((t1 - t0) / 1000) for (t0, d0), (t1, d1) in zip(points, points[1:]) if t1 > t0]

