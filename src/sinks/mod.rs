//! Everything after the pipeline: Parquet encoding, the spool, the uploader.

pub mod alerts_mqtt;
pub mod parquet;
pub mod spool;
pub mod spool_queue;
pub mod stats;
pub mod store;
pub mod upload;
pub mod writer;

pub use stats::UploadStats;
