-- Player load per period of a match (halves, extra time): load_player_1m
-- joined with match_periods, the table the club fills from its fixtures
-- (ddl/80_match_periods.sql; one row per venue, match and period).
--
-- A minute counts in the period that holds its middle (window_start + 30 s for
-- 1-minute windows): each minute is in at most one period, and a period that
-- starts or ends off the minute (kick-off at 19:45:20) takes the minutes mostly
-- inside it. Minutes outside every period (warm-up, half-time) are in no row;
-- player_load_match has them all.
--
-- Columns as in player_load_match, per period; date is the UTC date of the
-- period's first minute. Matches without periods in match_periods have no rows here.
SELECT /*+ BROADCAST(p) */
  p.venue_id,
  p.match_id,
  p.period,
  p.period_start,
  p.period_end,
  l.player_id,
  MAX_BY(l.player_name, l.window_start) FILTER (WHERE l.player_name IS NOT NULL) AS player_name,
  MAX_BY(l.position, l.window_start) AS position,
  MAX_BY(l.on_roster, l.window_start) AS on_roster,
  COUNT(*) AS minutes,
  SUM(l.zone1_s) AS zone1_s,
  SUM(l.zone2_s) AS zone2_s,
  SUM(l.zone3_s) AS zone3_s,
  SUM(l.zone4_s) AS zone4_s,
  SUM(l.zone5_s) AS zone5_s,
  SUM(l.trimp_edwards) AS trimp_edwards,
  SUM(l.trimp_banister) AS trimp_banister,
  SUM(l.distance_m) AS distance_m,
  SUM(l.hsr_distance_m) AS hsr_distance_m,
  SUM(l.hsr_s) AS hsr_s,
  SUM(l.sprints) AS sprints,
  SUM(l.accel_load) AS accel_load,
  COUNT_IF(l.gateway_downtime_ms > 0) AS windows_with_downtime,
  MIN(l.date) AS date
FROM match_periods p
JOIN load_player_1m l
  ON l.venue_id = p.venue_id
  AND l.match_id = p.match_id
  -- The middle of the window, in µs and doubled to stay in integers:
  -- period_start <= (window_start + window_end) / 2 < period_end.
  AND unix_micros(l.window_start) + unix_micros(l.window_end) >= 2 * unix_micros(p.period_start)
  AND unix_micros(l.window_start) + unix_micros(l.window_end) < 2 * unix_micros(p.period_end)
GROUP BY p.venue_id, p.match_id, p.period, p.period_start, p.period_end, l.player_id
