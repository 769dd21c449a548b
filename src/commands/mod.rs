//! The subcommands: `run` (the daemon), `replay`, `status`, `bench` and
//! `bench-mqtt`, and the start-up checks `run` and `check-config` share.
//! The top layer: everything else is wired together here.

pub mod bench;
pub mod preflight;
pub mod replay;
pub mod run;
pub mod status;
