-- One row per gateway: its latest progress report, its upload lag, and its
-- counters over the hour before that report and over all time.
--
-- upload_lag_seconds: how old the last upload was when the gateway last
--   reported (deterministic; large means the uplink is down or the uploader stuck).
-- seconds_since_last_progress / seconds_since_last_upload: the same against the
--   lakehouse clock now (large means the gateway itself went quiet).
-- seconds_behind_fleet: how far its last report is behind the newest report of
--   any gateway (deterministic, also for a backfill).
-- The four flags, and `status` (the first that holds, in this order, else 'ok'):
--   is_silent    no progress for 5 minutes while the fleet reported (every 10 s normally);
--   is_late      its last upload was more than 5 minutes before its last report
--                (flushes are every minute), or it never uploaded with files spooled;
--   is_evicting  its spool evicted files in the hour before its last report (data lost);
--   is_rejecting more than 1 % of its input lines rejected in that hour.
WITH latest AS (
  SELECT *
  FROM (
    SELECT p.*, ROW_NUMBER() OVER (PARTITION BY venue_id, gateway_id ORDER BY timestamp DESC) AS rn
    FROM progress p
  )
  WHERE rn = 1
),
totals AS (
  SELECT
    p.venue_id,
    p.gateway_id,
    MAX(p.last_upload_at) AS last_upload_at,
    SUM(p.input_rows) AS input_rows_total,
    SUM(p.late_rows) AS late_rows_total,
    SUM(p.rejected_rows) AS rejected_rows_total,
    SUM(p.upload_failures) AS upload_failures_total,
    SUM(CASE WHEN p.timestamp > l.timestamp - INTERVAL 1 HOUR THEN p.input_rows ELSE 0 END) AS input_rows_1h,
    SUM(CASE WHEN p.timestamp > l.timestamp - INTERVAL 1 HOUR THEN p.late_rows ELSE 0 END) AS late_rows_1h,
    SUM(CASE WHEN p.timestamp > l.timestamp - INTERVAL 1 HOUR THEN p.rejected_rows ELSE 0 END) AS rejected_rows_1h,
    SUM(CASE WHEN p.timestamp > l.timestamp - INTERVAL 1 HOUR THEN p.duplicate_rows ELSE 0 END) AS duplicate_rows_1h,
    SUM(CASE WHEN p.timestamp > l.timestamp - INTERVAL 1 HOUR THEN p.alerts ELSE 0 END) AS alerts_1h,
    SUM(CASE WHEN p.timestamp > l.timestamp - INTERVAL 1 HOUR THEN p.upload_failures ELSE 0 END) AS upload_failures_1h,
    SUM(CASE WHEN p.timestamp > l.timestamp - INTERVAL 1 HOUR THEN p.spool_evictions ELSE 0 END) AS spool_evictions_1h,
    SUM(p.spool_evictions) AS spool_evictions_total
  FROM progress p
  JOIN latest l ON l.venue_id = p.venue_id AND l.gateway_id = p.gateway_id
  GROUP BY p.venue_id, p.gateway_id
),
fleet AS (
  SELECT MAX(timestamp) AS fleet_last_progress_at FROM progress
),
health AS (
SELECT
  l.venue_id,
  l.gateway_id,
  l.timestamp AS last_progress_at,
  l.input_rows_per_second,
  l.processed_rows_per_second,
  l.batch_duration_ms,
  l.state_keys,
  l.state_bytes,
  l.open_windows,
  l.spool_files,
  l.spool_bytes,
  t.last_upload_at,
  (unix_micros(l.timestamp) - unix_micros(t.last_upload_at)) / 1e6 AS upload_lag_seconds,
  (unix_micros(current_timestamp()) - unix_micros(l.timestamp)) / 1e6 AS seconds_since_last_progress,
  (unix_micros(current_timestamp()) - unix_micros(t.last_upload_at)) / 1e6 AS seconds_since_last_upload,
  t.input_rows_1h,
  t.late_rows_1h,
  t.rejected_rows_1h,
  t.duplicate_rows_1h,
  t.alerts_1h,
  t.upload_failures_1h,
  t.input_rows_total,
  t.late_rows_total,
  t.rejected_rows_total,
  t.upload_failures_total,
  t.spool_evictions_1h,
  t.spool_evictions_total,
  t.rejected_rows_1h / NULLIF(t.input_rows_1h, 0) AS reject_rate_1h,
  f.fleet_last_progress_at,
  (unix_micros(f.fleet_last_progress_at) - unix_micros(l.timestamp)) / 1e6 AS seconds_behind_fleet
FROM latest l
JOIN totals t ON t.venue_id = l.venue_id AND t.gateway_id = l.gateway_id
CROSS JOIN fleet f
),
flagged AS (
SELECT
  h.*,
  h.seconds_behind_fleet > 300 AS is_silent,
  COALESCE(h.upload_lag_seconds > 300, h.spool_files > 0) AS is_late,
  h.spool_evictions_1h > 0 AS is_evicting,
  COALESCE(h.reject_rate_1h > 0.01, FALSE) AS is_rejecting
FROM health h
)
SELECT
  *,
  CASE
    WHEN is_silent THEN 'silent'
    WHEN is_late THEN 'late'
    WHEN is_evicting THEN 'evicting'
    WHEN is_rejecting THEN 'rejecting'
    ELSE 'ok'
  END AS status
FROM flagged
