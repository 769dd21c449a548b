//! pitchside: an edge gateway for sports venues.
//!
//! ```text
//!  sources (simulator, replay file, serial, MQTT)
//!     │  RawInput, bounded channel (pipeline.input_queue)
//!     ▼
//!  journal (append, group fsync, then MQTT ack)
//!     ▼
//!  pipeline ── decode ─► detect (z-score per key) ─► windows (+watermarks) ─► fatigue
//!     │  TableBuffer batches + checkpoints, bounded channel (pipeline.encode_queue)
//!     ▼
//!  encoder ─► Parquet ─► spool (tmp + fsync + rename) ─► checkpoint ─► uploader ─► object store
//! ```
//!
//! Module map: [`config`] (TOML → typed config), [`model`] (plain data),
//! [`decode`] (JSON line → event or reject), [`detect`] (rolling z-score),
//! [`window`] (event-time windows), [`fatigue`], [`tables`] (schemas and row
//! buffers), [`sinks`] (Parquet, spool, store, uploader, MQTT alerts), [`telemetry`]
//! (progress rows, Prometheus), [`sources`] (framing, simulator, serial, MQTT),
//! [`pipeline`] (the data-path stage), [`pipeline_task`] (its task in
//! `run`: journal, flushes, checkpoints), [`journal`], [`checkpoint`],
//! [`downtime`] (windows the gateway was not running for part of),
//! [`app`] (wiring for `run`, signals), [`reload`] (SIGHUP), [`preflight`]
//! (start-up checks shared by `run` and `check-config`),
//! [`replay`], [`bench`], [`bench_mqtt`], [`clock`] (may the wall clock judge
//! event times?), [`log_limit`].
//!
//! `unsafe` is denied, not forbidden, for one measured need: asking the
//! kernel whether the clock is synchronised (`adjtimex`, which neither `nix`
//! nor `rustix` wraps) in [`clock::kernel_clock_synchronized`], the only
//! function allowed it.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod app;
pub mod bench;
pub mod bench_mqtt;
pub mod checkpoint;
pub mod clock;
pub mod config;
pub mod decode;
pub mod detect;
pub mod downtime;
pub mod fatigue;
pub mod journal;
pub mod log_limit;
pub mod model;
pub mod pipeline;
pub mod pipeline_task;
pub mod preflight;
pub mod reload;
pub mod replay;
pub mod sinks;
pub mod sources;
pub mod status;
pub mod tables;
pub mod telemetry;
pub mod timefmt;
pub mod window;
