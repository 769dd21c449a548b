//! Integration tests, one binary: the gateway running: serial ports (pseudo-terminals), signals, crashes and restarts, the console, device health, status, systemd.
//! Each file is a module (`cargo test --test live FILE::`); the
//! helpers are `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod alerts_follow;
mod console;
mod crash;
mod devices_live;
mod downtime;
mod health;
mod journal;
mod notify;
mod ops;
mod run;
mod serial;
mod signals;
mod status_watch;
mod systemd;
