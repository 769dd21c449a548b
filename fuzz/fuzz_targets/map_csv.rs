//! Any bytes as a ball tracker's CSV with a header line (SPEC §9,
//! `fuzz/maps/csv.toml`): the first line that names every mapped column is
//! the header; the decoder keeps it from input to input, so the fuzzer can
//! teach it new ones.
#![no_main]

#[macro_use]
mod common;

map_target!(common::CSV, "csv");
