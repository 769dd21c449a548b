//! The contract lives in the repository (`SPEC.md`): every table, column,
//! reject reason and sensor kind the gateway writes must be named there, so
//! the document and the code cannot drift apart unnoticed.

use pitchside::model::{RejectReason, SensorKind};
use pitchside::tables::TableId;

fn spec() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/SPEC.md"))
        .expect("SPEC.md is in the repository")
}

#[test]
fn every_table_the_gateway_writes_is_in_the_contract() {
    let spec = spec();
    for t in TableId::ALL {
        let name = t.name();
        let named = spec.contains(&format!("`{name}`"))
            || (name.starts_with("windows_") && spec.contains("`windows_*`"));
        assert!(named, "table {name} is not in SPEC.md");
    }
}

#[test]
fn every_reject_reason_and_sensor_kind_is_in_the_contract() {
    let spec = spec();
    for r in RejectReason::ALL {
        assert!(
            spec.contains(&format!("`{}`", r.as_str())),
            "reject reason {} is not in SPEC.md",
            r.as_str()
        );
    }
    for k in SensorKind::ALL {
        assert!(
            spec.contains(&format!("`{}`", k.as_str())),
            "sensor kind {} is not in SPEC.md",
            k.as_str()
        );
    }
}

#[test]
fn every_column_of_the_alert_raw_and_reject_tables_is_in_the_contract() {
    let spec = spec();
    for t in [
        TableId::Alerts,
        TableId::Raw,
        TableId::Rejects,
        TableId::FatigueAlerts,
    ] {
        for c in t.columns() {
            assert!(
                spec.contains(c.name.as_str()),
                "column {}.{} is not in SPEC.md",
                t.name(),
                c.name
            );
        }
    }
}
