//! Any bytes as a hub's logfmt through a generic map with two metrics
//! (SPEC §9, `fuzz/maps/generic.toml`): several events from one input.
#![no_main]

#[macro_use]
mod common;

map_target!(common::GENERIC, "generic");
