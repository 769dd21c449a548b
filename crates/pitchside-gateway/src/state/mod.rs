//! What survives a restart: the checkpoint of the pipeline's state, the
//! input journal, and the downtime read from their files. File I/O over the
//! pure encodings of [`crate::util::codec`], framed by [`frame`] (one header
//! shape and one CRC-32 for both files).

pub mod checkpoint;
pub mod downtime;
pub mod frame;
pub mod journal;
pub mod stats;

pub use stats::StateStats;
