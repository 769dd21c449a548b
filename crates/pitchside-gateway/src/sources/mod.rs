//! Sources: where input lines and messages come from.

pub mod framing;
pub mod handover;
pub mod mqtt;
pub mod serial;
pub mod sim_output;
pub mod sim_profiles;
pub mod simulator;
pub mod stats;

pub use stats::SourceStats;
