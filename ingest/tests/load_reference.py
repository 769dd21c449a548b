"""SPEC §11 (player load) computed from the input, independently of the gateway.

Given the wearable events of a replay (SPEC §1 JSON objects, in arrival order),
the roster and the `[load]` / `[windows]` parameters, `expected_rows` returns
the `load_player_1m` rows pitchside must write, and `expected_alerts` the
`load_alerts` rows of the `[[load.rules]]` ("Rules." in SPEC §11). It is the
check the end-to-end test holds the gateway to, so it is written for reading,
not for speed: one pass to decide which readings are load readings (SPEC §2
duplicates, SPEC §3 lateness), one pass over those readings per SPEC §11's
formulas, evaluating the rules after each, then the rows.

Times are epoch microseconds (int) throughout; seconds are µs / 1e6.

What it leaves out, because the tests that use it never reach it: the detector
(only its duplicate rule matters here, read as "the same (device_id, metric,
event_time) as any earlier reading"; the gateway's is bounded by the
detector's window, which only differs for a repeat more than 100 readings
later), `windows.max_open_groups`, `load.max_players` eviction, input
validation (every event given is taken to be accepted), checkpoints and
reloads (a rule changed by a reload starts afresh). Replay mode: the end of
input flushes every window.

How it reads SPEC §11's rule text where the text leaves room (see
`evaluate_rules`): a reading at t ≤ p, which "credits nothing and changes
nothing", changes no rule state either; hr_pct's `s` is the time of the first
reading of the spell (the first at or above the threshold after one below, a
gap, or none); "sprints counted at times in (t − within, t]" are the times of
the readings at which each sprint reached `sprint_dwell` (where it is counted);
a rule with both `positions` and `players` is for players in both lists; a
target_trimp of 0 is no target (a % of it is undefined).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

MICROS = 1_000_000
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
METRICS = ("heart_rate", "acceleration", "running_dist")

# The columns of load_player_1m, in order (SPEC §11).
COLUMNS = (
    "venue_id", "gateway_id", "window_start", "window_end", "match_id", "player_id",
    "player_name", "position", "on_roster", "hr_max", "target_trimp",
    "zone1_s", "zone2_s", "zone3_s", "zone4_s", "zone5_s",
    "trimp_edwards", "trimp_banister", "distance_m", "hsr_distance_m", "hsr_s", "sprints",
    "accel_load", "session_distance_m", "session_hsr_distance_m", "session_sprints",
    "session_trimp_edwards", "session_accel_load", "gateway_downtime_ms",
)


# The columns of load_alerts, in order (SPEC §11 "Rules.").
ALERT_COLUMNS = (
    "alert_id", "venue_id", "gateway_id", "rule", "watch", "match_id", "player_id", "player_name",
    "position", "device_id", "value", "threshold", "event_time", "detected_at",
)


# ---------------------------------------------------------------- parameters

_DURATION = re.compile(r"^(\d+)(ms|s|m|h|d)$")
_UNIT_MICROS = {"ms": 1_000, "s": MICROS, "m": 60 * MICROS, "h": 3600 * MICROS, "d": 86400 * MICROS}


def duration_us(text: str) -> int:
    """A SPEC §7 duration string ("30s", "1m", "1500ms") in microseconds."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    return int(m.group(1)) * _UNIT_MICROS[m.group(2)]


@dataclass(frozen=True)
class Position:
    """A `[[load.positions]]` entry; a speed left out falls through to `[load]`."""

    name: str
    hsr_speed: float | None = None
    sprint_speed: float | None = None


