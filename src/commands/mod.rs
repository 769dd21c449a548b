//! The subcommands: `run` (the daemon), `replay`, `simulate`, `check-config`,
//! `service-dropin`, `status`, `alerts`, `bench` and `bench-mqtt`, each with its
//! command-line options; and what they share: the start-up checks of `run`
//! and `check-config`, logging, shutdown on signals, printing.
//! The top layer: everything else is wired together here.

pub mod alerts;
pub mod bench;
pub mod check_config;
pub mod logging;
pub mod preflight;
pub mod replay;
pub mod run;
pub mod service_dropin;
pub mod shutdown;
pub mod simulate;
pub mod status;
pub mod tap;
pub mod terminal;
