//! Integration tests, one binary: against real services on loopback: mosquitto, and the S3 and Azure emulators.
//! Each file is a module (`cargo test --test services FILE::`); the
//! helpers are `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod hostile_store;
mod mqtt;
mod mqtt_oversized;
mod store;
