//! pitchside-gateway: everything around the pure pipeline of
//! `pitchside-core` that a running gateway needs: its state files, its
//! sources, its sinks and uploads, its telemetry and venue console, and the
//! daemon's two loops (the pipeline task and the encoder).
//!
//! ```text
//!  sources (simulator, replay file, serial, MQTT)
//!     │  RawInput, bounded channel (pipeline.input_queue)
//!     ▼
//!  state::journal (append, group fsync, then MQTT ack)
//!     ▼
//!  daemon::task ── pipeline (pitchside-core) ── decode ─► detect ─► window ─► fatigue
//!     │  Batch of table rows + checkpoints, bounded channel (pipeline.encode_queue)
//!     ▼
//!  daemon::encoder ─► sinks: Parquet ─► spool (tmp + fsync + rename) ─► state::checkpoint ─► uploader ─► object store
//! ```
//!
//! | module | what |
//! |---|---|
//! | [`daemon`] | the pipeline task and the encoder loop of `run`, and the batches between them |
//! | [`console`] | the venue console: HTTP server, token, TLS, SSE fan-out, the state doc, the embedded page |
//! | [`telemetry`] | progress rows, Prometheus and `/healthz`, systemd |
//! | [`sinks`] | Parquet, spool, uploader, store, MQTT alerts out |
//! | [`sources`] | framing, serial, simulator, MQTT in |
//! | [`state`] | checkpoint, journal, downtime from their files |
//! | [`mqtt`] | broker settings and TLS, shared by MQTT in and out |
//!
//! A module imports only from the rows below its own (`tests/house.rs`
//! checks it inside this crate) and from `pitchside-core`, whose modules are
//! re-exported here under their own names so that paths read the same in
//! both crates.
//!
//! `unsafe` is denied, not forbidden, for one measured need: setting the C
//! allocator's thresholds (`mallopt`) in [`sinks::heap`], whose
//! `set_thresholds` is the only function of this crate allowed it.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub use pitchside_core::{config, model, pipeline, tables, util};

pub mod console;
pub mod daemon;
pub mod mqtt;
pub mod sinks;
pub mod sources;
pub mod state;
pub mod telemetry;