@dataclass(frozen=True)
class LoadParams:
    """Section `[load]` (SPEC §11), defaults as there. Durations as strings."""

    hr_max: float = 190.0
    hr_rest: float = 60.0
    zones: tuple[float, ...] = (50, 60, 70, 80, 90)
    hsr_speed: float = 5.5
    sprint_speed: float = 7.0
    sprint_dwell: str = "1s"
    max_speed: float = 12.5
    max_gap: str = "5s"
    max_players: int = 1000
    positions: tuple[Position, ...] = ()
    rules: tuple["Rule", ...] = ()

    def position(self, name: str | None) -> Position | None:
        for p in self.positions:
            if p.name == name:
                return p
        return None

    def toml(self, roster_path: str | None) -> str:
        """The same parameters as a `[load]` section of a pitchside config."""
        lines = ["[load]"]
        if roster_path is not None:
            lines.append(f'roster = "{roster_path}"')
        lines += [
            f"hr_max = {self.hr_max!r}",
            f"hr_rest = {self.hr_rest!r}",
            f"zones = [{', '.join(repr(z) for z in self.zones)}]",
            f"hsr_speed = {self.hsr_speed!r}",
            f"sprint_speed = {self.sprint_speed!r}",
            f'sprint_dwell = "{self.sprint_dwell}"',
            f"max_speed = {self.max_speed!r}",
            f'max_gap = "{self.max_gap}"',
            f"max_players = {self.max_players}",
        ]
        for p in self.positions:
            lines += ["", "[[load.positions]]", f'name = "{p.name}"']
            if p.hsr_speed is not None:
                lines.append(f"hsr_speed = {p.hsr_speed!r}")
            if p.sprint_speed is not None:
                lines.append(f"sprint_speed = {p.sprint_speed!r}")
        for r in self.rules:
            lines += ["", r.toml()]
        return "\n".join(lines) + "\n"


WATCHES = ("hr_pct", "sprints", "load_pct")


@dataclass(frozen=True)
class Rule:
    """A `[[load.rules]]` entry (SPEC §11 "Rules."). Durations as strings."""

    name: str
    watch: str
    at_least: float
    hold: str = "0s"
    within: str = "10m"
    positions: tuple[str, ...] = ()
    players: tuple[int, ...] = ()

    def __post_init__(self):
        assert re.fullmatch(r"[a-z0-9-]{1,32}", self.name), self.name
        assert self.watch in WATCHES, self.watch

    def applies(self, player_id: int, position: str | None) -> bool:
        """Limited to its players and to its positions (both, when both are given)."""
        if self.players and player_id not in self.players:
            return False
        if self.positions and position not in self.positions:
            return False
        return True

    def toml(self) -> str:
        lines = ["[[load.rules]]", f'name = "{self.name}"', f'watch = "{self.watch}"',
                 f"at_least = {float(self.at_least)!r}"]
        # Left out at their defaults, so that the defaults are what the gateway uses too.
        if self.hold != "0s":
            lines.append(f'hold = "{self.hold}"')
        if self.within != "10m":
            lines.append(f'within = "{self.within}"')
        if self.positions:
            lines.append("positions = [" + ", ".join(f'"{p}"' for p in self.positions) + "]")
        if self.players:
            lines.append("players = [" + ", ".join(str(p) for p in self.players) + "]")
        return "\n".join(lines)


@dataclass(frozen=True)
class WindowParams:
    """Section `[windows]` as far as load needs it (SPEC §3)."""

    size: str = "1m"
    watermark_delay: str = "30s"


@dataclass(frozen=True)
class RosterRow:
    """One line of the roster CSV; None for an empty (or absent) cell."""

    player_id: int
    name: str | None = None
    position: str | None = None
    hr_max: float | None = None
    hr_rest: float | None = None
    hsr_speed: float | None = None
    sprint_speed: float | None = None
    target_trimp: float | None = None


ROSTER_COLUMNS = ("player_id", "name", "position", "hr_max", "hr_rest", "hsr_speed", "sprint_speed",
                  "target_trimp")


