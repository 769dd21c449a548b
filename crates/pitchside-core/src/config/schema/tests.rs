use super::hints::{distance, exact_size};
use super::keys::{Key, Ty};
use super::*;
use crate::config::*;

/// A document with a value of the right type for every key (`all`) or
/// only the required ones.
fn sample(keys: &[Key], all: bool) -> Table {
    let mut t = Table::new();
    for key in keys.iter().filter(|k| all || k.required) {
        let v = match key.ty {
            Ty::Text => Value::String("x".into()),
            Ty::Duration => Value::String("1s".into()),
            Ty::Size => Value::String("1MiB".into()),
            Ty::BytesOrSize => Value::Integer(4096),
            Ty::Whole(_) | Ty::Int => Value::Integer(1),
            Ty::Number => Value::Float(1.5),
            Ty::Bool => Value::Boolean(true),
            Ty::Table(inner) => Value::Table(sample(inner, all)),
            Ty::Tables(inner) => Value::Array(vec![Value::Table(sample(inner, all))]),
            Ty::TextList => Value::Array(vec![Value::String("x".into())]),
            Ty::Scalar => Value::Integer(1),
            // One entry key only: a map entry takes exactly one source.
            Ty::TextOrTable(_) => Value::String("x".into()),
            Ty::Named(inner) => {
                let mut named = Table::new();
                named.insert("m".into(), Value::Table(sample(inner, all)));
                Value::Table(named)
            }
        };
        t.insert(key.name.into(), v);
    }
    t
}

#[test]
fn every_key_of_the_schema_is_accepted_by_serde_with_its_type() {
    let mut doc = sample(ROOT, true);
    assert!(check(&mut doc).is_empty());
    let parsed: Result<ConfigFile, _> = Value::Table(doc).try_into();
    parsed.unwrap();
}

#[test]
fn the_required_keys_of_the_schema_are_enough_for_serde() {
    let doc = sample(ROOT, false);
    let parsed: Result<ConfigFile, _> = Value::Table(doc).try_into();
    parsed.unwrap();
}

/// Every key of a source's name, format and map, set.
fn every_input_key() -> sources::input::InputSection {
    use sources::input::{EntrySection, EntryTable, InputSection, MapSection};
    let entry = || {
        Some(EntrySection::Table(EntryTable {
            field: Some("f".into()),
            topic_level: Some(1),
            value: Some(toml::Value::Integer(1)),
            format: Some("epoch_ms".into()),
            utc_offset: Some("+05:30".into()),
            scale: Some(2.0),
            offset: Some(1.0),
        }))
    };
    InputSection {
        name: Some("n".into()),
        format: Some("csv".into()),
        pattern: Some("(?P<a>.)".into()),
        columns: Some(vec!["a".into()]),
        header: Some(false),
        delimiter: Some(";".into()),
        map: Some(MapSection {
            sensor: entry(),
            device_id: entry(),
            event_time: entry(),
            match_id: entry(),
            event_id: entry(),
            player_id: entry(),
            player_name: entry(),
            zone_id: entry(),
            delivery_id: entry(),
            metrics: [("m".to_string(), entry().unwrap())].into(),
        }),
    }
}

#[test]
fn every_field_serde_knows_is_in_the_schema() {
    // Built field by field (no `..Default`), so a new field does not
    // compile until it is added here, and then this test asks for it in
    // the schema.
    let broker = MqttBroker {
        host: "h".into(),
        port: Some(1),
        client_id: Some("c".into()),
        username: Some("u".into()),
        password_env: Some("P".into()),
        password_file: Some("/p".into()),
        keep_alive: "30s".into(),
        tls: Some(MqttTls {
            ca_file: "/ca".into(),
            client_cert: Some("/c".into()),
            client_key: Some("/k".into()),
        }),
    };
    let file = ConfigFile {
        venue: VenueSection {
            id: "v".into(),
            gateway_id: "g".into(),
        },
        detector: DetectorSection::default(),
        windows: WindowsSection::default(),
        fatigue: FatigueSection::default(),
        limits: LimitsSection {
            max_event_bytes: ByteSize::Text("4KiB".into()),
            max_future: "5m".into(),
            range: vec![RangeEntry {
                sensor: "wearable".into(),
                metric: "heart_rate".into(),
                min: Some(0.0),
                max: Some(1.0),
            }],
        },
        output: OutputSection {
            store: "s3://b".into(),
            spool_dir: "/s".into(),
            flush_interval: "1s".into(),
            max_rows_per_file: 1,
            compression: "zstd".into(),
            raw: true,
            spool_max_bytes: "1GiB".into(),
            min_free_disk: "1MiB".into(),
            upload_timeout: "1s".into(),
            permanent_retry: "1s".into(),
            sync_interval: "1s".into(),
            max_journal_bytes: "256MiB".into(),
            s3: Some(S3Section::default()),
            azure: Some(AzureSection::default()),
            gcs: Some(GcsSection::default()),
        },
        metrics: MetricsSection::default(),
        pipeline: PipelineSection::default(),
        sources: SourcesSection {
            simulator: Some(SimulatorSection::default()),
            serial: vec![SerialSection {
                path: "/dev/x".into(),
                baud: 9600,
                data_bits: 8,
                parity: "none".into(),
                stop_bits: 1,
                sensor: Some("pitch".into()),
                max_line_bytes: Some(100),
                max_held: 1,
                input: every_input_key(),
            }],
            mqtt: vec![MqttSourceSection {
                broker: broker.clone(),
                subscriptions: vec![MqttSubscription {
                    topic: "t".into(),
                    sensor: Some("crowd".into()),
                    input: every_input_key(),
                }],
                max_held: 1,
            }],
        },
        alerts: AlertsSection {
            mqtt: Some(broker),
            ..AlertsSection::default()
        },
        log: LogSection::default(),
        health: crate::config::HealthSection::default(),
        console: crate::config::ConsoleSection {
            token_file: Some("/t".into()),
            tls: Some(crate::config::ConsoleTls {
                cert: "/c".into(),
                key: "/k".into(),
            }),
            ..crate::config::ConsoleSection::default()
        },
    };
    let mut doc: Table = toml::from_str(&toml::to_string(&file).unwrap()).unwrap();
    let problems = check(&mut doc);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn close_misspellings_get_a_suggestion() {
    assert_eq!(distance("windw", "window"), 1);
    assert_eq!(distance("treshold", "threshold"), 1);
    assert_eq!(distance("thresohld", "threshold"), 1);
    let mut doc: Table = toml::from_str("[detector]\ntreshold = 3\n").unwrap();
    let p = check(&mut doc);
    assert!(p[0].contains("did you mean threshold?"), "{p:?}");
}

#[test]
fn sizes_in_bytes_are_shown_in_the_largest_exact_unit() {
    assert_eq!(exact_size(268_435_456), "256MiB");
    assert_eq!(exact_size(1 << 30), "1GiB");
    assert_eq!(exact_size(2048), "2KiB");
    assert_eq!(exact_size(1536), "1536B");
    assert_eq!(exact_size(1000), "1000B");
}
