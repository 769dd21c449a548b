-- Z-score alerts per player and match (SPEC §10: an alert names the player of
-- the wearable event that raised it; all gateways of a venue together).
-- player_name is the name the player's latest alert carried (NULL when no
-- event of theirs gave one). Alerts without a player (pitch, crowd, generic
-- sensors, and files of gateways before SPEC §10) are not counted here.
SELECT
  venue_id,
  match_id,
  player_id,
  MAX_BY(player_name, event_time) FILTER (WHERE player_name IS NOT NULL) AS player_name,
  COUNT(*) AS alerts,
  COUNT(DISTINCT metric) AS metrics,
  COUNT(DISTINCT device_id) AS devices,
  MAX(ABS(z_score)) AS max_abs_z_score,
  MIN(event_time) AS first_alert_at,
  MAX(event_time) AS last_alert_at
FROM alerts
WHERE player_id IS NOT NULL
GROUP BY venue_id, match_id, player_id
