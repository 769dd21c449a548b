//! pitchside: an edge gateway for sports venues.
//!
//! The code is three crates, each a layer that imports only from the ones
//! below it (Cargo refuses the other way; docs/src/architecture.md):
//!
//! | crate | what |
//! |---|---|
//! | `pitchside` (this one) | the command line: `run` (wiring, signals, reload), `replay`, `simulate`, `tap`, `check-config`, `service-dropin`, `status`, `alerts`, `bench`; each command's options live beside it, `main.rs` only dispatches |
//! | `pitchside-gateway` | state files, sources, sinks and uploads, telemetry, the venue console, MQTT, the daemon's pipeline task and encoder loop |
//! | `pitchside-core` | plain data, configuration, table schemas, and the pure pipeline (decode, detect, windows, fatigue, device health) |
//!
//! Their modules are re-exported here under their own names, so a path
//! such as `pitchside::pipeline::Pipeline` names the same item wherever it
//! lives.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub use pitchside_core::{config, model, pipeline, tables, util};
pub use pitchside_gateway::{console, daemon, mqtt, sinks, sources, state, telemetry};

pub mod commands;
