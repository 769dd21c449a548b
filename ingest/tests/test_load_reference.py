"""The SPEC §11 reference (load_reference.py) against cases computed by hand.

Each case is a few seconds of one player's readings, small enough that the
expected zones, TRIMP, distances and sprints are worked out in the comments.
These tests need neither the gateway nor Spark.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest

from load_reference import (
    ALERT_COLUMNS,
    COLUMNS,
    LoadParams,
    Position,
    RosterRow,
    Rule,
    WindowParams,
    alert_differences,
    event_time_us,
    expected_alerts,
    expected_rows,
    parse_roster,
    roster_csv,
    row_differences,
    settings_for,
    zone_of,
)

T0 = datetime(2026, 11, 29, 19, 30, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def ev(seconds: float, hr=None, dist=None, acc=None, device="v-1", player=1, match=1, name=None) -> dict:
    """A wearable event `seconds` after T0 (µs precision, RFC 3339)."""
    e = {"sensor": "wearable", "device_id": device,
         "event_time": at(seconds).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "match_id": match, "player_id": player}
    if name is not None:
        e["player_name"] = name
    for k, v in (("heart_rate", hr), ("running_dist", dist), ("acceleration", acc)):
        if v is not None:
            e[k] = v
    return e


def banister(dt_s: float, r: float) -> float:
    return dt_s / 60 * r * 0.64 * math.exp(1.92 * r)


def only(rows: list[dict]) -> dict:
    assert len(rows) == 1, rows
    return rows[0]


def by_minute(rows: list[dict]) -> dict[int, dict]:
    return {(r["window_start"] - T0) // timedelta(minutes=1): r for r in rows}


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# ---------------------------------------------------------------- heart rate

def test_zones_and_trimp_of_a_few_seconds_of_heart_rate():
    # HRmax 190, rest 60: zone edges at 95, 114, 133, 152, 171 bpm (50..90 %).
    rows = expected_rows([
        ev(0, hr=100),   # the first reading: no interval yet
        ev(1, hr=120),   # 63.2 %: zone 2, 1 s; r = 60/130
        ev(2, hr=140),   # 73.7 %: zone 3, 1 s; r = 80/130
        ev(4, hr=180),   # 94.7 %: zone 5, 2 s; r = 120/130
        ev(5, hr=90),    # 47.4 %: no zone, 1 s; r = 30/130 (Banister still gains)
        ev(6, hr=50),    # below hr_rest: no zone, r clamped to 0
        ev(7, hr=95),    # exactly 50 %: zone 1
        ev(8, hr=171),   # exactly 90 %: zone 5
        ev(9, hr=170),   # 89.5 %: zone 4
        ev(10, hr=133),  # exactly 70 %: zone 3
    ])
    r = only(rows)
    assert [r[f"zone{k}_s"] for k in range(1, 6)] == [1.0, 1.0, 2.0, 1.0, 3.0]
    # Edwards: Σ k · zone_k seconds / 60 = (1 + 2 + 6 + 4 + 15) / 60.
    assert close(r["trimp_edwards"], 28 / 60)
    want = (banister(1, 60 / 130) + banister(1, 80 / 130) + banister(2, 120 / 130) + banister(1, 30 / 130)
            + 0.0 + banister(1, 35 / 130) + banister(1, 111 / 130) + banister(1, 110 / 130)
            + banister(1, 73 / 130))
    assert close(r["trimp_banister"], want)
    assert (r["hr_max"], r["distance_m"], r["sprints"], r["accel_load"]) == (190.0, 0.0, 0, 0.0)


def test_zone_of_reads_percent_of_hr_max_against_the_lower_edges():
    zones = (50, 60, 70, 80, 90)
    assert [zone_of(h, 190, zones) for h in (94, 95, 113, 114, 133, 151, 152, 171, 220)] == [
        None, 1, 1, 2, 3, 3, 4, 5, 5]
    # A player's own HRmax moves the edges: 150 bpm is 75 % of 200 but 83 % of 180.
    assert (zone_of(150, 200, zones), zone_of(150, 180, zones)) == (3, 4)


def test_a_gap_longer_than_max_gap_credits_nothing_and_exactly_max_gap_does():
    rows = expected_rows([
        ev(0, hr=150, dist=0.0),
        ev(1, hr=150, dist=5.0),    # 1 s in zone 3; 5 m
        ev(7, hr=150, dist=40.0),   # 6 s > max_gap 5 s: nothing (would be 35 m at 5.8 m/s)
        ev(8, hr=150, dist=45.0),   # 1 s; 5 m
        ev(13, hr=150, dist=70.0),  # exactly 5 s: 5 s in zone 3; 25 m at 5 m/s
    ])
    r = only(rows)
    assert (r["zone3_s"], r["distance_m"], r["hsr_distance_m"]) == (7.0, 35.0, 0.0)
    assert close(r["trimp_banister"], banister(7, 90 / 130))


def test_heart_rate_continues_across_a_change_of_device():
    rows = expected_rows([
        ev(0, hr=120, device="strap-a"),
        ev(1, hr=120, device="strap-a"),  # 1 s
        ev(2, hr=120, device="strap-b"),  # another strap: 1 s all the same
        ev(3, hr=120, device="strap-b"),  # 1 s
    ])
    assert only(rows)["zone2_s"] == 3.0


# ---------------------------------------------------------------- distance and sprints

SPRINT = [0.0, 3.0, 9.0, 16.5, 24.0, 30.0, 34.0]  # steps of 3, 6, 7.5, 7.5, 6, 4 m in 1 s


def test_distance_high_speed_running_and_one_sprint():
    rows = expected_rows([ev(s, dist=d) for s, d in enumerate(SPRINT)])
    r = only(rows)
    # Everything counts as distance; the 6, 7.5, 7.5, 6 m seconds are at ≥ 5.5 m/s.
    assert (r["distance_m"], r["hsr_distance_m"], r["hsr_s"]) == (34.0, 27.0, 4.0)
    # 7.5 m/s from s=2 to s=4: one run, reaching the 1 s dwell at s=3.
    assert r["sprints"] == 1
    assert (r["session_distance_m"], r["session_hsr_distance_m"], r["session_sprints"]) == (34.0, 27.0, 1)


def test_a_sprint_counts_in_the_window_where_it_reaches_the_dwell():
    # The same steps starting at 19:30:56, so s=3 is 19:30:59 and s=4 is 19:31:00.
    events = [ev(56 + s, dist=d) for s, d in enumerate(SPRINT)]
    one_second = by_minute(expected_rows(events))
    assert (one_second[0]["sprints"], one_second[1]["sprints"]) == (1, 0)
    two_seconds = by_minute(expected_rows(events, load=LoadParams(sprint_dwell="2s")))
    assert (two_seconds[0]["sprints"], two_seconds[1]["sprints"]) == (0, 1)
    # Distance credits the window of the later reading: 3+6+7.5 m before 19:31, 7.5+6+4 after.
    assert (two_seconds[0]["distance_m"], two_seconds[1]["distance_m"]) == (16.5, 17.5)
    assert (two_seconds[0]["session_distance_m"], two_seconds[1]["session_distance_m"]) == (16.5, 34.0)
    assert (two_seconds[0]["session_sprints"], two_seconds[1]["session_sprints"]) == (0, 1)


def test_a_strap_that_drops_out_mid_sprint_counts_no_sprint_before_the_gap():
    load = LoadParams(sprint_dwell="2s")
    rows = expected_rows([
        ev(0, dist=0.0),
        ev(1, dist=8.0),    # 8 m/s: a run from s=0, 1 s long (< 2 s)
        ev(9, dist=60.0),   # 8 s gap: nothing credited, the run ends
        ev(10, dist=68.0),  # 8 m/s: a new run from s=9
    ], load=load)
    r = only(rows)
    assert (r["sprints"], r["distance_m"], r["hsr_distance_m"], r["hsr_s"]) == (0, 16.0, 16.0, 2.0)
    # Running on after the gap: the new run reaches 2 s at s=11 and counts once.
    rows = expected_rows([ev(0, dist=0.0), ev(1, dist=8.0), ev(9, dist=60.0), ev(10, dist=68.0),
                          ev(11, dist=76.0), ev(12, dist=84.0)], load=load)
    assert only(rows)["sprints"] == 1


def test_a_speed_glitch_above_max_speed_credits_nothing_and_ends_the_run():
    load = LoadParams(sprint_dwell="2s")
    rows = expected_rows([
        ev(0, dist=0.0),
        ev(1, dist=8.0),   # 8 m/s, run from 0
        ev(2, dist=40.0),  # 32 m/s > 12.5: a GPS jump, nothing, the run ends
        ev(3, dist=48.0),  # 8 m/s from the jumped value: a new run from s=2, 1 s long
    ], load=load)
    r = only(rows)
    assert (r["distance_m"], r["hsr_distance_m"], r["hsr_s"], r["sprints"]) == (16.0, 16.0, 2.0, 0)
    # Exactly max_speed still counts.
    r = only(expected_rows([ev(0, dist=0.0), ev(2, dist=25.0)]))
    assert (r["distance_m"], r["sprints"]) == (25.0, 1)


def test_a_decrease_of_running_dist_credits_nothing_and_restarts_from_the_lower_value():
    rows = expected_rows([ev(0, dist=100.0), ev(1, dist=105.0), ev(2, dist=103.0), ev(3, dist=108.0)])
    assert only(rows)["distance_m"] == 10.0


def test_a_change_of_device_restarts_distance_and_acceleration():
    rows = expected_rows([
        ev(0, hr=130, dist=500.0, acc=1.0, device="vest-a"),
        ev(1, hr=130, dist=504.0, acc=1.5, device="vest-a"),  # 4 m; 0.5 g
        ev(2, hr=130, dist=0.0, acc=0.5, device="vest-b"),    # new vest, its own count: nothing
        ev(3, hr=130, dist=3.0, acc=0.7, device="vest-b"),    # 3 m; 0.2 g
        ev(4, hr=130, dist=8.0, acc=0.7, device="vest-a"),    # back to vest a: another device again
    ])
    r = only(rows)
    assert (r["distance_m"], r["zone2_s"]) == (7.0, 4.0)
    assert close(r["accel_load"], 0.7)


def test_accel_load_sums_the_changes_of_magnitude():
    r = only(expected_rows([ev(0, acc=1.0), ev(0.5, acc=1.5), ev(1, acc=0.9), ev(7, acc=3.0), ev(8, acc=2.0)]))
    # 0.5 + 0.6, then a 6 s gap (nothing), then 1.0.
    assert close(r["accel_load"], 2.1)


# ---------------------------------------------------------------- which readings count

def test_a_late_event_is_excluded():
    events = [
        ev(10, hr=120, dist=0.0),
        ev(11, hr=120, dist=4.0),
        ev(105, hr=120, dist=400.0),  # 19:31:45: the watermark goes to 19:31:15
        ev(14, hr=190, dist=30.0),    # 19:30:14: its window ends at 19:31:00 ≤ 19:31:15: late
    ]
    rows = by_minute(expected_rows(events))
    assert rows[0]["distance_m"] == 4.0 and rows[0]["zone2_s"] == 1.0 and rows[0]["zone5_s"] == 0.0
    assert rows[1]["distance_m"] == 0.0  # 89 s after the last reading: a gap
    # Had it arrived in time, it would have counted: 3 s in zone 5 and 26 m.
    in_time = by_minute(expected_rows([events[0], events[1], events[3], events[2]]))
    assert (in_time[0]["zone5_s"], in_time[0]["distance_m"]) == (3.0, 30.0)


def test_a_reading_at_or_before_the_previous_one_credits_nothing_but_its_window_has_a_row():
    rows = by_minute(expected_rows([
        ev(65, hr=150, dist=10.0),  # 19:31:05
        ev(50, hr=150, dist=0.0),   # 19:30:50: not late (watermark 19:30:35), but before the last
        ev(66, hr=150, dist=15.0),  # 1 s and 5 m from 19:31:05, not from 19:30:50
    ]))
    assert set(rows) == {0, 1}
    assert (rows[0]["distance_m"], rows[0]["zone3_s"]) == (0.0, 0.0)
    assert (rows[1]["distance_m"], rows[1]["zone3_s"]) == (5.0, 1.0)


def test_a_duplicate_reading_counts_once_and_only_the_first_value():
    rows = expected_rows([
        ev(0, hr=120, dist=0.0),
        ev(1, hr=120, dist=5.0),
        ev(1, hr=180, dist=50.0),            # same device and times: both readings duplicates
        ev(1, hr=120, acc=1.0),              # heart rate a duplicate, acceleration new
        ev(2, hr=120, dist=10.0, acc=1.5),
    ])
    r = only(rows)
    assert (r["zone2_s"], r["zone5_s"], r["distance_m"], r["accel_load"]) == (2.0, 0.0, 10.0, 0.5)


def test_players_and_matches_keep_their_own_state_and_session_totals():
    rows = expected_rows([
        ev(0, dist=0.0, player=1, match=1), ev(0, dist=0.0, player=2, match=1, device="v-2"),
        ev(0, dist=100.0, player=1, match=2, device="v-9"),
        ev(1, dist=3.0, player=1, match=1), ev(1, dist=4.0, player=2, match=1, device="v-2"),
        ev(1, dist=102.0, player=1, match=2, device="v-9"),
        ev(61, dist=5.0, player=1, match=1),
    ])
    got = {(r["match_id"], r["player_id"], r["window_start"]): (r["distance_m"], r["session_distance_m"])
           for r in rows}
    assert got == {
        (1, 1, at(0)): (3.0, 3.0), (1, 1, at(60)): (0.0, 3.0),  # 60 s later: a gap
        (1, 2, at(0)): (4.0, 4.0), (2, 1, at(0)): (2.0, 2.0),
    }


# ---------------------------------------------------------------- roster and names

ROSTER = [
    RosterRow(7, name="Ada Lovelace", position="winger", hr_max=200.0),
    RosterRow(8, position="winger", hsr_speed=5.0),
    RosterRow(9, name="O'Neil, Jr.", position="goalkeeper", hr_rest=50.0, sprint_speed=6.5, target_trimp=300.0),
]
LOAD = LoadParams(hr_rest=55.0, positions=(Position("winger", hsr_speed=6.0, sprint_speed=7.5),
                                           Position("defender", hsr_speed=5.0)))


def test_roster_csv_round_trips_with_comments_blank_lines_and_quotes():
    text = roster_csv(ROSTER, comments=("squad for 2026-11-29",))
    assert text.startswith("# squad for 2026-11-29\nplayer_id,name,position,")
    assert '"O\'Neil, Jr."' in text
    parsed = parse_roster(text + "\n# a comment among the rows\n")
    assert parsed == {r.player_id: r for r in ROSTER}


def test_settings_take_the_roster_cell_else_the_position_else_the_default():
    roster = {r.player_id: r for r in ROSTER}
    s7, s8, s9, s5 = (settings_for(p, roster, LOAD) for p in (7, 8, 9, 5))
    assert (s7.hr_max, s7.hr_rest, s7.hsr_speed, s7.sprint_speed) == (200.0, 55.0, 6.0, 7.5)
    # target_trimp is the roster's alone: no position or [load] value stands in for it.
    assert (s7.target_trimp, s9.target_trimp, s5.target_trimp) == (None, 300.0, None)
    assert (s8.hr_max, s8.hsr_speed, s8.sprint_speed) == (190.0, 5.0, 7.5)
    # A position without a [[load.positions]] entry: the [load] default.
    assert (s9.hr_rest, s9.hsr_speed, s9.sprint_speed) == (50.0, 5.5, 6.5)
    assert (s5.on_roster, s5.name, s5.position, s5.hr_max, s5.hsr_speed) == (False, None, None, 190.0, 5.5)


def test_rows_name_the_roster_player_else_the_windows_last_name():
    roster = {r.player_id: r for r in ROSTER}
    rows = expected_rows([
        ev(0, hr=150, player=7, device="v-7", name="Ada"),
        ev(1, hr=150, player=7, device="v-7"),
        ev(0, hr=150, player=8, device="v-8", name="Bea"),
        ev(1, hr=150, player=8, device="v-8", name="Bea B."),
        ev(2, hr=150, player=8, device="v-8"),
        ev(0, hr=150, player=5, device="v-5", name="Cy"),
        ev(1, hr=150, player=5, device="v-5"),
        ev(0, hr=150, player=4, device="v-4"),
    ], roster=roster, load=LOAD)
    got = {r["player_id"]: (r["player_name"], r["position"], r["on_roster"], r["hr_max"], r["target_trimp"],
                            r["zone3_s"], r["zone4_s"]) for r in rows}
    # 150 bpm is 75 % of player 7's 200 (zone 3) and 78.9 % of the default 190 (zone 3).
    assert got == {
        7: ("Ada Lovelace", "winger", True, 200.0, None, 1.0, 0.0),
        8: ("Bea B.", "winger", True, 190.0, None, 2.0, 0.0),
        5: ("Cy", None, False, 190.0, None, 1.0, 0.0),
        4: (None, None, False, 190.0, None, 0.0, 0.0),
    }
    r9 = only(expected_rows([ev(0, hr=150, player=9, device="v-9")], roster=roster, load=LOAD))
    assert (r9["player_name"], r9["target_trimp"]) == ("O'Neil, Jr.", 300.0)
    r7 = next(r for r in rows if r["player_id"] == 7)
    assert close(r7["trimp_banister"], banister(1, (150 - 55) / (200 - 55)))


def test_position_speeds_decide_high_speed_running():
    roster = {r.player_id: r for r in ROSTER}
    # 5.8 m/s for 2 s: high speed for the default 5.5 (player 5), not for a winger's 6.0 (player 7).
    events = [ev(s, dist=5.8 * s, player=p, device=f"v-{p}") for p in (5, 7) for s in range(3)]
    got = {r["player_id"]: r["hsr_s"] for r in expected_rows(events, roster=roster, load=LOAD)}
    assert got == {5: 2.0, 7: 0.0}


# ---------------------------------------------------------------- rules (load_alerts)

def fired(events: list[dict], *rules: Rule, roster: list[RosterRow] = (), **load) -> list[tuple]:
    """(rule, player, seconds after T0, value) of each alert, in the order they fired."""
    alerts = expected_alerts(events, {r.player_id: r for r in roster}, LoadParams(rules=rules, **load))
    return [(a["rule"], a["player_id"], (a["event_time"] - T0).total_seconds(), a["value"]) for a in alerts]


def test_hr_pct_fires_once_when_held_and_again_after_a_reading_below():
    # HRmax 190: 90 % is 171 bpm.
    rule = Rule("red", "hr_pct", 90, hold="3s")
    got = fired([
        ev(0, hr=175),  # a spell from s = 0
        ev(1, hr=175),
        ev(2, hr=172),
        ev(3, hr=175),  # t − s = 3 s: fires, value this reading's %
        ev(4, hr=180),  # once per spell
        ev(5, hr=160),  # below: starts it again
        ev(6, hr=171),  # exactly 90 %: at or above, s = 6
        ev(8, hr=190),
        ev(9, hr=171),  # 3 s: fires again
    ], rule)
    assert got == [("red", 1, 3.0, 100 * 175 / 190), ("red", 1, 9.0, 90.0)]


def test_hr_pct_a_gap_over_max_gap_starts_the_spell_again_and_exactly_max_gap_does_not():
    hr = [ev(s, hr=175) for s in (0, 3, 9, 12, 13, 18)]  # 3 → 9 is 6 s (> 5 s); 13 → 18 exactly 5 s
    # No hold: fires at the first reading of each spell.
    assert [t for _, _, t, _ in fired(hr, Rule("red", "hr_pct", 90))] == [0.0, 9.0]
    # A 4 s hold: not at 9 (9 − 0 would be, but the gap started it again at 9), at 13 (13 − 9).
    assert [t for _, _, t, _ in fired(hr, Rule("red", "hr_pct", 90, hold="4s"))] == [13.0]


def test_hr_pct_ignores_a_reading_before_the_previous_one():
    got = fired([
        ev(0, hr=175),  # fires (no hold)
        ev(2, hr=150),  # below: starts again
        ev(1, hr=175),  # at t ≤ p: credits nothing, changes nothing (would fire at 1 if it counted)
        ev(3, hr=175),  # fires
    ], Rule("red", "hr_pct", 90))
    assert [t for _, _, t, _ in got] == [0.0, 3.0]


def test_hr_pct_is_in_percent_of_the_players_own_hr_max():
    # 175 bpm is 92.1 % of the default 190 but 87.5 % of player 7's 200.
    events = [ev(s, hr=175, player=p, device=f"v-{p}") for s in (0, 1) for p in (5, 7)]
    got = fired(events, Rule("red", "hr_pct", 90), roster=[RosterRow(7, hr_max=200.0)])
    assert [(p, t) for _, p, t, _ in got] == [(5, 0.0)]


def sprint(t0: float, d0: float) -> list[dict]:
    """A sprint counted at t0 + 1 (8 m/s for 1 s, the default dwell), then a jog."""
    return [ev(t0, dist=d0), ev(t0 + 1, dist=d0 + 8), ev(t0 + 2, dist=d0 + 10)]


def test_sprints_counts_within_the_last_within_and_afresh_after_firing():
    # Sprints counted at 1, 61, 100, 130 and 150 s (seconds apart: gaps between them credit nothing).
    events = [e for i, t0 in enumerate((0, 60, 99, 129, 149)) for e in sprint(t0, 1000.0 * i)]
    assert [r["sprints"] for r in expected_rows(events, windows=WindowParams(size="10m"))] == [5]
    got = fired(events, Rule("two", "sprints", 2, within="60s"))
    # At 61: (1, 61] leaves out the sprint at 1 (exactly 60 s before): 1. At 100: 61 and 100: fires
    # with the count. At 130: counted afresh since 100, so 1 (100 would still be within). At 150: 2.
    assert got == [("two", 1, 100.0, 2.0), ("two", 1, 150.0, 2.0)]
    # The default within is 10 minutes: 1 and 61 are two.
    assert [t for _, _, t, _ in fired(events, Rule("two", "sprints", 2))] == [61.0, 130.0]


def test_sprints_are_counted_where_the_run_reaches_the_dwell():
    # A 3 s run from 0 (8 m/s); with a 2 s dwell it is counted at 2, not where it starts or ends.
    events = [ev(s, dist=8.0 * s) for s in range(4)] + [ev(4, dist=34.0)]
    assert fired(events, Rule("one", "sprints", 1), sprint_dwell="2s") == [("one", 1, 2.0, 1.0)]


def test_load_pct_fires_once_per_player_and_match_over_all_its_windows():
    roster = [RosterRow(1, target_trimp=1.0), RosterRow(2)]
    # 180 bpm is zone 5 (94.7 %): 5/60 Edwards TRIMP a second. From 19:30:55, so the
    # match's TRIMP spans two windows: 50 % of 1.0 is 6 s, reached at 61 s.
    events = [ev(s, hr=180, player=p, match=m, device=f"v-{p}-{m}")
              for s in range(55, 70) for p in (1, 2) for m in (1, 2)]
    got = [(a["match_id"], a["player_id"], (a["event_time"] - T0).total_seconds(), a["value"])
           for a in expected_alerts(events, {r.player_id: r for r in roster},
                                    LoadParams(rules=(Rule("half", "load_pct", 50),)))]
    # Player 1 in each match, once; player 2 (on the roster, no target) not at all.
    assert sorted(got) == [(1, 1, 61.0, 50.0), (2, 1, 61.0, 50.0)]


def test_a_target_of_zero_is_no_target():
    got = fired([ev(s, hr=180) for s in range(3)], Rule("half", "load_pct", 50),
                roster=[RosterRow(1, target_trimp=0.0)])
    assert got == []


def test_rules_are_limited_to_their_positions_and_players_both():
    both = Rule("r", "hr_pct", 90, positions=("winger",), players=(7, 9))
    assert [both.applies(p, pos) for p, pos in ((7, "winger"), (7, "defender"), (8, "winger"), (9, None))] == [
        True, False, False, False]
    assert Rule("r", "hr_pct", 90).applies(5, None)
    assert not Rule("r", "hr_pct", 90, positions=("winger",)).applies(5, None)
    roster = [RosterRow(7, position="winger"), RosterRow(8, position="winger"), RosterRow(9, position="defender")]
    events = [ev(0, hr=180, player=p, device=f"v-{p}") for p in (7, 8, 9)]
    assert [p for _, p, _, _ in fired(events, both, roster=roster)] == [7]


def test_load_alert_rows_name_the_roster_player_else_the_events_and_have_the_spec_columns():
    roster = {7: RosterRow(7, name="Ada Lovelace", position="winger")}
    events = [
        ev(0, hr=150, player=7, device="v-7", name="Ada"),
        ev(0, hr=150, player=8, device="v-8", name="Bea"),  # 78.9 %: below
        ev(1, hr=180, player=8, device="v-8"),              # 94.7 %: fires, and this event has no name
        ev(2, hr=180, player=8, device="v-8", name="B"),    # the same spell: no alert, but names the window
        ev(1.5, hr=180, player=7, device="v-7"),            # fires: the roster names player 7
    ]
    alerts = expected_alerts(events, roster, LoadParams(rules=(Rule("hot", "hr_pct", 90),)))
    assert [tuple(a) for a in alerts] == [ALERT_COLUMNS[:-1]] * 2
    a8, a7 = alerts
    micros = int(at(1).timestamp()) * 1_000_000
    assert a8 == {
        "alert_id": f"testvenue/load/hot/1/8/{micros}", "venue_id": "testvenue", "gateway_id": "gw-1",
        "rule": "hot", "watch": "hr_pct", "match_id": 1, "player_id": 8, "player_name": None, "position": None,
        "device_id": "v-8", "value": 100 * 180 / 190, "threshold": 90.0, "event_time": at(1),
    }
    assert (a7["player_name"], a7["position"], a7["alert_id"]) == (
        "Ada Lovelace", "winger", f"testvenue/load/hot/1/7/{micros + 500_000}")
    # The window of player 8 is named by its last event with a name all the same.
    assert {r["player_id"]: r["player_name"] for r in expected_rows(events, roster)} == {7: "Ada Lovelace", 8: "B"}


def test_alert_differences_compares_by_id_and_only_requires_detected_at():
    want = expected_alerts([ev(0, hr=180)], load=LoadParams(rules=(Rule("hot", "hr_pct", 90),)))
    got = [dict(want[0], detected_at=at(5), value=want[0]["value"] + 1e-12)]
    assert alert_differences(got, want) == []
    assert alert_differences([dict(got[0], detected_at=None)], want)
    assert alert_differences([dict(got[0], player_name="X")], want)
    assert alert_differences([], want) == [f"missing alert {want[0]['alert_id']} (value {want[0]['value']!r})"]


# ---------------------------------------------------------------- plumbing

def test_event_times_parse_as_spec_section_1_says():
    base = int(T0.timestamp()) * 1_000_000  # 2026-11-29T19:30:00Z in µs
    assert event_time_us({"event_time": "2026-11-29T19:30:00Z"}) == base
    assert event_time_us({"event_time": "2026-11-29T19:30:00.123456789Z"}) == base + 123_456
    assert event_time_us({"event_time": "2026-11-30T01:00:00.5+05:30"}) == base + 500_000
    assert event_time_us({"event_time": 1_795_980_600_250}) == base + 250_000
    assert event_time_us({"event_ts": "2026-11-29T19:30:01Z"}) == base + 1_000_000


def test_rows_have_the_spec_columns_in_order_and_the_window():
    r = only(expected_rows([ev(59.5, hr=120)], windows=WindowParams(size="1m")))
    assert tuple(r) == COLUMNS
    assert (r["window_start"], r["window_end"], r["gateway_downtime_ms"]) == (at(0), at(60), 0)


def test_row_differences_checks_keys_exact_columns_and_float_tolerance():
    want = expected_rows([ev(0, dist=0.0), ev(1, dist=3.0)])
    got = [dict(want[0], distance_m=3.0 + 1e-10, window_start=want[0]["window_start"].replace(tzinfo=None))]
    assert row_differences(got, want) == []
    assert row_differences([dict(want[0], distance_m=3.1)], want) == [
        f"(1, 1, {at(0)!r}) distance_m: gateway 3.1, reference 3.0"]
    assert row_differences([dict(want[0], sprints=1)], want)
    assert row_differences([dict(want[0], on_roster=None)], want)
    assert row_differences([], want) == [f"missing row (1, 1, {at(0)!r})"]


@pytest.mark.parametrize("dwell,sprints", [("1s", 1), ("2s", 1), ("3s", 0)])
def test_dwell_is_compared_with_the_run_length(dwell, sprints):
    # 7.5 m/s from s=1 to s=3: a 2 s run.
    r = only(expected_rows([ev(0, dist=0.0), ev(1, dist=3.0), ev(2, dist=10.5), ev(3, dist=18.0),
                            ev(4, dist=20.0)], load=LoadParams(sprint_dwell=dwell)))
    assert r["sprints"] == sprints
