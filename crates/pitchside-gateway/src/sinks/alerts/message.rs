//! An alert as it goes out: the topic and the JSON object with the columns
//! of the `alerts` / `fatigue_alerts` / `device_events` table (timestamps as RFC 3339; the
//! identity columns its kind lacks are `null`, never left out).

use crate::pipeline::LiveAlert;
use crate::util::time::format_rfc3339;

/// One alert ready to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// See [`topic`].
    pub topic: String,
    /// The JSON object.
    pub payload: Vec<u8>,
}

/// Who sends the alerts: stamped into every message.
#[derive(Debug, Clone)]
pub struct Origin {
    /// `venue.id`.
    pub venue_id: String,
    /// `venue.gateway_id`.
    pub gateway_id: String,
}

impl Message {
    /// The message for `a` under topic prefix `prefix`.
    pub fn render(prefix: &str, origin: &Origin, a: LiveAlert) -> Message {
        Message {
            topic: topic(prefix, &a),
            payload: to_json(origin, &a).to_string().into_bytes(),
        }
    }
}

/// `{prefix}/{sensor}/{device_id}`, `{prefix}/fatigue/{player_id}`,
/// `{prefix}/load/{player_id}` or `{prefix}/device/{device_id}`.
pub fn topic(prefix: &str, a: &LiveAlert) -> String {
    match a {
        LiveAlert::ZScore(a) => format!("{prefix}/{}/{}", a.sensor, a.device_id),
        LiveAlert::Fatigue(f) => format!("{prefix}/fatigue/{}", f.player_id),
        LiveAlert::Load(l) => format!("{prefix}/load/{}", l.player_id),
        LiveAlert::Device(d) => format!("{prefix}/device/{}", d.device_id),
    }
}

