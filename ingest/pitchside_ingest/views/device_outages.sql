-- Device outages (SPEC §10): each `silent` device event with the `back` that
-- ended it, per gateway (each gateway watches its own devices).
--
-- last_seen: arrival time of the device's last input before it went silent.
-- silent_at: when the gateway reported it silent (last_seen + health.silent_after).
-- back_at: arrival time of its next input; NULL when no `back` follows the
--   `silent` (still silent at the latest data, or the gateway restarted before
--   the device came back: the gateway does not keep its device list across a
--   restart, so such an outage has no end here).
-- outage_seconds: back_at - last_seen, how long nothing arrived from it.
-- player_id / zone_id: where the device was last seen (wearables / crowd sensors).
WITH ordered AS (
  SELECT
    e.*,
    LEAD(event) OVER device AS next_event,
    LEAD(at) OVER device AS next_at
  FROM device_events e
  WINDOW device AS (
    PARTITION BY venue_id, gateway_id, sensor, device_id
    -- At the same instant a `silent` comes before a `back`.
    ORDER BY at, CASE event WHEN 'silent' THEN 0 ELSE 1 END
  )
)
SELECT
  venue_id,
  gateway_id,
  sensor,
  device_id,
  player_id,
  zone_id,
  last_seen,
  at AS silent_at,
  CASE WHEN next_event = 'back' THEN next_at END AS back_at,
  CASE WHEN next_event = 'back' THEN (unix_micros(next_at) - unix_micros(last_seen)) / 1e6 END
    AS outage_seconds,
  date
FROM ordered
WHERE event = 'silent'
