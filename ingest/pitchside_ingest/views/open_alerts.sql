-- Alerts nobody has acknowledged on a venue console yet (SPEC §10): z-score
-- alerts (kind 'anomaly'), fatigue alerts (kind 'fatigue') and player load
-- rule alerts (kind 'load', SPEC §11) with no row in alert_acks, all gateways
-- of a venue together. An ack from any console of the venue closes the alert.
-- Filter by date or match_id: an alert of a match played without the console
-- stays open here for ever.
--
-- alert_time: the event time the alert is about, the reading's event_time
--   (anomaly, load) or the window_start of the minute (fatigue).
-- metric: the reading's metric (anomaly), heart_rate (fatigue), or what the
--   load rule watches: hr_pct, sprints or load_pct (load).
-- rule: the name of the load rule that fired (NULL for the other kinds).
-- value: the reading (anomaly), the minute's mean heart rate (fatigue), or
--   the watched figure (load: % of HRmax, sprints, % of target_trimp);
--   z_score is NULL for fatigue and load alerts, device_id for fatigue, and
--   zone_id for both.
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
    CAST(NULL AS STRING) AS rule,
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
    CAST(NULL AS STRING) AS rule,
    heart_rate_mean AS value,
    CAST(NULL AS DOUBLE) AS z_score,
    window_start AS alert_time,
    date
  FROM fatigue_alerts
  UNION ALL
  SELECT
    'load' AS kind,
    alert_id,
    venue_id,
    gateway_id,
    match_id,
    player_id,
    player_name,
    CAST(NULL AS STRING) AS zone_id,
    'wearable' AS sensor,
    device_id,
    watch AS metric,
    rule,
    value,
    CAST(NULL AS DOUBLE) AS z_score,
    event_time AS alert_time,
    date
  FROM load_alerts
)
SELECT r.*
FROM raised r
LEFT ANTI JOIN alert_acks k
  ON k.venue_id = r.venue_id AND k.alert_id = r.alert_id
