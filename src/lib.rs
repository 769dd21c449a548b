//! pitchside: an edge gateway for sports venues.
//!
//! ```text
//!  sources (simulator, replay file, serial, MQTT)
//!     │  RawInput, bounded channel (pipeline.input_queue)
//!     ▼
//!  state::journal (append, group fsync, then MQTT ack)
//!     ▼
//!  pipeline ── decode ─► detect (z-score per key) ─► window (+watermarks) ─► fatigue
//!     │  TableBuffer batches + checkpoints, bounded channel (pipeline.encode_queue)
//!     ▼
//!  sinks: encoder ─► Parquet ─► spool (tmp + fsync + rename) ─► state::checkpoint ─► uploader ─► object store
//! ```
//!
//! The folders are layers; a module imports only from layers below its own
//! (`docs/src/architecture.md` draws the same picture, and `tests/house.rs`
//! checks it):
//!
//! | layer | what |
//! |---|---|
//! | [`commands`] | `run` (wiring, signals, reload), `replay`, `simulate`, `check-config`, `service-dropin`, `status`, `bench`; each command's options live beside it, `main.rs` only dispatches |
//! | [`console`] | the venue console: HTTP server, token, TLS, SSE fan-out, the state doc, the embedded page |
//! | [`telemetry`] | progress rows, Prometheus and `/healthz`, systemd |
//! | [`sinks`] | encoder, Parquet, spool, uploader, store, MQTT alerts out |
//! | [`sources`] | framing, serial, simulator, MQTT in |
//! | [`state`] | checkpoint, journal, downtime from their files |
//! | [`pipeline`] | pure: decode, detect, window, fatigue, device health, the stage, table rows |
//! | [`tables`] | schemas, row buffers, the progress row |
//! | [`mqtt`] | broker settings and TLS, shared by MQTT in and out |
//! | [`config`] | TOML → typed config, reload plans, boards |
//! | [`util`], [`model`] | time and units, hashing, codec, RNG, backoff, clock; plain data |
//!
//! `unsafe` is denied, not forbidden, for two measured needs, each in the one
//! function allowed it: asking the kernel whether the clock is synchronised
//! (`adjtimex`, which neither `nix` nor `rustix` wraps) in
//! [`util::clock::kernel_clock_synchronized`], and setting glibc's allocator
//! thresholds (`mallopt`) once, at the first `raw` row group, in
//! `sinks::heap::set_thresholds` (called through
//! [`sinks::heap::keep_freed_memory`]).

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod commands;
pub mod config;
pub mod console;
pub mod model;
pub mod mqtt;
pub mod pipeline;
pub mod sinks;
pub mod sources;
pub mod state;
pub mod tables;
pub mod telemetry;
pub mod util;
