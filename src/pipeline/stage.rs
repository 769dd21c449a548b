//! The pipeline stage: decode → detect → windows → fatigue → table rows.
//!
//! One [`Pipeline`] owns all state of the data path. It is synchronous and
//! takes the wall clock as an argument, so `replay`, the daemon, tests and
//! the benchmark all drive the same code.

use crate::config::Config;
use crate::model::{Event, Micros, RawInput, RejectReason, SensorKind};
use crate::pipeline::decode::unknown::{Noted, UnknownFields, MAX_TRACKED};
use crate::pipeline::decode::{Decoded, Decoder};
use crate::pipeline::detect::{Detector, DetectorParams, Observation};
use crate::pipeline::fatigue::FatigueTracker;
use crate::pipeline::rows::{alert_id, fatigue_alert_id, AlertRecord, FatigueRecord};
use crate::pipeline::window::{GroupKey, Placement, WindowAggregator, WindowParams, WindowRow};
use crate::tables::{Stamp, TableBuffer, TableId};
use crate::util::clock::{ClockState, KernelClock};
use crate::util::log_limit::LogLimiter;
use crate::util::time::format_rfc3339;
use tracing::{info, warn};

/// How often (of the wall clock handed in) the clock's sync state is asked.
const CLOCK_POLL: Micros = 1_000_000;
/// At most one log line per this much wall-clock time for duplicate conflicts.
const CONFLICT_LOG_PERIOD: Micros = 10_000_000;

/// Cumulative counters of the data path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PipelineCounters {
    /// Inputs seen (lines/messages, including rejects, excluding empty lines).
    pub input_rows: u64,
    /// Events accepted.
    pub accepted: u64,
    /// Readings accepted (non-duplicate).
    pub readings: u64,
    /// Rejects by reason, in [`RejectReason::ALL`] order.
    pub rejected: [u64; 13],
    /// Late readings.
    pub late_rows: u64,
    /// Duplicate readings.
    pub duplicate_rows: u64,
    /// z-score alerts.
    pub alerts: u64,
    /// Fatigue alerts.
    pub fatigue_alerts: u64,
    /// Key evictions in the detector.
    pub evictions: u64,
    /// Events not windowed because `windows.max_open_groups` was reached.
    pub window_drops: u64,
    /// Windows emitted.
    pub windows_emitted: u64,
    /// Duplicate readings whose value differs from the reading kept (also
    /// counted in `duplicate_rows`).
    pub duplicate_conflicts: u64,
    /// Events accepted without the `limits.max_future` check because the
    /// kernel reported the clock unsynchronised.
    pub clock_unsynced_events: u64,
    /// The clock is unsynchronised now (a state, not a counter; live only).
    pub clock_unsynchronized: bool,
    /// Numeric fields of accepted events that their kind does not know.
    pub unknown_fields: UnknownFields,
}

impl PipelineCounters {
    /// All rejects.
    pub fn rejected_total(&self) -> u64 {
        self.rejected.iter().sum()
    }
}

/// The data-path state.
pub struct Pipeline {
    decoder: Decoder,
    detector: Detector,
    windows: WindowAggregator,
    raw: bool,
    max_event_bytes: usize,
    nondup: Vec<(u8, f64)>,
    clock: ClockWatch,
    conflict_log: LogLimiter,
    out: Outputs,
}

/// Asks a [`ClockState`] at most once per [`CLOCK_POLL`] whether the clock is
/// synchronised (live sources only).
struct ClockWatch {
    state: Option<Box<dyn ClockState>>,
    asked_at: Option<Micros>,
    synced: bool,
}

impl ClockWatch {
    /// `Some(new state)` when the answer changed (the start counts as synchronised).
    fn poll(&mut self, clock: Micros) -> Option<bool> {
        let state = self.state.as_mut()?;
        if let Some(at) = self.asked_at {
            if (0..CLOCK_POLL).contains(&clock.saturating_sub(at)) {
                return None;
            }
        }
        self.asked_at = Some(clock);
        let synced = state.synchronized();
        (synced != std::mem::replace(&mut self.synced, synced)).then_some(synced)
    }
}

/// What the pipeline produces: table rows, counters, real-time alerts. Kept
/// apart from the window aggregator so that emitted windows are written as
/// they are handed out, never collected.
struct Outputs {
    stamp: Stamp,
    fatigue: FatigueTracker,
    tables: Vec<TableBuffer>,
    counters: PipelineCounters,
    /// Alerts raised since the last [`Pipeline::drain_alerts`], for real-time outputs.
    live_alerts: Vec<LiveAlert>,
    live_alerts_cap: usize,
    /// When the gateway was not running (marks windows; none in `replay`).
    downtime: crate::pipeline::downtime::Downtime,
}