/// The JSON object of `a`: the columns of its table, timestamps as RFC 3339,
/// absent identity columns `null`. The MQTT payload and the console's
/// events are this object.
pub fn to_json(origin: &Origin, a: &LiveAlert) -> serde_json::Value {
    let (venue, gateway) = (&origin.venue_id, &origin.gateway_id);
    match a {
        LiveAlert::ZScore(a) => serde_json::json!({
            "alert_id": a.alert_id,
            "venue_id": venue,
            "gateway_id": gateway,
            "sensor": a.sensor.as_str(),
            "device_id": a.device_id,
            "metric": a.metric,
            "value": a.value,
            "z_score": a.z_score,
            "baseline_mean": a.baseline.mean,
            "baseline_std": a.baseline.std,
            "baseline_count": a.baseline.count,
            "match_id": a.match_id,
            "event_time": format_rfc3339(a.event_time),
            "detected_at": format_rfc3339(a.detected_at),
            "player_id": a.identity.player_id,
            "player_name": a.identity.player_name,
            "zone_id": a.identity.zone_id,
            "delivery_id": a.identity.delivery_id,
            "clock_synchronized": a.clock_synchronized,
        }),
        LiveAlert::Fatigue(f) => serde_json::json!({
            "alert_id": f.alert_id,
            "venue_id": venue,
            "gateway_id": gateway,
            "match_id": f.match_id,
            "player_id": f.player_id,
            "player_name": f.player_name,
            "window_start": format_rfc3339(f.window_start),
            "window_end": format_rfc3339(f.window_end),
            "heart_rate_mean": f.heart_rate_mean,
            "baseline_mean": f.finding.baseline_mean,
            "baseline_std": f.finding.baseline_std,
            "baseline_windows": f.finding.baseline_windows,
        }),
        LiveAlert::Load(l) => serde_json::json!({
            "alert_id": l.alert_id,
            "venue_id": venue,
            "gateway_id": gateway,
            "rule": l.rule,
            "watch": l.watch,
            "match_id": l.match_id,
            "player_id": l.player_id,
            "player_name": l.player_name,
            "position": l.position,
            "device_id": l.device_id,
            "value": l.value,
            "threshold": l.threshold,
            "event_time": format_rfc3339(l.event_time),
            "detected_at": format_rfc3339(l.detected_at),
        }),
        LiveAlert::Device(d) => serde_json::json!({
            "venue_id": venue,
            "gateway_id": gateway,
            "sensor": d.sensor.as_str(),
            "device_id": d.device_id,
            "player_id": d.player_id,
            "zone_id": d.zone_id,
            "event": d.event.as_str(),
            "last_seen": format_rfc3339(d.last_seen),
            "at": format_rfc3339(d.at),
        }),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::model::SensorKind;
    use crate::pipeline::detect::stats::Baseline;
    use crate::pipeline::fatigue::FatigueFinding;
    use crate::pipeline::rows::{AlertIdentity, AlertRecord, FatigueRecord};
    use crate::tables::TableId;
    use std::collections::BTreeSet;

    pub(in crate::sinks::alerts) fn origin() -> Origin {
        Origin {
            venue_id: "v".into(),
            gateway_id: "gw".into(),
        }
    }

    pub(in crate::sinks::alerts) fn zscore() -> LiveAlert {
        LiveAlert::ZScore(record())
    }

    /// A generic sensor's alert record.
    fn record() -> AlertRecord {
        AlertRecord {
            alert_id: "v/generic/env-1/temp/1".into(),
            sensor: SensorKind::Generic,
            device_id: "env-1".into(),
            metric: "temp".into(),
            value: 95.0,
            z_score: 12.5,
            baseline: Baseline {
                mean: 20.0,
                std: 0.5,
                count: 25,
            },
            match_id: 3,
            event_time: 1_764_444_600_250_000,
            detected_at: 1_764_444_601_000_000,
            identity: AlertIdentity::default(),
            clock_synchronized: Some(true),
        }
    }

    /// [`record`] as if raised by a `sensor` event with `identity`.
    fn zscore_of(sensor: SensorKind, device: &str, identity: AlertIdentity) -> LiveAlert {
        LiveAlert::ZScore(AlertRecord {
            sensor,
            device_id: device.into(),
            identity,
            ..record()
        })
    }

    fn fatigue() -> LiveAlert {
        LiveAlert::Fatigue(FatigueRecord {
            alert_id: "v/fatigue/3/7/1".into(),
            match_id: 3,
            player_id: 7,
            player_name: None,
            window_start: 1_764_444_600_000_000,
            window_end: 1_764_444_660_000_000,
            heart_rate_mean: 171.0,
            finding: FatigueFinding {
                baseline_mean: 150.0,
                baseline_std: 4.0,
                baseline_windows: 3,
            },
        })
    }

    /// `a` rendered under "site/alerts": its topic and JSON, whose keys
    /// must be the columns of `table`.
    fn rendered(a: LiveAlert, table: TableId) -> (String, serde_json::Value) {
        let m = Message::render("site/alerts", &origin(), a);
        let v: serde_json::Value = serde_json::from_slice(&m.payload).unwrap();
        let keys: BTreeSet<String> = v.as_object().unwrap().keys().cloned().collect();
        let columns: BTreeSet<String> = table.columns().iter().map(|c| c.name.clone()).collect();
        assert_eq!(keys, columns);
        (m.topic, v)
    }

    #[test]
    fn zscore_alert_json_has_the_alerts_table_columns_and_its_topic() {
        let (topic, v) = rendered(zscore(), TableId::Alerts);
        assert_eq!(topic, "site/alerts/generic/env-1");
        assert_eq!(v["event_time"], "2025-11-29T19:30:00.250000Z");
        assert_eq!(v["baseline_count"], 25);
        for k in ["player_id", "player_name", "zone_id", "delivery_id"] {
            assert!(v[k].is_null(), "a generic alert has no {k}: {v}");
        }
    }

    #[test]
    fn wearable_alert_json_names_the_player() {
        let who = AlertIdentity {
            player_id: Some(7),
            player_name: Some("R. Sharma".into()),
            ..AlertIdentity::default()
        };
        let (topic, v) = rendered(
            zscore_of(SensorKind::Wearable, "band-07", who),
            TableId::Alerts,
        );
        assert_eq!(topic, "site/alerts/wearable/band-07");
        assert_eq!(v["player_id"], 7);
        assert_eq!(v["player_name"], "R. Sharma");
        assert!(v["zone_id"].is_null() && v["delivery_id"].is_null(), "{v}");
    }

    #[test]
    fn wearable_alert_json_without_a_name_has_a_null_player_name() {
        let who = AlertIdentity {
            player_id: Some(9),
            ..AlertIdentity::default()
        };
        let (_, v) = rendered(
            zscore_of(SensorKind::Wearable, "band-09", who),
            TableId::Alerts,
        );
        assert_eq!(v["player_id"], 9);
        assert!(v.as_object().unwrap().contains_key("player_name"));
        assert!(v["player_name"].is_null());
    }

    #[test]
    fn crowd_and_pitch_alert_json_name_the_zone_and_the_delivery() {
        let zone = AlertIdentity {
            zone_id: Some("north-stand".into()),
            ..AlertIdentity::default()
        };
        let (_, v) = rendered(zscore_of(SensorKind::Crowd, "slm-1", zone), TableId::Alerts);
        assert_eq!(v["zone_id"], "north-stand");
        assert!(
            v["player_id"].is_null() && v["delivery_id"].is_null(),
            "{v}"
        );

        let delivery = AlertIdentity {
            delivery_id: Some(42),
            ..AlertIdentity::default()
        };
        let (_, v) = rendered(
            zscore_of(SensorKind::Pitch, "radar", delivery),
            TableId::Alerts,
        );
        assert_eq!(v["delivery_id"], 42);
        assert!(v["zone_id"].is_null() && v["player_name"].is_null(), "{v}");
    }

    #[test]
    fn a_player_name_with_quotes_and_non_ascii_round_trips_through_the_json() {
        let name = "Zoë \"Zed\" O'Neil\\";
        let who = AlertIdentity {
            player_id: Some(1),
            player_name: Some(name.into()),
            ..AlertIdentity::default()
        };
        let (_, v) = rendered(zscore_of(SensorKind::Wearable, "b", who), TableId::Alerts);
        assert_eq!(v["player_name"], name);
    }

    #[test]
    fn load_alert_json_has_the_load_alerts_table_columns_and_its_topic() {
        let a = LiveAlert::Load(crate::pipeline::load_rows::LoadAlertRecord {
            alert_id: "v/load/red-zone/3/7/1".into(),
            rule: "red-zone".into(),
            watch: "hr_pct".into(),
            match_id: 3,
            player_id: 7,
            player_name: Some("Ada".into()),
            position: None,
            device_id: "vest-7".into(),
            value: 93.5,
            threshold: 92.0,
            event_time: 1_764_444_600_000_000,
            detected_at: 1_764_444_600_500_000,
        });
        let (topic, v) = rendered(a, TableId::LoadAlerts);
        assert_eq!(topic, "site/alerts/load/7");
        assert_eq!(
            (v["rule"].as_str(), v["value"].as_f64()),
            (Some("red-zone"), Some(93.5))
        );
        assert!(v["position"].is_null());
    }

    #[test]
    fn fatigue_alert_json_has_the_fatigue_table_columns_and_its_topic() {
        let (topic, v) = rendered(fatigue(), TableId::FatigueAlerts);
        assert_eq!(topic, "site/alerts/fatigue/7");
        assert!(v["player_name"].is_null());
        assert_eq!(v["venue_id"], "v");
    }
}
