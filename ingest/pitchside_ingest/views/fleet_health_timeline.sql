-- Gateway progress per minute, the figures of Spark's streaming query progress
-- dashboard: input vs processing rate, batch duration, state size, late and
-- rejected rows. Counters (input_rows, late_rows, ...) are per progress interval
-- and are summed; gauges (state_*, spool_*, open_windows) take the minute's maximum.
SELECT
  venue_id,
  gateway_id,
  date_trunc('MINUTE', timestamp) AS minute,
  COUNT(*) AS progress_rows,
  SUM(input_rows) AS input_rows,
  AVG(input_rows_per_second) AS input_rows_per_second,
  AVG(processed_rows_per_second) AS processed_rows_per_second,
  MAX(batch_duration_ms) AS max_batch_duration_ms,
  MAX(state_keys) AS state_keys,
  MAX(state_bytes) AS state_bytes,
  MAX(open_windows) AS open_windows,
  SUM(late_rows) AS late_rows,
  SUM(rejected_rows) AS rejected_rows,
  SUM(duplicate_rows) AS duplicate_rows,
  SUM(alerts) AS alerts,
  SUM(evictions) AS evictions,
  MAX(spool_files) AS spool_files,
  MAX(spool_bytes) AS spool_bytes,
  SUM(uploaded_files) AS uploaded_files,
  SUM(upload_failures) AS upload_failures
FROM progress
GROUP BY venue_id, gateway_id, date_trunc('MINUTE', timestamp)
