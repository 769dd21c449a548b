-- Acute:chronic workload ratio per player and UTC day, from the Edwards TRIMP
-- of load_player_1m (SPEC §11).
--
-- daily_load: the sum of trimp_edwards over the player's windows whose
--   window_start is on that UTC date (every match of the day, every gateway).
-- acute_load: the mean daily load of the 7 days ending on `date`;
--   chronic_load: the mean of the 28 days ending on `date`. Days without rows
--   count as 0, days before the player's first row too.
-- acwr: acute_load / chronic_load; NULL when chronic_load is 0.
-- history_days: days from the player's first day with rows to `date`,
--   inclusive. Below 28 the chronic load still counts days before the
--   player's first data as rest days: read the ratio with care.
--
-- One row per player and day from the player's first day with rows to the
-- venue's latest day with rows, so a player who stopped playing still has
-- rows, with a falling acute load. A player is (venue_id, player_id): the ids
-- the venue's gateways see; a club whose ids are the same at every venue can
-- group on player_id alone in its own copy.
WITH daily AS (
  SELECT venue_id, player_id, date, SUM(trimp_edwards) AS daily_load
  FROM load_player_1m
  GROUP BY venue_id, player_id, date
),
venue_last AS (
  SELECT venue_id, MAX(date) AS last_date
  FROM daily
  GROUP BY venue_id
),
first_days AS (
  SELECT venue_id, player_id, MIN(date) AS first_date
  FROM daily
  GROUP BY venue_id, player_id
),
player_days AS (
  SELECT f.venue_id, f.player_id, f.first_date,
         explode(sequence(f.first_date, v.last_date, INTERVAL 1 DAY)) AS date
  FROM first_days f
  JOIN venue_last v ON v.venue_id = f.venue_id
),
filled AS (
  SELECT
    c.venue_id,
    c.player_id,
    c.date,
    c.first_date,
    COALESCE(d.daily_load, 0D) AS daily_load
  FROM player_days c
  LEFT JOIN daily d
    ON d.venue_id = c.venue_id AND d.player_id = c.player_id AND d.date = c.date
),
rolling AS (
  SELECT
    venue_id,
    player_id,
    date,
    first_date,
    daily_load,
    -- The calendar is dense (one row per day), so 6 and 27 rows back are 6 and 27 days back.
    SUM(daily_load) OVER (PARTITION BY venue_id, player_id ORDER BY date
                          ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) / 7 AS acute_load,
    SUM(daily_load) OVER (PARTITION BY venue_id, player_id ORDER BY date
                          ROWS BETWEEN 27 PRECEDING AND CURRENT ROW) / 28 AS chronic_load
  FROM filled
)
SELECT
  venue_id,
  player_id,
  date,
  daily_load,
  acute_load,
  chronic_load,
  acute_load / NULLIF(chronic_load, 0D) AS acwr,
  datediff(date, first_date) + 1 AS history_days
FROM rolling