def roster_csv(rows: list[RosterRow], comments: tuple[str, ...] = ()) -> str:
    """A roster file for these rows: a header, `#` comment lines, a blank line."""
    out = io.StringIO()
    for c in comments:
        out.write(f"# {c}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ROSTER_COLUMNS)
    out.write("\n")
    for r in rows:
        writer.writerow(["" if getattr(r, c) is None else getattr(r, c) for c in ROSTER_COLUMNS])
    return out.getvalue()


def parse_roster(text: str) -> dict[int, RosterRow]:
    """A roster CSV (SPEC §11): a header line, `#` comment lines and blank lines skipped."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    out = {}
    for record in csv.DictReader(lines):
        def cell(name):
            value = (record.get(name) or "").strip()
            return value or None

        def number(name):
            value = cell(name)
            return None if value is None else float(value)

        row = RosterRow(
            player_id=int(cell("player_id")), name=cell("name"), position=cell("position"),
            hr_max=number("hr_max"), hr_rest=number("hr_rest"), hsr_speed=number("hsr_speed"),
            sprint_speed=number("sprint_speed"), target_trimp=number("target_trimp"),
        )
        assert row.player_id not in out, f"player_id {row.player_id} twice"
        out[row.player_id] = row
    return out


@dataclass(frozen=True)
class Settings:
    """What SPEC §11 uses for one player."""

    on_roster: bool
    name: str | None
    position: str | None
    hr_max: float
    hr_rest: float
    hsr_speed: float
    sprint_speed: float
    target_trimp: float | None = None  # the roster's only: no [load] default


def settings_for(player_id: int, roster: dict[int, RosterRow], load: LoadParams) -> Settings:
    """A roster cell, else (speeds only) the position's value, else the `[load]` default."""
    row = roster.get(player_id)
    if row is None:
        return Settings(False, None, None, load.hr_max, load.hr_rest, load.hsr_speed, load.sprint_speed)
    pos = load.position(row.position)

    def speed(own, of_position, default):
        if own is not None:
            return own
        if of_position is not None:
            return of_position
        return default

    return Settings(
        on_roster=True,
        name=row.name,
        position=row.position,
        hr_max=row.hr_max if row.hr_max is not None else load.hr_max,
        hr_rest=row.hr_rest if row.hr_rest is not None else load.hr_rest,
        hsr_speed=speed(row.hsr_speed, pos.hsr_speed if pos else None, load.hsr_speed),
        sprint_speed=speed(row.sprint_speed, pos.sprint_speed if pos else None, load.sprint_speed),
        target_trimp=row.target_trimp,
    )


# ---------------------------------------------------------------- event times

_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$")


def event_time_us(event: dict) -> int:
    """SPEC §1 `event_time` (or its alias `event_ts`) in epoch microseconds."""
    value = event["event_time"] if "event_time" in event else event["event_ts"]
    if isinstance(value, int):
        return value * 1_000  # epoch milliseconds
    m = _RFC3339.match(value)
    if not m:
        raise ValueError(f"not an RFC 3339 time: {value!r}")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    fraction = (m.group(7) or "").ljust(9, "0")
    micros = int(fraction[:6])  # 0-9 digits, truncated to µs
    local = datetime(year, month, day, hour, minute, second, tzinfo=timezone.utc)
    seconds = (local - EPOCH) // timedelta(seconds=1)
    offset = m.group(8)
    if offset != "Z":  # local time = UTC + offset
        sign = 1 if offset[0] == "+" else -1
        seconds -= sign * (int(offset[1:3]) * 3600 + int(offset[4:6]) * 60)
    return seconds * MICROS + micros


def to_datetime(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


# ---------------------------------------------------------------- step 1: load readings

@dataclass(frozen=True)
class Reading:
    """A load reading: a non-duplicate reading of an event added to its window."""

    match_id: int
    player_id: int
    window_start: int
    t: int
    device_id: str
    metric: str
    value: float
    player_name: str | None = None  # the event's (for load_alerts)


@dataclass
class Cell:
    """One (match_id, player_id, window): what windows_wearable has a row for."""

    match_id: int
    player_id: int
    window_start: int
    player_name: str | None = None  # the last non-null one of its events
    zone_s: list[float] = field(default_factory=lambda: [0.0] * 5)
    trimp_banister: float = 0.0
    distance_m: float = 0.0
    hsr_distance_m: float = 0.0
    hsr_s: float = 0.0
    sprints: int = 0
    accel_load: float = 0.0


def load_readings(events: list[dict], windows: WindowParams) -> tuple[list[Reading], dict[tuple, Cell]]:
    """The load readings in arrival order, and the cells (windows) they fall in.

    Per SPEC §3: one watermark for the wearable kind, the largest event time
    accepted so far minus the delay, updated after each event; an event whose
    window ends at or before it is late and goes into no window. Per SPEC §2: a
    reading with the same (device_id, metric, event_time) as an earlier one is a
    duplicate and goes nowhere; an event all of whose readings are duplicates is
    not added to its window either.
    """
    size = duration_us(windows.size)
    delay = duration_us(windows.watermark_delay)
    latest = None  # the largest accepted wearable event time
    seen = set()  # (device_id, metric, event_time) of every reading so far
    readings = []
    cells: dict[tuple, Cell] = {}
    for event in events:
        if event.get("sensor", "wearable") != "wearable":
            continue  # other kinds have their own watermark
        present = [(m, event[m]) for m in METRICS if event.get(m) is not None]
        if not present:
            continue  # no metrics: rejected, moves nothing
        t = event_time_us(event)
        start = (t // size) * size
        watermark = None if latest is None else latest - delay
        late = watermark is not None and start + size <= watermark

        fresh = []
        for metric, value in present:
            key = (event["device_id"], metric, t)
            if key in seen:
                continue  # a duplicate
            seen.add(key)
            fresh.append((metric, value))

        if not late and fresh:
            match_id = event.get("match_id", 0)
            player_id = event["player_id"]
            cell = cells.get((match_id, player_id, start))
            if cell is None:
                cell = Cell(match_id, player_id, start)
                cells[(match_id, player_id, start)] = cell
            if event.get("player_name") is not None:
                cell.player_name = event["player_name"]
            for metric, value in fresh:
                readings.append(Reading(match_id, player_id, start, t, event["device_id"], metric,
                                        float(value), event.get("player_name")))

        latest = t if latest is None else max(latest, t)
    return readings, cells


# ---------------------------------------------------------------- step 2: SPEC §11's rules

@dataclass
class Previous:
    """The previous reading of one metric of one player."""

    t: int
    device_id: str
    value: float


@dataclass
class Run:
    """An open run of intervals at or above sprint speed."""

    start: int
    counted: bool = False


@dataclass
class PlayerState:
    heart_rate: Previous | None = None
    acceleration: Previous | None = None
    running_dist: Previous | None = None
    run: Run | None = None


def zone_of(h: float, hr_max: float, zones: tuple[float, ...]) -> int | None:
    """The largest k (1-5) with 100·h/hr_max ≥ zones[k]; None below zone 1."""
    percent = 100 * h / hr_max
    zone = None
    for k, edge in enumerate(zones, start=1):
        if percent >= edge:
            zone = k
    return zone


def banister_gain(dt_s: float, h: float, hr_max: float, hr_rest: float) -> float:
    """dt/60s · r · 0.64 · e^(1.92·r), r = clamp((h − hr_rest)/(hr_max − hr_rest), 0, 1)."""
    r = (h - hr_rest) / (hr_max - hr_rest)
    r = min(max(r, 0.0), 1.0)
    return dt_s / 60 * r * 0.64 * math.exp(1.92 * r)


def heart_rate(state: PlayerState, r: Reading, cell: Cell, s: Settings, load: LoadParams) -> None:
    prev = state.heart_rate
    if prev is not None and r.t <= prev.t:
        return  # credits nothing, changes nothing
    if prev is not None and r.t - prev.t <= duration_us(load.max_gap):
        dt_s = (r.t - prev.t) / MICROS
        zone = zone_of(r.value, s.hr_max, load.zones)
        if zone is not None:
            cell.zone_s[zone - 1] += dt_s
        cell.trimp_banister += banister_gain(dt_s, r.value, s.hr_max, s.hr_rest)
    # The device does not matter for heart rate: a new strap continues the player's.
    state.heart_rate = Previous(r.t, r.device_id, r.value)


def running_dist(state: PlayerState, r: Reading, cell: Cell, s: Settings, load: LoadParams) -> None:
    prev = state.running_dist
    if prev is not None and r.t <= prev.t:
        return  # credits nothing, changes nothing (an open run stays open)
    credited = False
    if (prev is not None and prev.device_id == r.device_id
            and r.t - prev.t <= duration_us(load.max_gap) and r.value >= prev.value):
        dd = r.value - prev.value
        dt_s = (r.t - prev.t) / MICROS
        v = dd / dt_s
        if v <= load.max_speed:
            credited = True
            cell.distance_m += dd
            if v >= s.hsr_speed:
                cell.hsr_distance_m += dd
                cell.hsr_s += dt_s
            if v >= s.sprint_speed:
                if state.run is None:
                    state.run = Run(start=prev.t)
                if not state.run.counted and r.t - state.run.start >= duration_us(load.sprint_dwell):
                    cell.sprints += 1  # in the window of the reading at which it reaches the dwell
                    state.run.counted = True
            else:
                state.run = None
    if not credited:
        # Another device, a gap, a decrease, a speed above max_speed, or the
        # first reading: nothing credited, and any run ends.
        state.run = None
    state.running_dist = Previous(r.t, r.device_id, r.value)


def acceleration(state: PlayerState, r: Reading, cell: Cell, s: Settings, load: LoadParams) -> None:
    prev = state.acceleration
    if prev is not None and r.t <= prev.t:
        return
    if prev is not None and prev.device_id == r.device_id and r.t - prev.t <= duration_us(load.max_gap):
        cell.accel_load += abs(r.value - prev.value)
    state.acceleration = Previous(r.t, r.device_id, r.value)


FORMULAS = {"heart_rate": heart_rate, "running_dist": running_dist, "acceleration": acceleration}


# ---------------------------------------------------------------- step 2b: the rules

@dataclass
class RuleState:
    """One rule's state for one player (match_id, player_id)."""

    spell_start: int | None = None
    """hr_pct: s, the time of the first reading of the current spell at or above."""
    fired: bool = False
    """hr_pct: fired in this spell; load_pct: fired in this match."""
    sprint_times: list[int] = field(default_factory=list)
    """sprints: when each sprint counted since the rule last fired was counted."""


@dataclass(frozen=True)
class Firing:
    rule: Rule
    reading: Reading
    value: float


@dataclass(frozen=True)
class Changed:
    """What one load reading did, as far as the rules look at it."""

    previous_heart_rate: Previous | None
    """The player's previous heart rate before this reading (for hr_pct's gaps)."""
    heart_rate_taken: bool
    """A heart-rate reading after the previous one (t > p): the only kind hr_pct sees."""
    sprint_counted: bool
    """This reading counted a sprint (its run reached sprint_dwell)."""


def match_trimp_edwards(cells: dict[tuple, Cell], match_id: int, player_id: int) -> float:
    """The match's Edwards TRIMP of the player so far: every window it has load in."""
    return sum(k * c.zone_s[k - 1] / 60 for (m, p, _), c in cells.items() if (m, p) == (match_id, player_id)
               for k in range(1, 6))


def evaluate_rules(rules: tuple[Rule, ...], states: dict[tuple, RuleState], r: Reading, changed: Changed,
                   s: Settings, cells: dict[tuple, Cell], load: LoadParams) -> list[Firing]:
    """SPEC §11 "Rules.", after one load reading r of player (r.match_id, r.player_id)."""
    out = []
    for rule in rules:
        if not rule.applies(r.player_id, s.position):
            continue
        st = states.setdefault((r.match_id, r.player_id, rule.name), RuleState())
        if rule.watch == "hr_pct":
            # "100·h/hr_max ≥ at_least at every heart-rate reading since a time s, with no two
            # consecutive ones more than max_gap apart, and t − s ≥ hold: fires once [...];
            # a reading below, or a gap, starts it again."
            if not changed.heart_rate_taken:
                continue  # not a heart-rate reading, or one at t ≤ p (changes nothing)
            pct = 100 * r.value / s.hr_max
            if pct < rule.at_least:
                st.spell_start, st.fired = None, False
                continue
            prev = changed.previous_heart_rate
            gap = prev is not None and r.t - prev.t > duration_us(load.max_gap)
            if st.spell_start is None or gap:
                st.spell_start, st.fired = r.t, False
            if not st.fired and r.t - st.spell_start >= duration_us(rule.hold):
                st.fired = True
                out.append(Firing(rule, r, pct))
        elif rule.watch == "sprints":
            # "at a counted sprint, when at_least sprints were counted at times in (t − within, t]
            # since the rule last fired for the player: fires (value = the count), and counts afresh."
            if not changed.sprint_counted:
                continue
            st.sprint_times.append(r.t)
            recent = [x for x in st.sprint_times if r.t - duration_us(rule.within) < x <= r.t]
            if len(recent) >= rule.at_least:
                out.append(Firing(rule, r, float(len(recent))))
                st.sprint_times = []
        else:
            # "when the match's Edwards TRIMP so far (emitted and open windows) reaches at_least %
            # of the roster's target_trimp: fires once per player and match (value = the %).
            # Players without a target are not watched."
            if not s.target_trimp or st.fired:
                continue
            pct = 100 * match_trimp_edwards(cells, r.match_id, r.player_id) / s.target_trimp
            if pct >= rule.at_least:
                st.fired = True
                out.append(Firing(rule, r, pct))
    return out


def credit(events: list[dict], roster: dict[int, RosterRow], load: LoadParams,
           windows: WindowParams) -> tuple[dict[tuple, Cell], list[Firing]]:
    """Steps 1 and 2: the cells with their load, and what the rules fired, in arrival order."""
    readings, cells = load_readings(events, windows)
    states: dict[tuple[int, int], PlayerState] = {}
    rule_states: dict[tuple, RuleState] = {}
    firings = []
    for r in readings:
        state = states.setdefault((r.match_id, r.player_id), PlayerState())
        cell = cells[(r.match_id, r.player_id, r.window_start)]
        s = settings_for(r.player_id, roster, load)
        previous_hr, sprints_before = state.heart_rate, cell.sprints
        FORMULAS[r.metric](state, r, cell, s, load)
        changed = Changed(
            previous_heart_rate=previous_hr,
            heart_rate_taken=r.metric == "heart_rate" and (previous_hr is None or r.t > previous_hr.t),
            sprint_counted=cell.sprints > sprints_before,
        )
        firings += evaluate_rules(load.rules, rule_states, r, changed, s, cells, load)
    return cells, firings


# ---------------------------------------------------------------- step 3: the rows

def expected_rows(
    events: list[dict],
    roster: dict[int, RosterRow] | None = None,
    load: LoadParams = LoadParams(),
    windows: WindowParams = WindowParams(),
    venue_id: str = "testvenue",
    gateway_id: str = "gw-1",
) -> list[dict]:
    """The load_player_1m rows for these events, ordered by (match_id, player_id, window_start)."""
    roster = roster or {}
    size = duration_us(windows.size)
    cells, _ = credit(events, roster, load, windows)

    rows = []
    session: dict[tuple[int, int], dict[str, float]] = {}
    for key in sorted(cells):
        cell = cells[key]
        s = settings_for(cell.player_id, roster, load)
        trimp_edwards = sum(k * cell.zone_s[k - 1] / 60 for k in range(1, 6))
        totals = session.setdefault((cell.match_id, cell.player_id), {
            "distance_m": 0.0, "hsr_distance_m": 0.0, "sprints": 0, "trimp_edwards": 0.0, "accel_load": 0.0})
        totals["distance_m"] += cell.distance_m
        totals["hsr_distance_m"] += cell.hsr_distance_m
        totals["sprints"] += cell.sprints
        totals["trimp_edwards"] += trimp_edwards
        totals["accel_load"] += cell.accel_load
        rows.append({
            "venue_id": venue_id,
            "gateway_id": gateway_id,
            "window_start": to_datetime(cell.window_start),
            "window_end": to_datetime(cell.window_start + size),
            "match_id": cell.match_id,
            "player_id": cell.player_id,
            "player_name": s.name if s.name is not None else cell.player_name,
            "position": s.position,
            "on_roster": s.on_roster,
            "hr_max": float(s.hr_max),
            "target_trimp": None if s.target_trimp is None else float(s.target_trimp),
            **{f"zone{k}_s": cell.zone_s[k - 1] for k in range(1, 6)},
            "trimp_edwards": trimp_edwards,
            "trimp_banister": cell.trimp_banister,
            "distance_m": cell.distance_m,
            "hsr_distance_m": cell.hsr_distance_m,
            "hsr_s": cell.hsr_s,
            "sprints": cell.sprints,
            "accel_load": cell.accel_load,
            "session_distance_m": totals["distance_m"],
            "session_hsr_distance_m": totals["hsr_distance_m"],
            "session_sprints": totals["sprints"],
            "session_trimp_edwards": totals["trimp_edwards"],
            "session_accel_load": totals["accel_load"],
            "gateway_downtime_ms": 0,  # always 0 from replay (SPEC §3)
        })
    assert all(tuple(r) == COLUMNS for r in rows)
    return rows


def expected_alerts(
    events: list[dict],
    roster: dict[int, RosterRow] | None = None,
    load: LoadParams = LoadParams(),
    windows: WindowParams = WindowParams(),
    venue_id: str = "testvenue",
    gateway_id: str = "gw-1",
) -> list[dict]:
    """The load_alerts rows for these events, in the order they fired, without
    `detected_at` (the gateway's clock when it raised the alert)."""
    roster = roster or {}
    _, firings = credit(events, roster, load, windows)
    rows = []
    for f in firings:
        r, s = f.reading, settings_for(f.reading.player_id, roster, load)
        rows.append({
            "alert_id": f"{venue_id}/load/{f.rule.name}/{r.match_id}/{r.player_id}/{r.t}",
            "venue_id": venue_id,
            "gateway_id": gateway_id,
            "rule": f.rule.name,
            "watch": f.rule.watch,
            "match_id": r.match_id,
            "player_id": r.player_id,
            "player_name": s.name if s.name is not None else r.player_name,
            "position": s.position,
            "device_id": r.device_id,
            "value": f.value,
            "threshold": float(f.rule.at_least),
            "event_time": to_datetime(r.t),
        })
    assert all(tuple(r) == ALERT_COLUMNS[:-1] for r in rows)
    return rows


# ---------------------------------------------------------------- comparing

def row_differences(got: list[dict], want: list[dict], rel: float = 1e-9, abs_: float = 1e-9) -> list[str]:
    """Where two lists of load_player_1m rows differ: keys first, then each column.

    Integers, strings, booleans and times exactly; floats to `rel` relative or
    `abs_` absolute error. Timestamps are compared as UTC instants.
    """
    def key(r):
        return (r["match_id"], r["player_id"], _utc(r["window_start"]))

    got_by = {key(r): r for r in got}
    want_by = {key(r): r for r in want}
    out = []
    if len(got_by) != len(got):
        out.append(f"{len(got) - len(got_by)} repeated keys in the gateway's rows")
    for k in sorted(set(want_by) - set(got_by)):
        out.append(f"missing row {k}")
    for k in sorted(set(got_by) - set(want_by)):
        out.append(f"unexpected row {k}")
    for k in sorted(set(got_by) & set(want_by)):
        g, w = got_by[k], want_by[k]
        for c in COLUMNS:
            out.extend(_cell_difference(k, c, g.get(c), w[c], rel, abs_))
    return out


def alert_differences(got: list[dict], want: list[dict], rel: float = 1e-9, abs_: float = 1e-9) -> list[str]:
    """Where two lists of load_alerts rows differ, by alert_id, as `row_differences`
    does; `detected_at` (the gateway's clock) is only required to be there."""
    got_by = {r["alert_id"]: r for r in got}
    want_by = {r["alert_id"]: r for r in want}
    out = []
    if len(got_by) != len(got):
        out.append(f"{len(got) - len(got_by)} repeated alert_ids in the gateway's rows")
    for k in sorted(set(want_by) - set(got_by)):
        w = want_by[k]
        out.append(f"missing alert {k} (value {w['value']!r})")
    for k in sorted(set(got_by) - set(want_by)):
        g = got_by[k]
        out.append(f"unexpected alert {k} (value {g['value']!r})")
    for k in sorted(set(got_by) & set(want_by)):
        g, w = got_by[k], want_by[k]
        if not isinstance(g.get("detected_at"), datetime):
            out.append(f"{k} detected_at: gateway {g.get('detected_at')!r}")
        for c in ALERT_COLUMNS[:-1]:
            out.extend(_cell_difference(k, c, g.get(c), w[c], rel, abs_))
    return out


def _cell_difference(k, c: str, a, b, rel: float, abs_: float) -> list[str]:
    """The difference of one cell, gateway `a` against reference `b`: floats to
    `rel`/`abs_`, timestamps as UTC instants, the rest exactly (type included)."""
    if isinstance(b, float) and isinstance(a, float):
        same = math.isclose(a, b, rel_tol=rel, abs_tol=abs_)
    elif isinstance(b, datetime):
        same = a is not None and _utc(a) == _utc(b)
    else:
        same = type(a) is type(b) and a == b
    return [] if same else [f"{k} {c}: gateway {a!r}, reference {b!r}"]


def _utc(t: datetime) -> datetime:
    return t.replace(tzinfo=timezone.utc) if t.tzinfo is None else t.astimezone(timezone.utc)