/// An alert for real-time outputs (log line, MQTT).
#[derive(Debug, Clone, PartialEq)]
pub enum LiveAlert {
    /// A z-score alert.
    ZScore(AlertRecord),
    /// A fatigue alert.
    Fatigue(FatigueRecord),
}

impl Pipeline {
    /// A pipeline for `config`. `live` turns on the wall-clock plausibility
    /// check of event times (off in `replay`).
    pub fn new(config: &Config, live: bool) -> Pipeline {
        Pipeline {
            decoder: Decoder::new(
                config.limits.max_event_bytes,
                config.limits.ranges.clone(),
                live.then_some(config.limits.max_future),
            ),
            detector: Detector::new(DetectorParams {
                window: config.detector.window,
                threshold: config.detector.threshold,
                min_baseline: config.detector.min_baseline,
                idle_timeout: config.detector.idle_timeout,
                max_keys: config.detector.max_keys,
            }),
            windows: WindowAggregator::new(WindowParams {
                size: config.windows.size,
                delay: config.windows.watermark_delay,
                max_open_groups: config.windows.max_open_groups,
            }),
            raw: config.output.raw,
            max_event_bytes: config.limits.max_event_bytes,
            nondup: Vec::with_capacity(4),
            clock: ClockWatch {
                state: live.then(|| Box::new(KernelClock::default()) as Box<dyn ClockState>),
                asked_at: None,
                synced: true,
            },
            conflict_log: LogLimiter::new(CONFLICT_LOG_PERIOD),
            out: Outputs {
                stamp: Stamp {
                    venue_id: config.venue.id.clone(),
                    gateway_id: config.venue.gateway_id.clone(),
                },
                fatigue: FatigueTracker::new(
                    config.fatigue.baseline_windows,
                    config.fatigue.k,
                    config.fatigue.max_players,
                ),
                tables: TableId::ALL.iter().map(|&t| TableBuffer::new(t)).collect(),
                counters: PipelineCounters::default(),
                live_alerts: Vec::new(),
                live_alerts_cap: 10_000,
                downtime: Default::default(),
            },
        }
    }

    /// Applies the settings a config reload (SIGHUP) changes while running:
    /// the detector threshold and the per-metric ranges (see [`crate::config::reload`]).
    pub fn apply_reload(&mut self, r: &crate::config::reload::Reloadable) {
        self.detector.set_threshold(r.threshold);
        self.decoder.set_ranges(r.ranges.clone());
    }

    /// Replaces where a live pipeline learns whether the clock is
    /// synchronised (the kernel by default); no effect in `replay`.
    pub fn with_clock_state(mut self, state: impl ClockState + 'static) -> Pipeline {
        if self.clock.state.is_some() {
            self.clock.state = Some(Box::new(state));
        }
        self
    }

    /// Counters so far.
    pub fn counters(&self) -> &PipelineCounters {
        &self.out.counters
    }

    /// The detector (for state figures).
    pub fn detector(&self) -> &Detector {
        &self.detector
    }

    /// The window aggregator (for watermarks and open cells).
    pub fn windows(&self) -> &WindowAggregator {
        &self.windows
    }

    /// Row stamp (venue and gateway).
    pub fn stamp(&self) -> &Stamp {
        &self.out.stamp
    }

    fn table(&mut self, t: TableId) -> &mut TableBuffer {
        &mut self.out.tables[t.index()]
    }

