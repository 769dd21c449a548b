-- Fatigue alerts with the pitch activity of the same match and minute.
--
-- pitch_minutes: the pitch windows of a match, one row per minute (if several
--   gateways report pitch windows for the same match and minute, their window
--   means are averaged and their event counts added).
-- match_spin: the match average spin rate = the mean of the per-minute
--   spin_rate_mean over every minute of the match that has one (each minute
--   weighs the same).
-- spin_above_match_avg: the alert's minute had a mean spin rate above the match
--   average; NULL when that minute has no spin data.
-- pitch_gateway_downtime_ms: the largest gateway_downtime_ms of the minute's
--   pitch windows: > 0 when a gateway was not running for part of that minute,
--   so its pitch figures may be short; NULL for files of older gateways.
--
-- Both pitch sides are small (one row per match-minute, one row per match), so
-- they are broadcast to the fatigue alerts instead of shuffled.
WITH pitch_minutes AS (
  SELECT
    venue_id,
    match_id,
    date_trunc('MINUTE', window_start) AS minute,
    SUM(events) AS pitch_events,
    AVG(spin_rate_mean) AS spin_rate_mean,
    MAX(spin_rate_max) AS spin_rate_max,
    AVG(ball_speed_mean) AS ball_speed_mean,
    MAX(gateway_downtime_ms) AS pitch_gateway_downtime_ms
  FROM windows_pitch
  GROUP BY venue_id, match_id, date_trunc('MINUTE', window_start)
),
match_spin AS (
  SELECT venue_id, match_id, AVG(spin_rate_mean) AS match_spin_rate_mean
  FROM pitch_minutes
  WHERE spin_rate_mean IS NOT NULL
  GROUP BY venue_id, match_id
)
SELECT /*+ BROADCAST(p), BROADCAST(m) */
  f.alert_id,
  f.venue_id,
  f.gateway_id,
  f.match_id,
  f.player_id,
  f.player_name,
  f.window_start,
  f.window_end,
  f.heart_rate_mean,
  f.baseline_mean,
  f.baseline_std,
  p.pitch_events,
  p.spin_rate_mean,
  p.spin_rate_max,
  p.ball_speed_mean,
  m.match_spin_rate_mean,
  p.spin_rate_mean > m.match_spin_rate_mean AS spin_above_match_avg,
  p.pitch_gateway_downtime_ms,
  f.date
FROM fatigue_alerts f
LEFT JOIN pitch_minutes p
  ON p.venue_id = f.venue_id
  AND p.match_id = f.match_id
  AND p.minute = date_trunc('MINUTE', f.window_start)
LEFT JOIN match_spin m
  ON m.venue_id = f.venue_id
  AND m.match_id = f.match_id
