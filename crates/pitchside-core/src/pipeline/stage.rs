//! The pipeline stage: decode → detect → windows → fatigue and player load →
//! table rows.
//!
//! One [`Pipeline`] owns all state of the data path. It is synchronous and
//! takes the wall clock as an argument, so `replay`, the daemon, tests and
//! the benchmark all drive the same code.
//!
//! Here: the state and its construction and reload. `process`: one input
//! through decode, detect and windows. `outputs`: table rows and live
//! alerts. `clock`: whether the wall clock may judge event times, and the
//! trusted time ([`crate::pipeline::time_guard`]) while it may not.
//! `health`: device health (silent and back).
//! `snapshot`: the checkpoint.

mod clock;
mod health;
mod outputs;
mod process;
mod snapshot;

use crate::config::Config;
use crate::model::{Micros, RejectReason};
use crate::pipeline::console_rows::DeviceEventRecord;
use crate::pipeline::decode::unknown::UnknownFields;
use crate::pipeline::decode::Decoder;
use crate::pipeline::detect::Detector;
use crate::pipeline::fatigue::FatigueTracker;
use crate::pipeline::health::DeviceHealth;
use crate::pipeline::load::{LoadCounters, LoadTracker};
use crate::pipeline::load_rows::LoadAlertRecord;
use crate::pipeline::rows::{AlertRecord, FatigueRecord};
use crate::pipeline::time_guard::TimeGuard;
use crate::pipeline::window::WindowAggregator;
use crate::tables::{Stamp, TableBuffer, TableId};
use crate::util::log_limit::LogLimiter;
pub use clock::{clock_input, clock_record, ClockChange, CLOCK_SOURCE};

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
    pub rejected: [u64; RejectReason::ALL.len()],
    /// Late readings.
    pub late_rows: u64,
    /// Duplicate readings.
    pub duplicate_rows: u64,
    /// z-score alerts.
    pub alerts: u64,
    /// Fatigue alerts.
    pub fatigue_alerts: u64,
    /// `[[load.rules]]` alerts.
    pub load_alerts: u64,
    /// Key evictions in the detector.
    pub evictions: u64,
    /// Events not windowed because `windows.max_open_groups` was reached.
    pub window_drops: u64,
    /// Windows emitted.
    pub windows_emitted: u64,
    /// Duplicate readings whose value differs from the reading kept (also
    /// counted in `duplicate_rows`).
    pub duplicate_conflicts: u64,
    /// Events accepted while the kernel reported the clock unsynchronised
    /// (judged against the trusted time instead of the clock).
    pub clock_unsynced_events: u64,
    /// Events rejected (`implausible_time`) while the clock was
    /// unsynchronised: more than `limits.max_future` ahead of the trusted
    /// time, which no two devices agreed on.
    pub clock_unvouched_events: u64,
    /// The clock is unsynchronised now (a state, not a counter; live only).
    pub clock_unsynchronized: bool,
    /// `silent` device events.
    pub device_events_silent: u64,
    /// `back` device events.
    pub device_events_back: u64,
    /// Devices forgotten at `health.max_devices`.
    pub device_evictions: u64,
    /// Devices tracked now (a state).
    pub devices: u64,
    /// Devices silent now (a state).
    pub devices_silent: u64,
    /// Device health is paused now (a state).
    pub health_paused: bool,
    /// Player load (SPEC §11): evictions, players off the roster, speed glitches.
    pub load: LoadCounters,
    /// Players with load state now (a state).
    pub load_players: u64,
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
    /// `limits.max_future` on live pipelines; `None` in `replay`.
    max_future: Option<Micros>,
    /// Whether the clock is synchronised (as the run task last said).
    synced: bool,
    guard: TimeGuard,
    conflict_log: LogLimiter,
    health: DeviceHealth,
    out: Outputs,
}

