-- Fleet queries for a data engineer: run them against the schema holding the
-- pitchside tables and views (run `USE pitchside` first, or qualify the names).
-- tests/test_fleet_health.py runs each statement over 20 simulated gateways.

-- 1. Gateways that need a look, worst first.
SELECT venue_id, gateway_id, status, last_progress_at, seconds_behind_fleet,
       upload_lag_seconds, spool_evictions_1h, reject_rate_1h
FROM fleet_health
WHERE status <> 'ok'
ORDER BY CASE status WHEN 'silent' THEN 0 WHEN 'late' THEN 1 WHEN 'evicting' THEN 2 ELSE 3 END,
         venue_id, gateway_id;

-- 2. How many gateways are in each state.
SELECT status, COUNT(*) AS gateways
FROM fleet_health
GROUP BY status
ORDER BY status;

-- 3. The gateways that lost data (spool evictions), with how much they had spooled.
SELECT venue_id, gateway_id, spool_evictions_1h, spool_evictions_total, spool_files, spool_bytes
FROM fleet_health
WHERE spool_evictions_total > 0
ORDER BY spool_evictions_total DESC, venue_id, gateway_id;

-- 4. The rejecting gateways and what their rejects look like (reason, count).
SELECT r.venue_id, r.gateway_id, r.reason, COUNT(*) AS rejects
FROM rejects r
JOIN fleet_health h ON h.venue_id = r.venue_id AND h.gateway_id = r.gateway_id
WHERE h.is_rejecting
GROUP BY r.venue_id, r.gateway_id, r.reason
ORDER BY r.venue_id, r.gateway_id, rejects DESC, r.reason;
