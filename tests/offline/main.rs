//! Integration tests, one binary: what the binary writes, offline: the contract, golden replays, replay, device formats, check-config, checkpoints, and the house rules of the sources.
//! Each file is a module (`cargo test --test offline FILE::`); the
//! helpers are `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod check_config;
mod checkpoint;
mod ci_cache;
mod contract;
mod devices;
mod formats_props;
mod golden;
mod house;
mod load;
mod replay;
mod row_groups;
