//! `/metrics` families of device health (SPEC §10), from the figures the
//! pipeline's tracker keeps in [`PipelineCounters`].

use super::exposition::{Exposition, Kind};
use crate::pipeline::PipelineCounters;

/// Device events, evictions, devices tracked and silent, pause.
pub(super) fn device_health(o: &mut Exposition, c: &PipelineCounters) {
    o.labelled(
        "pitchside_device_events_total",
        Kind::Counter,
        "Device events: a device went silent (nothing for health.silent_after of arrival time) or came back.",
        [
            ([("event", "silent")], c.device_events_silent),
            ([("event", "back")], c.device_events_back),
        ],
    );
    o.counter(
        "pitchside_device_evictions_total",
        "Devices forgotten at health.max_devices (least recently seen first); a forgotten device raises no silent.",
        c.device_evictions,
    );
    o.gauge(
        "pitchside_devices",
        "Devices tracked by device health.",
        c.devices as f64,
    );
    o.gauge(
        "pitchside_devices_silent",
        "Devices silent now.",
        c.devices_silent as f64,
    );
    o.gauge(
        "pitchside_health_paused",
        "1 while device health is paused (a planned stop: no device is reported silent).",
        if c.health_paused { 1.0 } else { 0.0 },
    );
}

#[cfg(test)]
mod tests {
    use crate::telemetry::{parse_metrics, render, MetricsSnapshot};

    #[test]
    fn device_health_figures_are_served_under_their_names() {
        let mut s = MetricsSnapshot::default();
        let c = &mut s.counters;
        (c.device_events_silent, c.device_events_back) = (3, 2);
        (c.device_evictions, c.devices, c.devices_silent) = (4, 28, 1);
        c.health_paused = true;
        let m = parse_metrics(&render(&s));
        assert_eq!(m["pitchside_device_events_total{event=\"silent\"}"], 3.0);
        assert_eq!(m["pitchside_device_events_total{event=\"back\"}"], 2.0);
        assert_eq!(m["pitchside_device_evictions_total"], 4.0);
        assert_eq!(m["pitchside_devices"], 28.0);
        assert_eq!(m["pitchside_devices_silent"], 1.0);
        assert_eq!(m["pitchside_health_paused"], 1.0);
    }
}
