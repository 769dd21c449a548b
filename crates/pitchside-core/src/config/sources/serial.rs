//! `[[sources.serial]]`: one serial port, one input per line.

use super::input::InputSection;
use crate::config::error::Problems;
use crate::config::schema::keys::{Setting, Ty};
use serde::{Deserialize, Serialize};

crate::config::section! {
    /// `[[sources.serial]]`: one serial port, one input per line. Unknown keys
    /// are found by the schema walker (serde's `deny_unknown_fields` does not
    /// work with the flattened input keys).
    pub struct SerialSection {
        /// Device path, e.g. `/dev/ttyUSB0` or `/dev/serial/by-id/…`.
        path: String,
        /// Baud rate.
        baud: u32 = 115_200,
        /// Data bits: 5, 6, 7 or 8.
        data_bits: u8 = 8,
        /// `none`, `odd` or `even`.
        parity: Parity = Parity::None,
        /// 1 or 2.
        stop_bits: u8 = 1,
        /// Sensor kind of lines without a `sensor` field.
        #[serde(skip_serializing_if = "Option::is_none")]
        sensor: Option<String> = None,
        /// Longest line in bytes (unset: `limits.max_event_bytes`); longer lines
        /// are rejected as `too_large` and the reader skips to the next newline.
        #[serde(skip_serializing_if = "Option::is_none")]
        max_line_bytes: Option<u32> = None,
        /// Lines held while the pipeline queue is full; past it new lines are
        /// dropped, counted in `pitchside_serial_dropped_lines_total`.
        max_held: u32 = 1024,
        /// Name, device format and map (SPEC §9).
        #[serde(flatten)]
        input: InputSection [Flatten(InputSection::KEYS)] = InputSection::default(),
    }
}

/// `parity` of a serial port: its names are checked by the schema walker,
/// so a parsed file holds one of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Parity {
    /// No parity bit.
    None,
    /// Odd parity.
    Odd,
    /// Even parity.
    Even,
}

impl Setting for Parity {
    const TY: Ty = Ty::Choice(&["none", "odd", "even"], "none, odd or even");
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
