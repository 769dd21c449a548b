//! `[pipeline]`: queue capacities between the stages.

use super::error::Problems;
use super::schema::keys::{k, Key, U32};
use serde::{Deserialize, Serialize};

/// `[pipeline]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineSection {
    /// Inputs queued between the sources and the pipeline (default 8192). When
    /// full, sources wait (serial, simulator) — see docs/src/sources.md for MQTT.
    pub input_queue: u32,
    /// Finished table batches queued for the Parquet encoder (default 4).
    pub encode_queue: u32,
}

impl Default for PipelineSection {
    fn default() -> Self {
        PipelineSection {
            input_queue: 8192,
            encode_queue: 4,
        }
    }
}

/// The keys of `[pipeline]`.
pub(super) const KEYS: &[Key] = &[k("input_queue", U32), k("encode_queue", U32)];

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
