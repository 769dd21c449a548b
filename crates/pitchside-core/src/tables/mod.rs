//! The output tables (SPEC §5): their names and column types here, every
//! schema once in `schema`, and a columnar buffer that rows are appended to
//! until a flush encodes it.

mod buffer;
mod progress;
mod row_group;
mod schema;

pub use buffer::{ColumnBuf, RowWriter, TableBuffer};
pub use progress::ProgressRow;
pub use row_group::RowGroupLimit;

use crate::model::SensorKind;
use std::sync::OnceLock;

/// The identity stamped on every row.
#[derive(Debug, Clone)]
pub struct Stamp {
    /// `venue.id`.
    pub venue_id: String,
    /// `venue.gateway_id`.
    pub gateway_id: String,
    /// The `clock_synchronized` of `raw`, `late` and `alerts` rows: whether
    /// the gateway's clock was synchronised when the event was accepted
    /// (`None` in `replay`, where no clock judges).
    pub clock_synchronized: Option<bool>,
}

/// Physical column types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColType {
    /// UTF-8 string.
    Utf8,
    /// Raw bytes.
    Binary,
    /// 64-bit signed integer.
    I64,
    /// 64-bit float.
    F64,
    /// `TIMESTAMP(MICROS, UTC)`.
    Ts,
    /// Boolean.
    Bool,
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Column name.
    pub name: String,
    /// Type.
    pub ty: ColType,
    /// May hold nulls.
    pub nullable: bool,
}

/// The tables pitchside writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TableId {
    /// z-score alerts.
    Alerts,
    /// Fatigue alerts.
    FatigueAlerts,
    /// Player load rule alerts (SPEC §11).
    LoadAlerts,
    /// Acknowledgements of alerts from the console (SPEC §10).
    AlertAcks,
    /// Devices that went silent and came back (SPEC §10).
    DeviceEvents,
    /// Wearable windows.
    WindowsWearable,
    /// Pitch windows.
    WindowsPitch,
    /// Crowd windows.
    WindowsCrowd,
    /// Generic windows.
    WindowsGeneric,
    /// Player load per window (SPEC §11).
    LoadPlayer1m,
    /// Late readings.
    Late,
    /// Rejected inputs.
    Rejects,
    /// Progress rows.
    Progress,
    /// Every accepted reading.
    Raw,
}

impl TableId {
    /// Every table, in upload priority order (most important first).
    pub const ALL: [TableId; 14] = [
        TableId::Alerts,
        TableId::FatigueAlerts,
        TableId::LoadAlerts,
        TableId::AlertAcks,
        TableId::DeviceEvents,
        TableId::WindowsWearable,
        TableId::WindowsPitch,
        TableId::WindowsCrowd,
        TableId::WindowsGeneric,
        TableId::LoadPlayer1m,
        TableId::Late,
        TableId::Rejects,
        TableId::Progress,
        TableId::Raw,
    ];

    /// Table name, as in object keys.
    pub fn name(self) -> &'static str {
        match self {
            TableId::Alerts => "alerts",
            TableId::FatigueAlerts => "fatigue_alerts",
            TableId::LoadAlerts => "load_alerts",
            TableId::AlertAcks => "alert_acks",
            TableId::DeviceEvents => "device_events",
            TableId::WindowsWearable => "windows_wearable",
            TableId::WindowsPitch => "windows_pitch",
            TableId::WindowsCrowd => "windows_crowd",
            TableId::WindowsGeneric => "windows_generic",
            TableId::LoadPlayer1m => "load_player_1m",
            TableId::Late => "late",
            TableId::Rejects => "rejects",
            TableId::Progress => "progress",
            TableId::Raw => "raw",
        }
    }

    /// Parses a table name.
    pub fn parse(s: &str) -> Option<TableId> {
        TableId::ALL.into_iter().find(|t| t.name() == s)
    }

    /// Index into per-table arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The windows table of a kind.
    pub fn windows(kind: SensorKind) -> TableId {
        match kind {
            SensorKind::Wearable => TableId::WindowsWearable,
            SensorKind::Pitch => TableId::WindowsPitch,
            SensorKind::Crowd => TableId::WindowsCrowd,
            SensorKind::Generic => TableId::WindowsGeneric,
        }
    }

    /// The table's columns, in file order.
    pub fn columns(self) -> &'static [Column] {
        static SCHEMAS: OnceLock<Vec<Vec<Column>>> = OnceLock::new();
        &SCHEMAS.get_or_init(|| TableId::ALL.iter().map(|&t| schema::build(t)).collect())
            [self.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_name_round_trips_and_has_columns() {
        for t in TableId::ALL {
            assert_eq!(TableId::parse(t.name()), Some(t));
            assert!(t.columns().len() >= 6, "{}", t.name());
            let mut names: Vec<_> = t.columns().iter().map(|c| &c.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(
                names.len(),
                t.columns().len(),
                "duplicate column in {}",
                t.name()
            );
        }
    }

    #[test]
    fn alerts_columns_follow_the_spec_order() {
        let names: Vec<_> = TableId::Alerts
            .columns()
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "alert_id",
                "venue_id",
                "gateway_id",
                "sensor",
                "device_id",
                "metric",
                "value",
                "z_score",
                "baseline_mean",
                "baseline_std",
                "baseline_count",
                "match_id",
                "event_time",
                "detected_at",
                "player_id",
                "player_name",
                "zone_id",
                "delivery_id",
                "clock_synchronized"
            ]
        );
    }
}
