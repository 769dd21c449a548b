//! The log line of each alert, at INFO: what went wrong and, where the event
//! said, who or where (`player=7 player_name="R. Sharma"`, `zone="north"`,
//! `delivery=12`). Fields a kind has not are left out, not logged empty.

use crate::pipeline::LiveAlert;
use crate::util::time::format_rfc3339;
use tracing::info;

/// Logs one line per alert.
pub fn log_alerts(alerts: &[LiveAlert]) {
    for a in alerts {
        match a {
            // An `Option` field is left out of the line when it is `None`.
            LiveAlert::ZScore(a) => info!(
                sensor = %a.sensor,
                device = %a.device_id,
                metric = %a.metric,
                value = a.value,
                z = format!("{:.2}", a.z_score),
                at = %format_rfc3339(a.event_time),
                player = a.identity.player_id,
                player_name = a.identity.player_name.as_deref(),
                zone = a.identity.zone_id.as_deref(),
                delivery = a.identity.delivery_id,
                "ALERT anomaly"
            ),
            LiveAlert::Fatigue(f) => info!(
                match_id = f.match_id,
                player = f.player_id,
                name = f.player_name.as_deref().unwrap_or(""),
                heart_rate_mean = format!("{:.1}", f.heart_rate_mean),
                baseline = format!("{:.1}", f.finding.baseline_mean),
                window = %format_rfc3339(f.window_start),
                "ALERT fatigue"
            ),
            LiveAlert::Load(l) => info!(
                rule = %l.rule,
                watch = %l.watch,
                match_id = l.match_id,
                player = l.player_id,
                name = l.player_name.as_deref().unwrap_or(""),
                value = format!("{:.1}", l.value),
                threshold = l.threshold,
                at = %format_rfc3339(l.event_time),
                "ALERT load"
            ),
            LiveAlert::Device(d) => info!(
                sensor = %d.sensor,
                device = %d.device_id,
                player = d.player_id,
                zone = d.zone_id.as_deref(),
                last_seen = %format_rfc3339(d.last_seen),
                "DEVICE {}",
                d.event.as_str()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SensorKind;
    use crate::pipeline::detect::stats::Baseline;
    use crate::pipeline::rows::{AlertIdentity, AlertRecord};
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    /// A log sink the test reads back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The text log of one alert of `sensor` with `identity`.
    fn line(sensor: SensorKind, identity: AlertIdentity) -> String {
        let out = Captured::default();
        let w = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || w.clone())
            .with_ansi(false)
            .with_target(false)
            .finish();
        let alert = LiveAlert::ZScore(AlertRecord {
            alert_id: "v/x/d/m/1".into(),
            sensor,
            device_id: "d-1".into(),
            metric: "m".into(),
            value: 190.0,
            z_score: 8.25,
            baseline: Baseline {
                mean: 120.0,
                std: 4.0,
                count: 30,
            },
            match_id: 1,
            event_time: 1_795_980_600_000_000,
            detected_at: 1_795_980_600_000_000,
            identity,
            clock_synchronized: Some(true),
        });
        tracing::subscriber::with_default(subscriber, || log_alerts(&[alert]));
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        text
    }

    #[test]
    fn a_wearable_alert_line_names_the_player() {
        let l = line(
            SensorKind::Wearable,
            AlertIdentity {
                player_id: Some(7),
                player_name: Some("R. Sharma".into()),
                ..AlertIdentity::default()
            },
        );
        assert!(l.contains("ALERT anomaly"), "{l}");
        assert!(l.contains(r#"player=7 player_name="R. Sharma""#), "{l}");
        assert!(!l.contains("zone") && !l.contains("delivery"), "{l}");
    }

    #[test]
    fn crowd_and_pitch_alert_lines_name_the_zone_and_the_delivery() {
        let zone = AlertIdentity {
            zone_id: Some("north-stand".into()),
            ..AlertIdentity::default()
        };
        let l = line(SensorKind::Crowd, zone);
        assert!(l.contains(r#"zone="north-stand""#), "{l}");
        assert!(!l.contains("player"), "{l}");
        let delivery = AlertIdentity {
            delivery_id: Some(12),
            ..AlertIdentity::default()
        };
        assert!(line(SensorKind::Pitch, delivery).contains("delivery=12"));
    }

    #[test]
    fn a_generic_alert_line_has_no_identity_fields() {
        let l = line(SensorKind::Generic, AlertIdentity::default());
        assert!(l.contains(r#"metric=m value=190.0"#), "{l}");
        for k in ["player", "zone", "delivery"] {
            assert!(!l.contains(k), "{k} in {l}");
        }
    }
}
