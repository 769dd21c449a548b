"""The player load views (SPEC §11 data) on a local Spark, against direct computations.

Six weeks of `load_player_1m` minutes written with pyarrow in the gateway's
layout (two gateways, a match across midnight UTC, a player who stops
playing, a player with one match only), ingested by the Spark job into Parquet
tables, with the club's `match_periods` beside them. Each view is checked
against the same definition computed here in Python.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from datetime import date, datetime, timedelta, timezone

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import synthetic
from helpers import normalize
from pitchside_ingest import spark_sinks, views
from pitchside_ingest.arrow_batch import table_schema
from pitchside_ingest.spark_job import JobOptions, run
from pitchside_ingest.tables import REFERENCE_TABLES

VENUE = synthetic.VENUE
UTC = timezone.utc


def load_row(gateway: str, match: int, player: int, start: datetime, rng: random.Random,
             name: str | None = None, downtime: int | None = 0, target: float | None = None) -> dict:
    """One minute of one player, with figures that need not be consistent, only summable."""
    zones = [round(rng.uniform(0, 12), 3) for _ in range(5)]
    return {
        "venue_id": VENUE, "gateway_id": gateway, "window_start": start, "window_end": start + timedelta(minutes=1),
        "match_id": match, "player_id": player, "player_name": name, "position": "winger" if player == 7 else None,
        "on_roster": player == 7, "hr_max": 200.0 if player == 7 else 190.0, "target_trimp": target,
        **{f"zone{k}_s": z for k, z in enumerate(zones, start=1)},
        "trimp_edwards": sum(k * z / 60 for k, z in enumerate(zones, start=1)),
        "trimp_banister": round(rng.uniform(0, 1.5), 4), "distance_m": round(rng.uniform(20, 220), 2),
        "hsr_distance_m": round(rng.uniform(0, 40), 2), "hsr_s": float(rng.randint(0, 8)),
        "sprints": rng.choice([0, 0, 0, 1, 2]), "accel_load": round(rng.uniform(2, 30), 3),
        # Running totals are not what the views read: any value does.
        "session_distance_m": 0.0, "session_hsr_distance_m": 0.0, "session_sprints": 0,
        "session_trimp_edwards": 0.0, "session_accel_load": 0.0, "gateway_downtime_ms": downtime,
    }


# (match_id, kick-off of its first minute, minutes, players); day 0 is 2026-10-01.
DAY0 = datetime(2026, 10, 1, tzinfo=UTC)
MATCHES = [
    (1, DAY0 + timedelta(hours=19, minutes=45), 100, (7, 9, 11)),
    (2, DAY0 + timedelta(days=3, hours=15), 95, (7, 9)),
    (3, DAY0 + timedelta(days=10, hours=23, minutes=30), 60, (7, 9)),  # across midnight UTC
    (4, DAY0 + timedelta(days=17, hours=18), 90, (7,)),                 # player 9 no longer plays
    (5, DAY0 + timedelta(days=38, hours=19), 90, (7,)),                 # after a 3-week break
]
PERIODS = [  # the club's fixtures: kick-offs off the minute, and a match without periods (5)
    (1, "1H", DAY0 + timedelta(hours=19, minutes=47, seconds=20), DAY0 + timedelta(hours=20, minutes=32, seconds=40)),
    (1, "2H", DAY0 + timedelta(hours=20, minutes=48), DAY0 + timedelta(hours=21, minutes=25, seconds=29)),
    (2, "1H", DAY0 + timedelta(days=3, hours=15), DAY0 + timedelta(days=3, hours=15, minutes=45)),
    (2, "2H", DAY0 + timedelta(days=3, hours=16), DAY0 + timedelta(days=3, hours=16, minutes=30)),
    (3, "1H", DAY0 + timedelta(days=10, hours=23, minutes=30), DAY0 + timedelta(days=11, minutes=15)),
    (4, "1H", DAY0 + timedelta(days=17, hours=18), DAY0 + timedelta(days=17, hours=18, minutes=45)),
]


def target_of(match: int, player: int, minute: int) -> float | None:
    """The roster's target_trimp: player 7 has one, raised during match 4 (a roster
    reload: the latest window's counts); the others have none."""
    if player != 7:
        return None
    return 33.0 if match == 4 and minute >= 45 else 30.0


