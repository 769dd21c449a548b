//! Integration tests, one binary: what the binary writes, offline: the contract, golden replays, replay, device formats, check-config, checkpoints, and the house rules of the sources.
//! Each file is a module (`cargo test --test offline FILE::`); the
//! helpers are `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod contract;
mod golden;
mod house;
mod replay;
mod row_groups;
mod formats_props;
mod check_config;
mod devices;
mod checkpoint;
mod ci_cache;
