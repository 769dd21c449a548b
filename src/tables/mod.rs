//! The output tables (SPEC §5): every schema defined here, once, and a
//! columnar buffer that rows are appended to until a flush encodes it.

mod buffer;
mod progress;

pub use buffer::{ColumnBuf, RowWriter, TableBuffer};
pub use progress::ProgressRow;

use crate::model::SensorKind;

/// The identity stamped on every row.
#[derive(Debug, Clone)]
pub struct Stamp {
    /// `venue.id`.
    pub venue_id: String,
    /// `venue.gateway_id`.
    pub gateway_id: String,
}

use std::sync::OnceLock;

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
    /// Wearable windows.
    WindowsWearable,
    /// Pitch windows.
    WindowsPitch,
    /// Crowd windows.
    WindowsCrowd,
    /// Generic windows.
    WindowsGeneric,
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
    pub const ALL: [TableId; 10] = [
        TableId::Alerts,
        TableId::FatigueAlerts,
        TableId::WindowsWearable,
        TableId::WindowsPitch,
        TableId::WindowsCrowd,
        TableId::WindowsGeneric,
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
            TableId::WindowsWearable => "windows_wearable",
            TableId::WindowsPitch => "windows_pitch",
            TableId::WindowsCrowd => "windows_crowd",
            TableId::WindowsGeneric => "windows_generic",
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
        &SCHEMAS.get_or_init(|| TableId::ALL.iter().map(|t| t.build_columns()).collect())
            [self.index()]
    }

    fn build_columns(self) -> Vec<Column> {
        use ColType::*;
        let c = |name: &str, ty: ColType| Column {
            name: name.into(),
            ty,
            nullable: false,
        };
        let n = |name: &str, ty: ColType| Column {
            name: name.into(),
            ty,
            nullable: true,
        };
        let ids = || vec![c("venue_id", Utf8), c("gateway_id", Utf8)];
        let window_head = || {
            let mut v = ids();
            v.extend([c("window_start", Ts), c("window_end", Ts)]);
            v
        };
        let stats = |v: &mut Vec<Column>, metrics: &[&str]| {
            for m in metrics {
                for s in ["mean", "min", "max"] {
                    v.push(n(&format!("{m}_{s}"), F64));
                }
            }
        };
        let reading = || {
            let mut v = ids();
            v.extend([
                c("sensor", Utf8),
                c("device_id", Utf8),
                c("metric", Utf8),
                c("value", F64),
                c("match_id", I64),
                n("event_id", I64),
                c("event_time", Ts),
                c("received_at", Ts),
            ]);
            v
        };
        match self {
            TableId::Alerts => {
                let mut v = vec![c("alert_id", Utf8)];
                v.extend(ids());
                v.extend([
                    c("sensor", Utf8),
                    c("device_id", Utf8),
                    c("metric", Utf8),
                    c("value", F64),
                    c("z_score", F64),
                    c("baseline_mean", F64),
                    c("baseline_std", F64),
                    c("baseline_count", I64),
                    c("match_id", I64),
                    c("event_time", Ts),
                    c("detected_at", Ts),
                ]);
                v
            }
            TableId::FatigueAlerts => {
                let mut v = vec![c("alert_id", Utf8)];
                v.extend(ids());
                v.extend([
                    c("match_id", I64),
                    c("player_id", I64),
                    n("player_name", Utf8),
                    c("window_start", Ts),
                    c("window_end", Ts),
                    c("heart_rate_mean", F64),
                    c("baseline_mean", F64),
                    c("baseline_std", F64),
                    c("baseline_windows", I64),
                ]);
                v
            }
            TableId::WindowsWearable => {
                let mut v = window_head();
                v.extend([
                    c("match_id", I64),
                    c("player_id", I64),
                    n("player_name", Utf8),
                    c("events", I64),
                ]);
                stats(&mut v, SensorKind::Wearable.metrics());
                v.push(n("gateway_downtime_ms", I64));
                v
            }
            TableId::WindowsPitch => {
                let mut v = window_head();
                v.extend([c("match_id", I64), c("events", I64)]);
                stats(&mut v, SensorKind::Pitch.metrics());
                v.push(n("gateway_downtime_ms", I64));
                v
            }
            TableId::WindowsCrowd => {
                let mut v = window_head();
                v.extend([c("match_id", I64), c("zone_id", Utf8), c("events", I64)]);
                stats(&mut v, SensorKind::Crowd.metrics());
                v.push(n("gateway_downtime_ms", I64));
                v
            }
            TableId::WindowsGeneric => {
                let mut v = window_head();
                v.extend([c("device_id", Utf8), c("metric", Utf8), c("events", I64)]);
                stats(&mut v, &["value"]);
                v.push(n("gateway_downtime_ms", I64));
                v
            }
            TableId::Raw => reading(),
            TableId::Late => {
                let mut v = reading();
                v.push(c("watermark", Ts));
                v
            }
            TableId::Rejects => {
                let mut v = ids();
                v.extend([
                    c("source", Utf8),
                    c("reason", Utf8),
                    c("detail", Utf8),
                    c("payload", Binary),
                    c("received_at", Ts),
                ]);
                v
            }
            TableId::Progress => {
                let mut v = ids();
                v.extend([
                    c("timestamp", Ts),
                    c("input_rows", I64),
                    c("input_rows_per_second", F64),
                    c("processed_rows_per_second", F64),
                    c("batch_duration_ms", F64),
                    c("state_keys", I64),
                    c("state_bytes", I64),
                    c("open_windows", I64),
                ]);
                for k in SensorKind::ALL {
                    v.push(n(&format!("watermark_{k}"), Ts));
                }
                v.extend([
                    c("late_rows", I64),
                    c("rejected_rows", I64),
                    c("duplicate_rows", I64),
                    c("alerts", I64),
                    c("evictions", I64),
                    c("spool_files", I64),
                    c("spool_bytes", I64),
                    c("uploaded_files", I64),
                    c("upload_failures", I64),
                    n("last_upload_at", Ts),
                    c("spool_evictions", I64),
                    c("duplicate_conflicts", I64),
                ]);
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_name_round_trips_and_has_columns() {
        for t in TableId::ALL {
            assert_eq!(TableId::parse(t.name()), Some(t));
            assert!(t.columns().len() >= 7, "{}", t.name());
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
                "detected_at"
            ]
        );
    }
}
