-- Z-score alerts per device and UTC hour (all gateways of a venue together). The hour
-- is cut from the epoch seconds, not with date_trunc, which cuts in the session's time
-- zone (in Asia/Kolkata an hour would start at :30 UTC).
SELECT
  venue_id,
  sensor,
  device_id,
  timestamp_seconds(unix_seconds(event_time) DIV 3600 * 3600) AS hour,
  COUNT(*) AS alerts,
  COUNT(DISTINCT metric) AS metrics,
  MAX(ABS(z_score)) AS max_abs_z_score,
  MIN(event_time) AS first_alert_at,
  MAX(event_time) AS last_alert_at
FROM alerts
GROUP BY venue_id, sensor, device_id, timestamp_seconds(unix_seconds(event_time) DIV 3600 * 3600)
