//! The daemon's two loops, which `pitchside run` wires together: the
//! pipeline task (inputs → journal → pipeline → batches of table rows and
//! checkpoints) and the encoder (batches → Parquet files in the spool →
//! checkpoint), with the batches that flow between them.

pub mod alert_log;
pub mod batch;
pub mod console_commands;
pub mod encoder;
pub mod restore;
pub mod task;
