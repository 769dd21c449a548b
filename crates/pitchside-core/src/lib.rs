//! pitchside-core: the gateway's plain data, its configuration and the pure
//! pipeline. Nothing here opens a socket, a port or a file of the gateway's
//! state; `pitchside-gateway` does that around it.
//!
//! | module | what |
//! |---|---|
//! | [`pipeline`] | pure: decode, detect, window, fatigue, player load, device health, the stage, table rows |
//! | [`config`] | TOML → typed config, reload plans, boards |
//! | [`tables`] | schemas, row buffers, the progress row |
//! | [`util`], [`model`] | time and units, hashing, codec, RNG, backoff, clock; plain data |
//!
//! A module imports only from the rows below its own (`tests/house.rs`
//! checks it inside this crate; Cargo keeps the crates above out).
//!
//! `unsafe` is denied, not forbidden, for one measured need: asking the
//! kernel whether the clock is synchronised (`adjtimex`, which neither `nix`
//! nor `rustix` wraps) in [`util::clock::kernel_clock_synchronized`], the
//! only function of this crate allowed it.

#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod model;
pub mod pipeline;
pub mod tables;
pub mod util;
