-- Z-score alerts per device and UTC hour (all gateways of a venue together).
SELECT
  venue_id,
  sensor,
  device_id,
  date_trunc('HOUR', event_time) AS hour,
  COUNT(*) AS alerts,
  COUNT(DISTINCT metric) AS metrics,
  MAX(ABS(z_score)) AS max_abs_z_score,
  MIN(event_time) AS first_alert_at,
  MAX(event_time) AS last_alert_at
FROM alerts
GROUP BY venue_id, sensor, device_id, date_trunc('HOUR', event_time)
