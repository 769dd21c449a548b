//! The exposition's families, order and values.

use super::*;
use crate::model::SensorKind::Wearable;
use crate::telemetry::parse_metrics;

#[test]
fn unknown_fields_conflicts_and_clock_state_are_exposed_with_escaped_labels() {
    let mut s = MetricsSnapshot::default();
    let u = &mut s.counters.unknown_fields;
    u.note(Wearable, "accel");
    u.note(Wearable, "accel");
    u.note(Wearable, "we\"ird\\name\n");
    s.counters.duplicate_conflicts = 4;
    s.counters.clock_unsynced_events = 9;
    s.counters.clock_unvouched_events = 2;
    s.counters.clock_unsynchronized = true;
    let text = render(&s);
    let m = parse_metrics(&text);
    assert_eq!(
        m["pitchside_unknown_fields_total{sensor=\"wearable\",field=\"accel\"}"],
        2.0
    );
    assert!(
        text.contains("{sensor=\"wearable\",field=\"we\\\"ird\\\\name\\n\"} 1\n"),
        "{text}"
    );
    assert_eq!(m["pitchside_duplicate_conflicts_total"], 4.0);
    assert_eq!(m["pitchside_clock_unsynced_events_total"], 9.0);
    assert_eq!(m["pitchside_clock_unvouched_events_total"], 2.0);
    assert_eq!(m["pitchside_clock_synchronized"], 0.0);
    s.counters.clock_unsynchronized = false;
    let m = parse_metrics(&render(&s));
    assert_eq!(m["pitchside_clock_synchronized"], 1.0);
}

#[test]
fn families_are_served_in_their_documented_order() {
    let text = render(&MetricsSnapshot::default());
    let types: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE pitchside_"))
        .collect();
    assert_eq!(
        types.join("\n"),
        "build_info gauge
input_rows_total counter
readings_total counter
rejected_rows_total counter
late_rows_total counter
duplicate_rows_total counter
duplicate_conflicts_total counter
unknown_fields_total counter
clock_unsynced_events_total counter
clock_unvouched_events_total counter
clock_synchronized gauge
alerts_total counter
fatigue_alerts_total counter
evictions_total counter
window_drops_total counter
device_events_total counter
device_evictions_total counter
devices gauge
devices_silent gauge
health_paused gauge
load_players gauge
load_alerts_total counter
load_evictions_total counter
load_unrostered_players_total counter
load_speed_glitches_total counter
files_written_total counter
spool_evictions_total counter
lost_rows_total counter
spool_vanished_files_total counter
checkpoint_failures_total counter
sources_down gauge
source_down_seconds gauge
uploaded_files_total counter
upload_failures_total counter
upload_conflicts_total counter
upload_stuck_files gauge
seq_counter_failures_total counter
journal_enabled gauge
unjournaled_inputs_total counter
journal_failures_total counter
serial_disconnects_total counter
serial_dropped_lines_total counter
mqtt_messages_total counter
mqtt_disconnects_total counter
mqtt_dropped_messages_total counter
mqtt_oversized_messages_total counter
alerts_published_total counter
alerts_dropped_total counter
alerts_disconnects_total counter
alerts_queued gauge
notify_suppressed_total counter
notify_evictions_total counter
console_clients gauge
console_requests_total counter
console_unauthorized_total counter
console_clients_dropped_total counter
console_updates_dropped_total counter
console_states_replaced_total counter
console_bad_host_total counter
http_accept_errors_total counter
http_connections_refused_total counter
http_heads_timed_out_total counter
http_connections_evicted_total counter
input_rows_per_second gauge
state_keys gauge
state_bytes gauge
open_windows gauge
spool_files gauge
spool_bytes gauge
watermark_seconds gauge"
    );
}