/// What the pipeline produces: table rows, counters, real-time alerts. Kept
/// apart from the window aggregator so that emitted windows are written as
/// they are handed out, never collected.
struct Outputs {
    stamp: Stamp,
    fatigue: FatigueTracker,
    load: LoadTracker,
    tables: Vec<TableBuffer>,
    counters: PipelineCounters,
    /// Alerts raised since the last [`Pipeline::drain_alerts`], for real-time outputs.
    live_alerts: Vec<LiveAlert>,
    live_alerts_cap: usize,
    /// The last alert's id (z-score or fatigue), kept so that its buffer
    /// serves the next.
    alert_id: String,
    /// When the gateway was not running (marks windows; none in `replay`).
    downtime: crate::pipeline::downtime::Downtime,
    /// Acks written, so that a repeated one writes no second row.
    acks: crate::pipeline::console_rows::AckLedger,
}

/// An alert for real-time outputs (log line, MQTT, console).
#[derive(Debug, Clone, PartialEq)]
pub enum LiveAlert {
    /// A z-score alert.
    ZScore(AlertRecord),
    /// A fatigue alert.
    Fatigue(FatigueRecord),
    /// A `[[load.rules]]` alert (SPEC §11).
    Load(LoadAlertRecord),
    /// A device went silent or came back (SPEC §10).
    Device(DeviceEventRecord),
}

impl Pipeline {
    /// A pipeline for `config`. `live` turns on the wall-clock plausibility
    /// check of event times (off in `replay`); a live pipeline takes the
    /// clock as synchronised until [`Pipeline::set_clock_synchronized`].
    pub fn new(config: &Config, live: bool) -> Pipeline {
        Pipeline {
            decoder: Decoder::new(
                config.limits.max_event_bytes,
                config.limits.ranges.clone(),
                live.then_some(config.limits.max_future),
            )
            .with_formats(config.inputs.formats()),
            detector: Detector::new(config.detector),
            windows: WindowAggregator::new(config.windows),
            raw: config.output.raw,
            max_event_bytes: config.limits.max_event_bytes,
            nondup: Vec::with_capacity(4),
            max_future: live.then_some(config.limits.max_future),
            synced: true,
            guard: TimeGuard::default(),
            conflict_log: LogLimiter::new(CONFLICT_LOG_PERIOD),
            health: DeviceHealth::new(config.health),
            out: Outputs {
                stamp: Stamp {
                    venue_id: config.venue.id.clone(),
                    gateway_id: config.venue.gateway_id.clone(),
                    clock_synchronized: live.then_some(true),
                },
                fatigue: FatigueTracker::new(config.fatigue),
                load: LoadTracker::new(config.load.clone()),
                tables: TableId::ALL.iter().map(|&t| TableBuffer::new(t)).collect(),
                counters: PipelineCounters::default(),
                live_alerts: Vec::new(),
                live_alerts_cap: 10_000,
                alert_id: String::new(),
                downtime: Default::default(),
                acks: Default::default(),
            },
        }
    }

    /// Applies the settings a config reload (SIGHUP) changes while running:
    /// the detector threshold, the per-metric ranges and `[load]` with its
    /// roster (see [`crate::config::reload`]).
    pub fn apply_reload(&mut self, r: &crate::config::reload::Reloadable) {
        self.detector.reload(&r.detector);
        self.decoder.set_ranges(r.limits.ranges.clone());
        self.out.load.reload(r.load.clone());
        self.out.counters.load = self.out.load.counters();
        self.out.counters.load_players = self.out.load.players() as u64;
    }

    /// Counters so far.
    pub fn counters(&self) -> &PipelineCounters {
        &self.out.counters
    }

    /// The detector (for state figures).
    pub fn detector(&self) -> &Detector {
        &self.detector
    }

    /// Each player's load now (the console).
    pub fn load_statuses(&self) -> Vec<crate::pipeline::load::PlayerLoadStatus> {
        self.out.load.statuses()
    }

    /// The window aggregator (for watermarks and open cells).
    pub fn windows(&self) -> &WindowAggregator {
        &self.windows
    }

    /// Row stamp (venue and gateway).
    pub fn stamp(&self) -> &Stamp {
        &self.out.stamp
    }

    /// Forgets idle detector keys now (periodic housekeeping, so that
    /// `state_keys` counts live keys only).
    pub fn expire_idle(&mut self) {
        self.detector.expire_idle();
    }
}

#[cfg(test)]
mod tests;
