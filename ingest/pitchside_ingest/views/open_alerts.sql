-- Alerts nobody has acknowledged on a venue console yet (SPEC §10): z-score
-- alerts (kind 'anomaly') and fatigue alerts (kind 'fatigue') with no row in
-- alert_acks, all gateways of a venue together. An ack from any console of
-- the venue closes the alert. Filter by date or match_id: an alert of a match
-- played without the console stays open here for ever.
--
-- alert_time: the event time the alert is about, the reading's event_time
--   (anomaly) or the window_start of the minute (fatigue).
-- value: the reading (anomaly) or the minute's mean heart rate (fatigue);
--   z_score is NULL for fatigue alerts, device_id and zone_id too.
WITH raised AS (
  SELECT
    'anomaly' AS kind,
    alert_id,
    venue_id,
    gateway_id,
    match_id,
    player_id,
    player_name,
    zone_id,
    sensor,
    device_id,
    metric,
    value,
    z_score,
    event_time AS alert_time,
    date
  FROM alerts
  UNION ALL
  SELECT
    'fatigue' AS kind,
    alert_id,
    venue_id,
    gateway_id,
    match_id,
    player_id,
    player_name,
    CAST(NULL AS STRING) AS zone_id,
    'wearable' AS sensor,
    CAST(NULL AS STRING) AS device_id,
    'heart_rate' AS metric,
    heart_rate_mean AS value,
    CAST(NULL AS DOUBLE) AS z_score,
    window_start AS alert_time,
    date
  FROM fatigue_alerts
)
SELECT r.*
FROM raised r
LEFT ANTI JOIN alert_acks k
  ON k.venue_id = r.venue_id AND k.alert_id = r.alert_id
