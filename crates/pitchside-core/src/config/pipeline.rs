//! `[pipeline]`: queue capacities between the stages.

use super::error::Problems;

crate::config::section! {
    /// `[pipeline]`.
    #[serde(deny_unknown_fields)]
    pub struct PipelineSection {
        /// Inputs queued between the sources and the pipeline. When full,
        /// sources wait (serial, simulator) — see docs/src/sources.md for MQTT.
        input_queue: u32 = 8192,
        /// Finished table batches queued for the Parquet encoder.
        encode_queue: u32 = 4,
    }
}

/// `[pipeline]`, checked.
#[derive(Debug, Clone)]
pub struct PipelineConfig {
    /// Input queue capacity.
    pub input_queue: usize,
    /// Encoder queue capacity.
    pub encode_queue: usize,
}

impl PipelineSection {
    /// Checks both capacities.
    pub fn validate(&self) -> Result<PipelineConfig, Vec<String>> {
        let mut p = Problems::default();
        p.check(self.input_queue >= 1 && self.encode_queue >= 1, || {
            "pipeline.input_queue, pipeline.encode_queue: must be at least 1".to_string()
        });
        p.finish(PipelineConfig {
            input_queue: self.input_queue as usize,
            encode_queue: self.encode_queue as usize,
        })
    }
}