def rows() -> list[dict]:
    rng = random.Random(11)
    out = []
    for match, start, minutes, players in MATCHES:
        for player in players:
            for m in range(minutes):
                if player == 11 and m >= 30:
                    break  # a substitute's half hour
                # Player 9's band went to the second gateway for part of match 2.
                gateway = "gw-2" if (match, player) == (2, 9) and 40 <= m < 60 else "gw-1"
                name = {7: "Ada Lovelace", 9: "Bea" if m % 7 else None}.get(player)
                downtime = None if match == 3 and m < 5 else (1500 if match == 2 and m == 10 else 0)
                out.append(load_row(gateway, match, player, start + timedelta(minutes=m), rng, name, downtime,
                                    target_of(match, player, m)))
    return out


@pytest.fixture(scope="module")
def lakehouse(spark, tmp_path_factory):
    base = tmp_path_factory.mktemp("load_views")
    store, target = base / "store", base / "tables"
    all_rows = rows()
    by_gateway = defaultdict(list)
    for r in all_rows:
        by_gateway[r["gateway_id"]].append(r)
    for gateway, gw_rows in by_gateway.items():
        for match in sorted({r["match_id"] for r in gw_rows}):  # one file per match, as flushes would
            synthetic.write_file(store, "load_player_1m", match, [r for r in gw_rows if r["match_id"] == match],
                                 gateway=gateway)
    run(spark, JobOptions(source=str(store), target=str(target), checkpoint=str(base / "ck"),
                          target_format="parquet", auto_loader=False, tables=("load_player_1m",)))
    [periods] = REFERENCE_TABLES
    (target / "match_periods").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(
        [{"venue_id": VENUE, "match_id": m, "period": p, "period_start": s, "period_end": e} for m, p, s, e in PERIODS],
        schema=table_schema(periods)), target / "match_periods" / "periods.parquet")
    spark_sinks.register_parquet_tables(spark, str(target))
    views.create_views(spark, temporary=True)
    return all_rows


SUMMED = ("zone1_s", "zone2_s", "zone3_s", "zone4_s", "zone5_s", "trimp_edwards", "trimp_banister",
          "distance_m", "hsr_distance_m", "hsr_s", "sprints", "accel_load")


def totals(rows: list[dict]) -> dict:
    out = {c: sum(r[c] for r in rows) for c in SUMMED}
    out["minutes"] = len(rows)
    out["windows_with_downtime"] = sum(1 for r in rows if (r["gateway_downtime_ms"] or 0) > 0)
    named = [r for r in rows if r["player_name"] is not None]
    out["player_name"] = max(named, key=lambda r: r["window_start"])["player_name"] if named else None
    return out


def same(got: dict, want: dict, what) -> None:
    for k, v in want.items():
        if isinstance(v, float):
            assert math.isclose(got[k], v, rel_tol=1e-9, abs_tol=1e-9), (what, k, got[k], v)
        else:
            assert got[k] == v, (what, k, got[k], v)


def test_player_load_match_sums_every_minute_of_the_match(spark, lakehouse):
    groups = defaultdict(list)
    for r in lakehouse:
        groups[(r["match_id"], r["player_id"])].append(r)
    got = {(r.match_id, r.player_id): r.asDict() for r in spark.table("player_load_match").collect()}
    assert set(got) == set(groups)
    for key, rs in groups.items():
        want = totals(rs)
        want["first_window_start"] = normalize(min(r["window_start"] for r in rs))
        want["last_window_end"] = normalize(max(r["window_end"] for r in rs))
        want["date"] = min(r["window_start"] for r in rs).date()
        latest = max(rs, key=lambda r: r["window_start"])
        want["target_trimp"] = latest["target_trimp"]
        want["trimp_pct_of_target"] = (None if latest["target_trimp"] is None
                                       else 100 * want["trimp_edwards"] / latest["target_trimp"])
        same(got[key], want, key)
    # Both gateways' minutes of player 9 in match 2, the one with downtime flagged.
    assert (got[(2, 9)]["minutes"], got[(2, 9)]["windows_with_downtime"]) == (95, 1)
    assert (got[(1, 7)]["position"], got[(1, 7)]["on_roster"], got[(1, 9)]["hr_max"]) == ("winger", True, 190.0)
    # Match 3 started on day 10 and ended on day 11 (UTC): its date is day 10.
    assert got[(3, 7)]["date"] == date(2026, 10, 11)
    # The load against target: the latest window's target (raised during match 4); none for player 9.
    assert (got[(1, 7)]["target_trimp"], got[(4, 7)]["target_trimp"]) == (30.0, 33.0)
    assert math.isclose(got[(4, 7)]["trimp_pct_of_target"], 100 * got[(4, 7)]["trimp_edwards"] / 33.0,
                        rel_tol=1e-12)
    assert (got[(1, 9)]["target_trimp"], got[(1, 9)]["trimp_pct_of_target"]) == (None, None)


