//! Sources: where input lines and messages come from.

pub mod framing;
pub mod simulator;
