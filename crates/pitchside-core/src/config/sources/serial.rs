//! `[[sources.serial]]`: one serial port, one input per line.

use super::input::{InputSection, INPUT_KEYS};
use crate::config::error::Problems;
use crate::config::schema::keys::{join, k, req, Key, Ty, U32, U8};
use serde::{Deserialize, Serialize};

/// `[[sources.serial]]`: one serial port, one input per line. Unknown keys
/// are found by the schema walker (serde's `deny_unknown_fields` does not
/// work with the flattened input keys).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SerialSection {
    /// Device path, e.g. `/dev/ttyUSB0` or `/dev/serial/by-id/…` (required).
    pub path: String,
    /// Baud rate (default 115200).
    #[serde(default = "default_baud")]
    pub baud: u32,
    /// Data bits: 5, 6, 7 or 8 (default 8).
    #[serde(default = "default_data_bits")]
    pub data_bits: u8,
    /// `none` (default), `odd` or `even`.
    #[serde(default = "default_parity")]
    pub parity: String,
    /// 1 (default) or 2.
    #[serde(default = "default_stop_bits")]
    pub stop_bits: u8,
    /// Sensor kind of lines without a `sensor` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
    /// Longest line in bytes (default `limits.max_event_bytes`); longer lines
    /// are rejected as `too_large` and the reader skips to the next newline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_line_bytes: Option<u32>,
    /// Lines held while the pipeline queue is full (default 1024); past it
    /// new lines are dropped and counted.
    #[serde(default = "default_max_held")]
    pub max_held: u32,
    /// Name, device format and map (SPEC §9).
    #[serde(flatten)]
    pub input: InputSection,
}

impl SerialSection {
    /// The source's name: `name`, else `serial:{path}`.
    pub fn name(&self) -> String {
        self.input
            .name
            .clone()
            .unwrap_or_else(|| format!("serial:{}", self.path))
    }
}

fn default_baud() -> u32 {
    115_200
}
fn default_data_bits() -> u8 {
    8
}
fn default_parity() -> String {
    "none".into()
}
fn default_stop_bits() -> u8 {
    1
}
fn default_max_held() -> u32 {
    1024
}

/// The keys of one `[[sources.serial]]`.
pub(super) const KEYS: &[Key] = &join::<15>(OWN_KEYS, INPUT_KEYS);

const OWN_KEYS: &[Key] = &[
    req("path", Ty::Text),
    k("baud", U32),
    k("data_bits", U8),
    k("parity", Ty::Text),
    k("stop_bits", U8),
    k("sensor", Ty::Text),
    k("max_line_bytes", U32),
    k("max_held", U32),
];

impl SerialSection {
    /// Checks one port (`key` is `sources.serial[i]`); `before` are the
    /// ports listed above it, which must name other devices.
    pub(super) fn check(&self, key: &str, before: &[SerialSection], p: &mut Problems) {
        let s = self;
        p.check(!s.path.is_empty(), || {
            format!("{key}.path: must name a device")
        });
        p.check(before.iter().all(|o| o.path != s.path), || {
            format!("{key}.path: {:?} is configured twice", s.path)
        });
        p.check((50..=4_000_000).contains(&s.baud), || {
            format!("{key}.baud: {} must be 50-4000000", s.baud)
        });
        p.check((5..=8).contains(&s.data_bits), || {
            format!("{key}.data_bits: {} must be 5-8", s.data_bits)
        });
        p.check(matches!(s.parity.as_str(), "none" | "odd" | "even"), || {
            format!("{key}.parity: {:?} must be none, odd or even", s.parity)
        });
        p.check(matches!(s.stop_bits, 1 | 2), || {
            format!("{key}.stop_bits: {} must be 1 or 2", s.stop_bits)
        });
        p.sensor_kind(&format!("{key}.sensor"), &s.sensor);
        if let Some(m) = s.max_line_bytes {
            p.check((64..=1 << 20).contains(&m), || {
                format!("{key}.max_line_bytes: {m} must be between 64 and 1048576")
            });
        }
        p.check(s.max_held != 0, || {
            format!("{key}.max_held: must be at least 1")
        });
    }
}