def middle_in(r: dict, start: datetime, end: datetime) -> bool:
    middle = r["window_start"] + (r["window_end"] - r["window_start"]) / 2
    return start <= middle < end


def test_player_load_period_takes_the_minutes_whose_middle_is_in_the_period(spark, lakehouse):
    want = {}
    for match, period, start, end in PERIODS:
        groups = defaultdict(list)
        for r in lakehouse:
            if r["match_id"] == match and middle_in(r, start, end):
                groups[r["player_id"]].append(r)
        for player, rs in groups.items():
            want[(match, period, player)] = totals(rs)
    got = {(r.match_id, r.period, r.player_id): r.asDict() for r in spark.table("player_load_period").collect()}
    assert set(got) == set(want)
    for key, w in want.items():
        same(got[key], w, key)
    # 1H of match 1 kicks off at 19:47:20: 19:47 is in (its middle 19:47:30 is), 19:46 is not;
    # it ends at 20:32:40: 20:32 is in (20:32:30 < 20:32:40). 19:47..20:32 is 46 minutes.
    assert got[(1, "1H", 7)]["minutes"] == 46
    # 2H from 20:48:00 to 21:25:29: 20:48..21:24 (21:25:30 is not before 21:25:29), to the
    # end of the match data at 21:24: 37 minutes; the substitute (11) only played the first half hour.
    assert got[(1, "2H", 7)]["minutes"] == 37 and (1, "2H", 11) not in got
    # Match 5 has no periods in match_periods, so no rows.
    assert not [k for k in got if k[0] == 5]
    # A half is never more than the match.
    match = {(r.match_id, r.player_id): r.distance_m for r in spark.table("player_load_match").collect()}
    halves = defaultdict(float)
    for (m, _, p), w in got.items():
        halves[(m, p)] += w["distance_m"]
    assert all(v <= match[k] + 1e-9 for k, v in halves.items())


def expected_acwr(rows: list[dict]) -> dict[tuple, tuple]:
    """(player, date) -> (daily_load, acute, chronic, acwr, history_days), by the view's definition."""
    daily = defaultdict(float)
    for r in rows:
        daily[(r["player_id"], r["window_start"].astimezone(UTC).date())] += r["trimp_edwards"]
    last = max(d for _, d in daily)
    out = {}
    for player in {p for p, _ in daily}:
        first = min(d for p, d in daily if p == player)
        day = first
        while day <= last:
            def mean(n):
                return sum(daily.get((player, day - timedelta(days=i)), 0.0) for i in range(n)) / n
            acute, chronic = mean(7), mean(28)
            out[(player, day)] = (daily.get((player, day), 0.0), acute, chronic,
                                  None if chronic == 0 else acute / chronic, (day - first).days + 1)
            day += timedelta(days=1)
    return out


def test_player_load_acwr_is_the_7_over_the_28_day_mean_daily_edwards_trimp(spark, lakehouse):
    want = expected_acwr(lakehouse)
    got = {(r.player_id, r.date): (r.daily_load, r.acute_load, r.chronic_load, r.acwr, r.history_days)
           for r in spark.table("player_load_acwr").collect()}
    assert set(got) == set(want)
    for key, w in want.items():
        g = got[key]
        for a, b in zip(g[:4], w[:4]):
            assert (a is None and b is None) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (key, g, w)
        assert g[4] == w[4], key
    # Every player's rows run to the venue's last day (day 38), one row per day.
    assert max(d for p, d in got if p == 9) == date(2026, 11, 8)
    assert len([k for k in got if k[0] == 7]) == 39 and len([k for k in got if k[0] == 11]) == 39
    # The match across midnight splits its load between days 10 and 11.
    assert got[(7, date(2026, 10, 11))][0] > 0 and got[(7, date(2026, 10, 12))][0] > 0
    # After the 3-week break, player 7's acute load is 0 before match 5 while the chronic is not;
    # 28 days without any load make the chronic 0 too: the ratio is NULL (player 11 on day 38).
    assert got[(7, date(2026, 11, 7))][1] == 0 and got[(7, date(2026, 11, 7))][3] == 0
    assert got[(11, date(2026, 11, 8))][2] == 0 and got[(11, date(2026, 11, 8))][3] is None
