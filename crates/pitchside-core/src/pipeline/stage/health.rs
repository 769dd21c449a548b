//! Device health in the stage: every accepted event tells the tracker its
//! device was heard from; the arrival clock (and `run`'s one-second timer)
//! checks for silent devices; planned stops pause the checks. Events go to
//! `device_events` and on live.

use super::Pipeline;
use crate::model::{Event, Micros};
use crate::pipeline::health::{DeviceHealth, DeviceStatus};
use crate::util::time::format_rfc3339;
use tracing::info;

impl Pipeline {
    /// The device of accepted event `e` was heard from at `received_at`;
    /// writes its `back` event if it was silent.
    pub(super) fn note_seen(&mut self, e: &Event, received_at: Micros) {
        let back = self
            .health
            .seen(e.sensor, &e.device_id, &e.identity, received_at, &e.values);
        if let Some(back) = back {
            self.out.device_event(back);
        }
        self.count_health();
    }

    /// Checks for silent devices when the arrival clock (`received_at` of
    /// an input) has moved a second since the last check, so that a replay
    /// raises the same events whatever the wall clock.
    pub(super) fn tick_health(&mut self, received_at: Micros) {
        let out = &mut self.out;
        if self.health.tick(received_at, &mut |e| out.device_event(e)) {
            self.count_health();
        }
    }

    /// Every device not heard from for `health.silent_after` before `now`
    /// raises `silent` (unless paused). `run` calls it once a second with
    /// the wall clock, so that silence is noticed when nothing arrives.
    pub fn check_health(&mut self, now: Micros) {
        let out = &mut self.out;
        self.health.check(now, &mut |e| out.device_event(e));
        self.count_health();
    }

    /// A planned stop (half-time, end of match) begins at `at`: no device
    /// becomes silent until [`Pipeline::resume_health`]. `false` when
    /// already paused.
    pub fn pause_health(&mut self, at: Micros) -> bool {
        let paused = self.health.pause(at);
        if paused {
            info!(
                at = %format_rfc3339(at),
                "Device health paused: no device is reported silent until it is resumed."
            );
        }
        self.count_health();
        paused
    }

    /// The planned stop ends at `at`: every device's silence clock restarts
    /// then. `false` when not paused.
    pub fn resume_health(&mut self, at: Micros) -> bool {
        let Some(since) = self.health.resume(at) else {
            return false;
        };
        info!(
            at = %format_rfc3339(at),
            paused_s = at.saturating_sub(since) / 1_000_000,
            silent_after_s = self.health.config().silent_after as f64 / 1e6,
            "Device health resumed: a device not heard from since is reported silent \
             health.silent_after from now."
        );
        self.count_health();
        true
    }

    /// Whether device health is paused.
    pub fn health_paused(&self) -> bool {
        self.health.paused_since().is_some()
    }

    /// Every device tracked, silent ones first (allocates: for the
    /// console, once a second).
    pub fn device_statuses(&self) -> Vec<DeviceStatus> {
        self.health.statuses()
    }

    /// The device health tracker (settings and figures).
    pub fn health(&self) -> &DeviceHealth {
        &self.health
    }

    /// Copies the tracker's figures into the counters.
    fn count_health(&mut self) {
        let h = &self.health;
        let c = &mut self.out.counters;
        let n = h.counters();
        c.device_events_silent = n.silent;
        c.device_events_back = n.back;
        c.device_evictions = n.evictions;
        c.devices = h.tracked() as u64;
        c.devices_silent = h.silent_now() as u64;
        c.health_paused = h.paused_since().is_some();
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{Micros, SensorKind};
    use crate::pipeline::console_rows::DeviceEventKind;
    use crate::pipeline::{LiveAlert, Pipeline};
    use crate::tables::TableId;

    const T0: Micros = 1_795_980_600_000_000;
    const SEC: Micros = 1_000_000;

    fn pipeline() -> Pipeline {
        let text = "[venue]\nid = \"v\"\ngateway_id = \"g\"\n[output]\nstore = \"file:///tmp/s\"\nspool_dir = \"/tmp/sp\"\n[health]\nsilent_after = \"5s\"\n";
        Pipeline::new(
            &crate::config::parse(text, "t").unwrap().validate().unwrap(),
            false,
        )
    }

    fn input(p: &mut Pipeline, sensor: &str, dev: &str, at: Micros) {
        let line = format!(
            r#"{{"sensor":"{sensor}","device_id":"{dev}","event_time":{},"zone_id":"north","decibels":90,"ball_speed":140}}"#,
            at / 1000
        );
        p.process_bytes("test", None, line.as_bytes(), at, at);
    }

    fn device_events(p: &mut Pipeline) -> Vec<(String, DeviceEventKind, Micros, Micros)> {
        p.drain_alerts()
            .into_iter()
            .filter_map(|a| match a {
                LiveAlert::Device(d) => Some((d.device_id, d.event, d.last_seen, d.at)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_arrival_clock_of_other_devices_raises_silent_and_the_next_input_back() {
        let mut p = pipeline();
        input(&mut p, "pitch", "radar", T0);
        for s in 0..=5 {
            input(&mut p, "crowd", "slm", T0 + s * SEC);
        }
        assert_eq!(
            device_events(&mut p),
            [("radar".into(), DeviceEventKind::Silent, T0, T0 + 5 * SEC)]
        );
        input(&mut p, "pitch", "radar", T0 + 7 * SEC);
        assert_eq!(
            device_events(&mut p),
            [("radar".into(), DeviceEventKind::Back, T0, T0 + 7 * SEC)]
        );
        let c = p.counters();
        assert_eq!((c.device_events_silent, c.device_events_back), (1, 1));
        assert_eq!((c.devices, c.devices_silent), (2, 0));
        let tables = p.take_tables(crate::tables::RowGroupLimit::ANY);
        let events = tables.iter().find(|t| t.table == TableId::DeviceEvents);
        assert_eq!(events.map(|t| t.rows), Some(2));
        let radar = p
            .device_statuses()
            .into_iter()
            .find(|d| d.device_id == "radar");
        let radar = radar.unwrap();
        assert_eq!(radar.sensor, SensorKind::Pitch);
        assert_eq!(radar.latest, vec![("ball_speed", 140.0)]);
    }

    #[test]
    fn paused_health_raises_no_silent_until_silent_after_past_the_resume() {
        let mut p = pipeline();
        input(&mut p, "pitch", "radar", T0);
        assert!(p.pause_health(T0 + SEC));
        assert!(p.health_paused() && p.counters().health_paused);
        p.check_health(T0 + 60 * SEC);
        assert!(device_events(&mut p).is_empty());
        assert!(p.resume_health(T0 + 60 * SEC));
        assert!(!p.resume_health(T0 + 60 * SEC));
        p.check_health(T0 + 64 * SEC);
        assert!(device_events(&mut p).is_empty());
        p.check_health(T0 + 65 * SEC);
        assert_eq!(
            device_events(&mut p),
            [("radar".into(), DeviceEventKind::Silent, T0, T0 + 65 * SEC)]
        );
        assert_eq!(p.counters().devices_silent, 1);
    }
}
