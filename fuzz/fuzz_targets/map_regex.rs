//! Any bytes as a sound-level meter's line read by a pattern (SPEC §9,
//! `fuzz/maps/regex.toml`): an optional capture and a local time with a
//! fixed UTC offset.
#![no_main]

#[macro_use]
mod common;

map_target!(common::REGEX, "regex");
