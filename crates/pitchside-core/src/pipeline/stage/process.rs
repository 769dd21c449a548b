//! Processing one input: decode it, count it, and either record the reject
//! or take the event's readings through the detector, the tables and the
//! windows.

use super::Pipeline;
use crate::model::{Event, Micros, RawInput, RejectReason, SensorKind};
use crate::pipeline::decode::map::Context;
use crate::pipeline::decode::unknown::{Noted, UnknownFields, MAX_TRACKED};
use crate::pipeline::decode::Decoded;
use crate::pipeline::detect::Observation;
use crate::pipeline::window::Placement;
use crate::util::time::format_rfc3339;
use tracing::warn;

impl Pipeline {
    /// Processes one input at wall-clock time `clock`. (`#[inline]`, like
    /// `process_line`: the daemon and `replay` call it from the crates
    /// above, once an input.)
    #[inline]
    pub fn process(&mut self, input: &RawInput, clock: Micros) {
        self.guard.tick(clock);
        let unknown = &mut self.out.counters.unknown_fields;
        let decoded = self.decoder.decode_with(input, clock, &mut |k, dev, name| {
            note_unknown(unknown, k, dev, name)
        });
        self.apply(
            decoded,
            &input.source,
            &input.payload,
            input.received_at,
            clock,
            None,
        );
    }

    /// Line `line` (1-based) of a file: as [`Pipeline::process_bytes`], and
    /// a reject's detail starts with `line {line}: `.
    #[inline]
    pub fn process_line(
        &mut self,
        source: &str,
        hint: Option<SensorKind>,
        payload: &[u8],
        line: u64,
        received_at: Micros,
        clock: Micros,
    ) {
        let decoded = self.decode_bytes(payload, hint, clock);
        self.apply(decoded, source, payload, received_at, clock, Some(line));
    }

    /// Line `line` (1-based) of a file in the device format of the source
    /// named `mapping` (SPEC §9; `replay --source`); `topic` stands in for
    /// the MQTT topic of a message.
    #[allow(clippy::too_many_arguments)]
    pub fn process_mapped_line(
        &mut self,
        source: &str,
        mapping: &str,
        topic: Option<&str>,
        payload: &[u8],
        line: u64,
        received_at: Micros,
        clock: Micros,
    ) {
        self.guard.tick(clock);
        let cx = Context {
            topic,
            received_at,
            clock,
        };
        let decoded = self.decoder.decode_mapped(mapping, payload, &cx);
        self.apply(decoded, source, payload, received_at, clock, Some(line));
    }

    /// Processes one line of bytes from `source` (no allocation for the input).
    pub fn process_bytes(
        &mut self,
        source: &str,
        hint: Option<SensorKind>,
        payload: &[u8],
        received_at: Micros,
        clock: Micros,
    ) {
        let decoded = self.decode_bytes(payload, hint, clock);
        self.apply(decoded, source, payload, received_at, clock, None);
    }

