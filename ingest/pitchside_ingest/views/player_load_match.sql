-- Player load per match (SPEC §11): each player's totals over the match's
-- load_player_1m minutes, all gateways of a venue together.
--
-- minutes: the windows the player has a row for (minutes in which their
--   wearable sent something); first_window_start / last_window_end bound them.
-- player_name: the name of the player's latest window that has one;
--   position, on_roster, hr_max, target_trimp: those of the latest window (the
--   roster may change during a match: it is reloaded on SIGHUP).
-- zone{k}_s, trimp_edwards, trimp_banister, distance_m, hsr_distance_m, hsr_s,
--   sprints, accel_load: sums over the windows (SPEC §11 gives each window its
--   own share, so the sums are the match's).
-- trimp_pct_of_target: the match's trimp_edwards in % of target_trimp (the
--   roster's Edwards TRIMP for a match, what a load_pct rule watches on the
--   gateway); NULL when the player has no target.
-- windows_with_downtime: windows with gateway_downtime_ms > 0, during which
--   the gateway was not running for a while: > 0 means the totals may be
--   short. (NULL downtime, files of gateways before the column, is not counted.)
-- date: the UTC date of the player's first window.
--
-- A player's band reaches one gateway; if two gateways of a venue both heard
-- it, each wrote its own rows and both are summed here.
SELECT
  venue_id,
  match_id,
  player_id,
  MAX_BY(player_name, window_start) FILTER (WHERE player_name IS NOT NULL) AS player_name,
  MAX_BY(position, window_start) AS position,
  MAX_BY(on_roster, window_start) AS on_roster,
  MAX_BY(hr_max, window_start) AS hr_max,
  MAX_BY(target_trimp, window_start) AS target_trimp,
  COUNT(*) AS minutes,
  MIN(window_start) AS first_window_start,
  MAX(window_end) AS last_window_end,
  SUM(zone1_s) AS zone1_s,
  SUM(zone2_s) AS zone2_s,
  SUM(zone3_s) AS zone3_s,
  SUM(zone4_s) AS zone4_s,
  SUM(zone5_s) AS zone5_s,
  SUM(trimp_edwards) AS trimp_edwards,
  100 * SUM(trimp_edwards) / NULLIF(MAX_BY(target_trimp, window_start), 0) AS trimp_pct_of_target,
  SUM(trimp_banister) AS trimp_banister,
  SUM(distance_m) AS distance_m,
  SUM(hsr_distance_m) AS hsr_distance_m,
  SUM(hsr_s) AS hsr_s,
  SUM(sprints) AS sprints,
  SUM(accel_load) AS accel_load,
  COUNT_IF(gateway_downtime_ms > 0) AS windows_with_downtime,
  MIN(date) AS date
FROM load_player_1m
GROUP BY venue_id, match_id, player_id