    /// Processes one input at wall-clock time `clock`.
    pub fn process(&mut self, input: &RawInput, clock: Micros) {
        self.watch_clock(clock);
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

    fn decode_bytes(&mut self, payload: &[u8], hint: Option<SensorKind>, clock: Micros) -> Decoded {
        self.watch_clock(clock);
        let unknown = &mut self.out.counters.unknown_fields;
        self.decoder
            .decode_bytes_with(payload, hint, clock, &mut |k, dev, name| {
                note_unknown(unknown, k, dev, name)
            })
    }

    /// Asks whether the clock is synchronised (at most once per
    /// [`CLOCK_POLL`]); while it is not, event times are not judged against it.
    fn watch_clock(&mut self, clock: Micros) {
        let Some(synced) = self.clock.poll(clock) else {
            return;
        };
        self.decoder.set_clock_trusted(synced);
        self.out.counters.clock_unsynchronized = !synced;
        if synced {
            info!("The system clock is synchronised: event times are checked against limits.max_future again.");
        } else {
            warn!(
                clock = %format_rfc3339(clock),
                "The kernel reports the system clock unsynchronised (no NTP answer yet, no RTC?): \
                 event times are not checked against limits.max_future until it is; \
                 counted in pitchside_clock_unsynced_events_total."
            );
        }
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

    fn apply(
        &mut self,
        d: Decoded,
        source: &str,
        payload: &[u8],
        received_at: Micros,
        clock: Micros,
        line: Option<u64>,
    ) {
        match d {
            Decoded::Skip => {}
            Decoded::Reject(mut r) => {
                self.out.counters.input_rows += 1;
                if let Some(n) = line {
                    r.detail = format!("line {n}: {}", r.detail);
                }
                self.record_reject(source, r.reason, &r.detail, payload, received_at);
            }
            Decoded::Event(e) => {
                self.out.counters.input_rows += 1;
                if !self.clock.synced {
                    self.out.counters.clock_unsynced_events += 1;
                }
                self.accept(&e, received_at, clock);
            }
        }
    }

    /// Records an input that a source rejected itself (an overlong line).
    pub fn reject_input(
        &mut self,
        source: &str,
        reason: RejectReason,
        detail: &str,
        payload: &[u8],
        at: Micros,
    ) {
        self.out.counters.input_rows += 1;
        self.record_reject(source, reason, detail, payload, at);
    }

    fn record_reject(
        &mut self,
        source: &str,
        reason: RejectReason,
        detail: &str,
        payload: &[u8],
        at: Micros,
    ) {
        self.out.counters.rejected[reason as usize] += 1;
        let max = self.max_event_bytes;
        let stamp = self.out.stamp.clone();
        stamp.reject(
            self.table(TableId::Rejects),
            source,
            reason,
            detail,
            payload,
            max,
            at,
        );
    }

    fn accept(&mut self, e: &Event, received_at: Micros, clock: Micros) {
        self.out.counters.accepted += 1;
        self.detector.advance(e.event_time);
        let late = self.windows.lateness(e.sensor, e.event_time);
        let mut nondup = std::mem::take(&mut self.nondup);
        nondup.clear();
        for &(i, x) in &e.values {
            let metric = e.metric_name(i);
            match self
                .detector
                .observe(e.sensor, &e.device_id, metric, e.event_time, x)
            {
                Observation::Duplicate { stored } => {
                    self.out.counters.duplicate_rows += 1;
                    // Not `to_bits`: 0.0 and -0.0 are the same reading.
                    if stored != x {
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
                    continue;
                }
                Observation::Normal => {}
                Observation::Alert { z_score, baseline } => {
                    let record = AlertRecord {
                        alert_id: alert_id(
                            &self.out.stamp.venue_id,
                            e.sensor,
                            &e.device_id,
                            metric,
                            e.event_time,
                        ),
                        sensor: e.sensor,
                        device_id: e.device_id.clone(),
                        metric: metric.to_string(),
                        value: x,
                        z_score,
                        baseline,
                        match_id: e.match_id,
                        event_time: e.event_time,
                        detected_at: clock,
                    };
                    self.out
                        .stamp
                        .alert(&mut self.out.tables[TableId::Alerts.index()], &record);
                    self.out.counters.alerts += 1;
                    self.out.push_live(LiveAlert::ZScore(record));
                }
            }
            nondup.push((i, x));
        }
        self.out.counters.readings += nondup.len() as u64;
        for &(i, x) in &nondup {
            let metric = e.metric_name(i);
            if self.raw {
                self.out.stamp.reading(
                    &mut self.out.tables[TableId::Raw.index()],
                    e,
                    metric,
                    x,
                    received_at,
                    None,
                );
            }
            if let Some(wm) = late {
                self.out.counters.late_rows += 1;
                self.out.stamp.reading(
                    &mut self.out.tables[TableId::Late.index()],
                    e,
                    metric,
                    x,
                    received_at,
                    Some(wm),
                );
            }
        }
        if late.is_none()
            && !nondup.is_empty()
            && self.windows.add(e, &nondup) == Placement::Dropped
        {
            self.out.counters.window_drops += 1;
        }
        self.nondup = nondup;
        self.out.counters.evictions = self.detector.counters().evictions;
        let out = &mut self.out;
        self.windows
            .advance(e.sensor, e.event_time, &mut |w| out.window(w));
    }

    /// Alerts raised since the last call (bounded; the tables have them all).
    pub fn drain_alerts(&mut self) -> Vec<LiveAlert> {
        std::mem::take(&mut self.out.live_alerts)
    }

    /// Turns off the real-time alert list (replay and benchmarks need only tables).
    pub fn disable_live_alerts(&mut self) {
        self.out.live_alerts_cap = 0;
    }

    /// Emits every open window (end of a replay).
    pub fn flush_windows(&mut self) {
        let out = &mut self.out;
        self.windows.flush_all(&mut |w| out.window(w));
    }

    /// Forgets idle detector keys now (periodic housekeeping, so that
    /// `state_keys` counts live keys only).
    pub fn expire_idle(&mut self) {
        self.detector.expire_idle();
    }

    /// Appends a progress row.
    pub fn push_progress(&mut self, row: &crate::tables::ProgressRow) {
        let stamp = self.out.stamp.clone();
        row.write(&stamp, self.table(TableId::Progress));
    }

    /// The state to checkpoint (detector, windows, fatigue, downtime) as a
    /// body for [`crate::util::codec::Dec`], with the first journal
    /// generation whose inputs it does not include.
    pub fn snapshot(&self, journal_generation: u64) -> Vec<u8> {
        let mut e = crate::util::codec::Enc::default();
        e.u64(journal_generation);
        self.detector.save(&mut e);
        self.windows.save(&mut e);
        self.out.fatigue.save(&mut e);
        self.out.downtime.save(&mut e);
        e.0
    }

    /// Restores a checkpoint's body into this fresh pipeline; returns the
    /// journal generation to replay from.
    pub fn restore(&mut self, body: &[u8]) -> Result<u64, crate::util::codec::DecodeError> {
        let mut d = crate::util::codec::Dec::new(body);
        let journal_generation = d.u64()?;
        self.detector.load(&mut d)?;
        self.windows.load(&mut d)?;
        self.out.fatigue.load(&mut d)?;
        // Checkpoints of older builds end here.
        if !d.finished() {
            self.out.downtime.load(&mut d)?;
        }
        if !d.finished() {
            return Err(crate::util::codec::DecodeError("trailing bytes"));
        }
        Ok(journal_generation)
    }

    /// Records that the gateway was not running from `from` to `to` (wall
    /// clock, µs): windows overlapping it get `gateway_downtime_ms`.
    pub fn add_downtime(&mut self, from: Micros, to: Micros) {
        self.out.downtime.add(from, to);
    }

    /// Takes the tables holding at least `min_rows` rows (1 = every non-empty table).
    pub fn take_tables(&mut self, min_rows: usize) -> Vec<TableBuffer> {
        let min_rows = min_rows.max(1);
        self.out
            .tables
            .iter_mut()
            .filter(|t| t.rows >= min_rows)
            .map(|t| t.take())
            .collect()
    }

    /// Rows waiting in the largest table.
    pub fn max_buffered_rows(&self) -> usize {
        self.out.tables.iter().map(|t| t.rows).max().unwrap_or(0)
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

impl Outputs {
    fn push_live(&mut self, a: LiveAlert) {
        if self.live_alerts.len() < self.live_alerts_cap {
            self.live_alerts.push(a);
        }
    }

    /// Writes an emitted window row, and a fatigue alert if it is one.
    fn window(&mut self, w: WindowRow) {
        self.counters.windows_emitted += 1;
        let t = TableId::windows(w.kind);
        let downtime_ms = self.downtime.overlap_ms(w.start, w.end);
        self.stamp
            .window(&mut self.tables[t.index()], &w, downtime_ms);
        if let (
            SensorKind::Wearable,
            GroupKey::Wearable {
                match_id,
                player_id,
            },
        ) = (w.kind, &w.key)
        {
            let hr = w.cell.aggs[0].mean();
            if let Some(finding) = self.fatigue.on_window(*match_id, *player_id, w.start, hr) {
                let record = FatigueRecord {
                    alert_id: fatigue_alert_id(
                        &self.stamp.venue_id,
                        *match_id,
                        *player_id,
                        w.start,
                    ),
                    match_id: *match_id,
                    player_id: *player_id,
                    player_name: w.cell.player_name.as_deref().map(String::from),
                    window_start: w.start,
                    window_end: w.end,
                    // on_window only finds fatigue when the mean exists.
                    heart_rate_mean: hr.unwrap_or_default(),
                    finding,
                };
                self.stamp
                    .fatigue(&mut self.tables[TableId::FatigueAlerts.index()], &record);
                self.counters.fatigue_alerts += 1;
                self.push_live(LiveAlert::Fatigue(record));
            }
        }
    }
}

#[cfg(test)]
mod tests;
