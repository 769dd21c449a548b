//! Everything after the pipeline: Parquet encoding, the spool, the uploader,
//! and the real-time alert output over MQTT.

pub mod alerts;
pub mod heap;
pub mod parquet;
pub mod spool;
pub mod stats;
pub mod store;
pub mod upload;
pub mod writer;

pub use stats::UploadStats;
