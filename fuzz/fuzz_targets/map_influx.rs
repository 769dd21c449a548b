//! Any bytes as a crowd counter's line protocol (SPEC §9,
//! `fuzz/maps/influx.toml`): tags, fields, a nanosecond timestamp, scale and
//! offset.
#![no_main]

#[macro_use]
mod common;

map_target!(common::INFLUX, "influx_scaled");
