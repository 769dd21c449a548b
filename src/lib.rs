//! pitchside: an edge gateway for sports venues.
pub mod config;
pub mod decode;
pub mod detect;
pub mod model;
pub mod timefmt;