    fn decode_bytes<'a>(
        &mut self,
        payload: &'a [u8],
        hint: Option<SensorKind>,
        clock: Micros,
    ) -> Decoded<'a> {
        self.guard.tick(clock);
        let unknown = &mut self.out.counters.unknown_fields;
        self.decoder
            .decode_bytes_with(payload, hint, clock, &mut |k, dev, name| {
                note_unknown(unknown, k, dev, name)
            })
    }

    fn apply(
        &mut self,
        d: Decoded,
        source: &str,
        payload: &[u8],
        received_at: Micros,
        clock: Micros,
        line: Option<u64>,
    ) {
        self.tick_health(received_at);
        match d {
            Decoded::Skip => {}
            Decoded::Reject(mut r) => {
                if let Some(n) = line {
                    r.detail = format!("line {n}: {}", r.detail);
                }
                self.reject_input(source, r.reason, &r.detail, payload, received_at);
            }
            // By reference: moving the event out of `d` would copy it.
            Decoded::Event(ref e) => {
                if self.plausible(e, source, payload, received_at, clock, line) {
                    self.accept_counted(e, received_at, clock);
                }
            }
            Decoded::Events(events) => {
                for e in &events {
                    if self.plausible(e, source, payload, received_at, clock, line) {
                        self.accept_counted(e, received_at, clock);
                    }
                }
            }
        }
    }

    fn accept_counted(&mut self, e: &Event, received_at: Micros, clock: Micros) {
        self.out.counters.input_rows += 1;
        if !self.synced {
            self.out.counters.clock_unsynced_events += 1;
        }
        self.accept(e, received_at, clock);
    }

    /// While the clock is unsynchronised (live only), `e` must be at most
    /// `limits.max_future` ahead of the trusted time; if not, it is
    /// rejected as `implausible_time` (and counted) and `false` returned.
    /// With a synchronised clock the decoder has judged it already.
    #[inline]
    fn plausible(
        &mut self,
        e: &Event,
        source: &str,
        payload: &[u8],
        received_at: Micros,
        clock: Micros,
        line: Option<u64>,
    ) -> bool {
        if self.synced {
            return true;
        }
        let Some(max_future) = self.max_future else {
            return true;
        };
        let device = crate::util::hash::fx_hash(e.device_id.as_bytes()) ^ e.sensor as u64;
        let Err(trusted) = self.guard.judge(device, e.event_time, clock, max_future) else {
            return true;
        };
        self.out.counters.clock_unvouched_events += 1;
        let detail = format!(
            "{}event time {} is more than limits.max_future ahead of the trusted time {} \
             (the clock is unsynchronised and no two devices agree on a later time)",
            line.map(|n| format!("line {n}: ")).unwrap_or_default(),
            format_rfc3339(e.event_time),
            format_rfc3339(trusted),
        );
        self.reject_input(
            source,
            RejectReason::ImplausibleTime,
            &detail,
            payload,
            received_at,
        );
        false
    }

    /// Records a rejected input: the decoder's, or one that a source
    /// rejected itself (an overlong line).
    pub fn reject_input(
        &mut self,
        source: &str,
        reason: RejectReason,
        detail: &str,
        payload: &[u8],
        at: Micros,
    ) {
        self.out.counters.input_rows += 1;
        self.out.counters.rejected[reason as usize] += 1;
        self.out
            .reject(source, reason, detail, payload, self.max_event_bytes, at);
    }

    /// An accepted event: each reading through the detector, the new ones
    /// (not duplicates) to `raw` or `late`, and to their window unless late.
    fn accept(&mut self, e: &Event, received_at: Micros, clock: Micros) {
        self.out.counters.accepted += 1;
        self.note_seen(e, received_at);
        self.detector.advance(e.event_time);
        let (start, late) = self.windows.window_of(e.sensor, e.event_time);
        let mut nondup = std::mem::take(&mut self.nondup);
        nondup.clear();
        for &(i, x) in &e.values {
            if self.observe(e, i, x, clock) {
                nondup.push((i, x));
            }
        }
        self.out.counters.readings += nondup.len() as u64;
        self.out.readings(e, &nondup, received_at, late, self.raw);
        if late.is_none() && !nondup.is_empty() {
            match self.windows.add_to(e, start, &nondup) {
                Placement::Dropped => self.out.counters.window_drops += 1,
                _ if e.sensor == SensorKind::Wearable => self.credit_load(e, start, &nondup, clock),
                _ => {}
            }
        }
        self.nondup = nondup;
        self.out.counters.evictions = self.detector.counters().evictions;
        let out = &mut self.out;
        self.windows
            .advance(e.sensor, e.event_time, &mut |w| out.window(w));
    }

    /// The windowed readings of wearable event `e` to the load tracker.
    fn credit_load(&mut self, e: &Event, start: Micros, values: &[(u8, f64)], clock: Micros) {
        let out = &mut self.out;
        out.load.add(e, start, values);
        out.counters.load = out.load.counters();
        out.counters.load_players = out.load.players() as u64;
        if out.load.fired() {
            out.load_alerts(e, clock);
        }
    }

    /// Reading `i` (value `x`) of `e` through the detector, writing an alert
    /// if it is one; `false` for a duplicate.
    fn observe(&mut self, e: &Event, i: u8, x: f64, clock: Micros) -> bool {
        let metric = e.metric_name(i);
        match self
            .detector
            .observe(e.sensor, &e.device_id, metric, e.event_time, x)
        {
            Observation::Duplicate { stored } => {
                self.duplicate(e, metric, stored, x, clock);
                false
            }
            Observation::Normal => true,
            Observation::Alert { z_score, baseline } => {
                self.out.alert(e, metric, x, z_score, baseline, clock);
                true
            }
        }
    }

    /// Counts a duplicate reading; one whose value differs from the reading
    /// kept is a conflict, and says so (rate-limited).
    fn duplicate(&mut self, e: &Event, metric: &str, stored: f64, x: f64, clock: Micros) {
        self.out.counters.duplicate_rows += 1;
        // Not `to_bits`: 0.0 and -0.0 are the same reading.
        if stored == x {
            return;
        }
        self.out.counters.duplicate_conflicts += 1;
        if let Some(not_logged) = self.conflict_log.allow(clock) {
            warn!(
                sensor = %e.sensor,
                device = %e.device_id,
                metric,
                at = %format_rfc3339(e.event_time),
                kept = stored,
                ignored = x,
                not_logged,
                "A reading with the same key and event time as an earlier one has another value: \
                 the first is kept. Two devices with one id, or a device clock repeating times? \
                 Counted in pitchside_duplicate_conflicts_total."
            );
        }
    }
}

/// Counts an unknown numeric field; the first time a name is seen, says so.
fn note_unknown(u: &mut UnknownFields, sensor: SensorKind, device: &str, name: &str) {
    match u.note(sensor, name) {
        Noted::Again => {}
        Noted::First => {
            let known = match sensor {
                SensorKind::Generic => "value".to_string(),
                k => k.metrics().join(", "),
            };
            warn!(
                field = ?name,
                device,
                "Numeric field ignored: not a {sensor} field (a misspelled metric? {sensor} \
                 metrics are {known}). Its events are accepted without it; counted in \
                 pitchside_unknown_fields_total."
            );
        }
        Noted::Overflow => warn!(
            field = ?name,
            device,
            "More than {MAX_TRACKED} distinct unknown numeric fields: later ones are counted \
             as field=\"other\" and not logged."
        ),
    }
}
