//! Any bytes as a BLE bridge's JSON (SPEC §9, `fuzz/maps/json.toml`): nested
//! pointers, array indexes, the sensor kind from the input, the player from
//! the topic.
#![no_main]

#[macro_use]
mod common;

map_target!(common::JSON, "json");
