//! The shape of the config file, key by key: every unknown key (with a "did
//! you mean"), every value of the wrong type and every missing required key is
//! found in one pass over the TOML table, and said in words a person
//! understands ("must be a duration string such as \"30s\""), before serde
//! builds the typed structs. Keys that fail are removed, so that serde and
//! `validate` can still report the problems of the rest in the same run.
//!
//! The tables below mirror `file.rs` and `sources.rs`; the tests at the end
//! keep them in step (every field serde knows is here, and every key here is
//! one serde accepts with that type).

use toml::{Table, Value};

/// What a key holds.
#[derive(Debug, Clone, Copy)]
pub(super) enum Ty {
    /// Any text in quotes.
    Text,
    /// A duration string: "30s".
    Duration,
    /// A size string: "256MiB".
    Size,
    /// A whole number of bytes or a size string.
    BytesOrSize,
    /// A whole number from 0 to the bound.
    Whole(u64),
    /// Any whole number.
    Int,
    /// An integer or a float.
    Number,
    /// `true` or `false`.
    Bool,
    /// A section (`[a.b]` or an inline table).
    Table(&'static [Key]),
    /// A list of sections (`[[a.b]]` or a list of inline tables).
    Tables(&'static [Key]),
}

/// One key of a section.
#[derive(Debug)]
pub(super) struct Key {
    pub(super) name: &'static str,
    pub(super) ty: Ty,
    pub(super) required: bool,
}

const fn k(name: &'static str, ty: Ty) -> Key {
    Key {
        name,
        ty,
        required: false,
    }
}
const fn req(name: &'static str, ty: Ty) -> Key {
    Key {
        name,
        ty,
        required: true,
    }
}

const U8: Ty = Ty::Whole(u8::MAX as u64);
const U16: Ty = Ty::Whole(u16::MAX as u64);
const U32: Ty = Ty::Whole(u32::MAX as u64);
const U64: Ty = Ty::Whole(i64::MAX as u64);
use Ty::{Bool, BytesOrSize, Duration, Int, Number, Size, Tables, Text};

/// The whole file.
pub(super) const ROOT: &[Key] = &[
    req(
        "venue",
        Ty::Table(&[req("id", Text), req("gateway_id", Text)]),
    ),
    k(
        "detector",
        Ty::Table(&[
            k("window", U32),
            k("threshold", Number),
            k("min_baseline", U32),
            k("idle_timeout", Duration),
            k("max_keys", U32),
        ]),
    ),
    k(
        "windows",
        Ty::Table(&[
            k("size", Duration),
            k("watermark_delay", Duration),
            k("max_open_groups", U32),
        ]),
    ),
    k(
        "fatigue",
        Ty::Table(&[
            k("baseline_windows", U32),
            k("k", Number),
            k("max_players", U32),
        ]),
    ),
    k(
        "limits",
        Ty::Table(&[
            k("max_event_bytes", BytesOrSize),
            k("max_future", Duration),
            k(
                "range",
                Tables(&[
                    req("sensor", Text),
                    req("metric", Text),
                    k("min", Number),
                    k("max", Number),
                ]),
            ),
        ]),
    ),
    req(
        "output",
        Ty::Table(&[
            req("store", Text),
            req("spool_dir", Text),
            k("flush_interval", Duration),
            k("max_rows_per_file", U32),
            k("compression", Text),
            k("raw", Bool),
            k("spool_max_bytes", Size),
            k("min_free_disk", Size),
            k("upload_timeout", Duration),
            k("permanent_retry", Duration),
            k("sync_interval", Duration),
            k(
                "s3",
                Ty::Table(&[
                    k("endpoint", Text),
                    k("region", Text),
                    k("path_style", Bool),
                    k("allow_http", Bool),
                    k("access_key_id_file", Text),
                    k("secret_access_key_file", Text),
                    k("credentials", Text),
                ]),
            ),
            k(
                "azure",
                Ty::Table(&[
                    k("account", Text),
                    k("endpoint", Text),
                    k("allow_http", Bool),
                    k("access_key_file", Text),
                    k("credentials", Text),
                ]),
            ),
            k(
                "gcs",
                Ty::Table(&[k("service_account_file", Text), k("credentials", Text)]),
            ),
        ]),
    ),
    k(
        "metrics",
        Ty::Table(&[
            k("progress_interval", Duration),
            k("listen", Text),
            k("health_grace", Duration),
        ]),
    ),
    k(
        "pipeline",
        Ty::Table(&[k("input_queue", U32), k("encode_queue", U32)]),
    ),
    k(
        "sources",
        Ty::Table(&[
            k(
                "simulator",
                Ty::Table(&[
                    k("rate", Number),
                    k("players", U32),
                    k("pitch_devices", U32),
                    k("crowd_zones", U32),
                    k("generic_devices", U32),
                    k("anomaly_rate", Number),
                    k("fatigue_rate", Number),
                    k("match_id", Int),
                    k("seed", U64),
                ]),
            ),
            k(
                "serial",
                Tables(&[
                    req("path", Text),
                    k("baud", U32),
                    k("data_bits", U8),
                    k("parity", Text),
                    k("stop_bits", U8),
                    k("sensor", Text),
                    k("max_line_bytes", U32),
                ]),
            ),
            k(
                "mqtt",
                Tables(&[
                    req("broker", Ty::Table(BROKER)),
                    req(
                        "subscriptions",
                        Tables(&[req("topic", Text), k("sensor", Text)]),
                    ),
                    k("max_held", U32),
                ]),
            ),
        ]),
    ),
    k(
        "alerts",
        Ty::Table(&[
            k("topic_prefix", Text),
            k("queue", U32),
            k("when_full", Text),
            k("mqtt", Ty::Table(BROKER)),
        ]),
    ),
    k("log", Ty::Table(&[k("level", Text), k("format", Text)])),
];

const BROKER: &[Key] = &[
    req("host", Text),
    k("port", U16),
    k("client_id", Text),
    k("username", Text),
    k("password_env", Text),
    k("password_file", Text),
    k("keep_alive", Duration),
    k(
        "tls",
        Ty::Table(&[
            req("ca_file", Text),
            k("client_cert", Text),
            k("client_key", Text),
        ]),
    ),
];

/// Checks `table` against [`ROOT`]; removes every key that is unknown or of
/// the wrong type, and returns one problem per such key and per missing
/// required key, each starting with the key's full name.
pub(super) fn check(table: &mut Table) -> Vec<String> {
    let mut out = Vec::new();
    walk("", table, ROOT, &mut out);
    out
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn walk(path: &str, table: &mut Table, keys: &[Key], out: &mut Vec<String>) {
    let mut bad = Vec::new();
    for (name, value) in table.iter_mut() {
        let full = join(path, name);
        let Some(key) = keys.iter().find(|k| k.name == name) else {
            out.push(unknown(&full, name, path, keys));
            bad.push(name.clone());
            continue;
        };
        if let Err(why) = check_value(&full, name, key.ty, value, out) {
            out.push(format!("{full}: {why}"));
            bad.push(name.clone());
        }
    }
    for name in &bad {
        table.remove(name);
    }
    for key in keys.iter().filter(|k| k.required) {
        if !table.contains_key(key.name) && !bad.iter().any(|b| b == key.name) {
            out.push(missing(&join(path, key.name), key));
        }
    }
}

/// Checks one value; nested tables are walked (their problems go to `out`).
fn check_value(
    full: &str,
    name: &str,
    ty: Ty,
    value: &mut Value,
    out: &mut Vec<String>,
) -> Result<(), String> {
    let got = describe(value);
    match (ty, &mut *value) {
        (Ty::Text, Value::String(_)) => Ok(()),
        (Ty::Text, Value::Integer(_) | Value::Float(_) | Value::Boolean(_)) => Err(format!(
            "must be text in quotes, but it is {got}; write {name} = \"{value}\""
        )),
        (Ty::Text, _) => Err(format!("must be text in quotes, but it is {got}")),
        (Ty::Duration, Value::String(_)) => Ok(()),
        (Ty::Duration, _) => Err(duration_hint(value, &got)),
        (Ty::Size, Value::String(_)) => Ok(()),
        (Ty::Size, _) => Err(size_hint(value, &got)),
        (Ty::BytesOrSize, Value::String(_)) => Ok(()),
        (Ty::BytesOrSize, Value::Integer(n)) if *n >= 0 => Ok(()),
        (Ty::BytesOrSize, _) => Err(format!(
            "must be a whole number of bytes or a size string such as \"4KiB\" (B, KiB, MiB or GiB), but it is {got}"
        )),
        (Ty::Whole(max), Value::Integer(n)) if *n >= 0 && (*n as u64) <= max => Ok(()),
        (Ty::Whole(max), Value::Integer(n)) if *n >= 0 => Err(format!(
            "must be a whole number from 0 to {max}, but it is {n}, which is too large"
        )),
        (Ty::Whole(max), _) => Err(whole_hint(value, &got, max)),
        (Ty::Int, Value::Integer(_)) => Ok(()),
        (Ty::Int, _) => Err(format!("must be a whole number, but it is {got}")),
        (Ty::Number, Value::Integer(_) | Value::Float(_)) => Ok(()),
        (Ty::Number, Value::String(s)) if s.trim().parse::<f64>().is_ok() => Err(format!(
            "must be a number, but it is {got}; write {} without quotes",
            s.trim()
        )),
        (Ty::Number, _) => Err(format!(
            "must be a number such as 1.5, but it is {got}"
        )),
        (Ty::Bool, Value::Boolean(_)) => Ok(()),
        (Ty::Bool, Value::String(s)) if matches!(s.as_str(), "true" | "false") => Err(format!(
            "must be true or false, but it is {got}; write {s} without quotes"
        )),
        (Ty::Bool, _) => Err(format!(
            "must be true or false (without quotes), but it is {got}"
        )),
        (Ty::Table(keys), Value::Table(t)) => {
            walk(full, t, keys, out);
            Ok(())
        }
        (Ty::Table(_), _) => Err(format!(
            "must be a section, but it is {got}; write [{full}] on a line of its own with its keys below it"
        )),
        (Ty::Tables(keys), Value::Array(items)) => {
            let mut bad = Vec::new();
            for (i, item) in items.iter_mut().enumerate() {
                let at = format!("{full}[{i}]");
                match item {
                    Value::Table(t) => walk(&at, t, keys, out),
                    other => {
                        out.push(format!(
                            "{at}: must be a section {{ key = value, … }}, but it is {}",
                            describe(other)
                        ));
                        bad.push(i);
                    }
                }
            }
            for i in bad.into_iter().rev() {
                items.remove(i);
            }
            Ok(())
        }
        (Ty::Tables(_), Value::Table(_)) => Err(format!(
            "must be a list of sections: write [[{full}]] (double brackets) above each one, even if there is only one"
        )),
        (Ty::Tables(_), _) => Err(format!(
            "must be a list of sections, but it is {got}; write [[{full}]] (double brackets) above each one"
        )),
    }
}

fn describe(v: &Value) -> String {
    match v {
        Value::String(s) => format!("the text {s:?}"),
        Value::Integer(n) => format!("the number {n}"),
        Value::Float(f) => format!("the number {f}"),
        Value::Boolean(b) => format!("{b}"),
        Value::Datetime(d) => format!("the date {d}"),
        Value::Array(_) => "a list".into(),
        Value::Table(_) => "a section".into(),
    }
}

fn duration_hint(v: &Value, got: &str) -> String {
    let base = format!(
        "must be a duration string such as \"30s\" (a number followed by ms, s, m, h or d), but it is {got}"
    );
    match v {
        Value::Integer(n) if *n >= 0 => format!("{base}; write \"{n}s\" if you meant {n} seconds"),
        Value::Float(f) if *f >= 0.0 && (f * 1000.0).fract() == 0.0 => {
            format!(
                "{base}; write \"{}ms\" if you meant {f} seconds",
                f * 1000.0
            )
        }
        _ => base,
    }
}

fn size_hint(v: &Value, got: &str) -> String {
    let base = format!(
        "must be a size string such as \"256MiB\" (a number followed by B, KiB, MiB or GiB), but it is {got}"
    );
    match v {
        Value::Integer(n) if *n >= 0 => {
            format!(
                "{base}; write \"{}\" if you meant {n} bytes",
                exact_size(*n as u64)
            )
        }
        _ => base,
    }
}

/// `n` bytes in the largest unit that divides it exactly: 268435456 → "256MiB".
pub fn exact_size(n: u64) -> String {
    for (unit, size) in [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
        if n >= size && n.is_multiple_of(size) {
            return format!("{}{unit}", n / size);
        }
    }
    format!("{n}B")
}

fn whole_hint(v: &Value, got: &str, max: u64) -> String {
    let range = if max >= u32::MAX as u64 {
        "a whole number ≥ 0".to_string()
    } else {
        format!("a whole number from 0 to {max}")
    };
    match v {
        Value::String(s) if s.trim().parse::<u64>().is_ok() => format!(
            "must be {range}, but it is {got}; write {} without quotes",
            s.trim()
        ),
        Value::Float(f) if f.fract() == 0.0 && *f >= 0.0 => format!(
            "must be {range}, but it is {got}; write {} without the decimal point",
            *f as u64
        ),
        _ => format!("must be {range}, but it is {got}"),
    }
}

fn missing(full: &str, key: &Key) -> String {
    match key.ty {
        Ty::Table(keys) => {
            let needed: Vec<_> = keys.iter().filter(|k| k.required).map(|k| k.name).collect();
            format!(
                "[{full}]: this section is required but missing (it needs {})",
                needed.join(" and ")
            )
        }
        Ty::Tables(_) => format!("{full}: required but missing (at least one entry)"),
        _ => format!("{full}: required but missing"),
    }
}

/// "unknown key", with the closest key of the section, a key of the same
/// name elsewhere, or the section's keys.
fn unknown(full: &str, name: &str, path: &str, keys: &[Key]) -> String {
    let section = if path.is_empty() {
        "at the top of the file".to_string()
    } else {
        format!("in [{path}]")
    };
    if name == "password" && keys.iter().any(|k| k.name == "password_env") {
        return format!(
            "{full}: passwords are never written in the config; use password_env (the name of an environment variable holding it) or password_file (a file holding it)"
        );
    }
    let as_file = format!("{name}_file");
    if keys.iter().any(|k| k.name == as_file) {
        return format!(
            "{full}: secrets are never written in the config; name a file holding it with {as_file} (or use the environment, see the README)"
        );
    }
    let close = keys
        .iter()
        .map(|k| (distance(name, k.name), k.name))
        .filter(|(d, k)| *d <= (k.len().max(name.len()) / 3).max(1))
        .min();
    if let Some((_, k)) = close {
        return format!("{full}: unknown key {section}; did you mean {k}?");
    }
    let mut elsewhere = Vec::new();
    find_elsewhere(name, "", ROOT, &mut elsewhere);
    if let Some(other) = elsewhere.first() {
        return format!(
            "{full}: unknown key {section}; {name} belongs in [{other}]: move it there"
        );
    }
    let names: Vec<_> = keys.iter().map(|k| k.name).collect();
    format!(
        "{full}: unknown key {section} (the keys there are {})",
        names.join(", ")
    )
}

fn find_elsewhere(name: &str, path: &str, keys: &[Key], out: &mut Vec<String>) {
    for key in keys {
        let full = join(path, key.name);
        match key.ty {
            Ty::Table(inner) | Ty::Tables(inner) => {
                if inner.iter().any(|k| k.name == name) {
                    out.push(full.clone());
                }
                find_elsewhere(name, &full, inner, out);
            }
            _ => {}
        }
    }
}

/// Edit distance with transpositions (optimal string alignment).
fn distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
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
                }],
                mqtt: vec![MqttSourceSection {
                    broker: broker.clone(),
                    subscriptions: vec![MqttSubscription {
                        topic: "t".into(),
                        sensor: Some("crowd".into()),
                    }],
                    max_held: 1,
                }],
            },
            alerts: AlertsSection {
                mqtt: Some(broker),
                ..AlertsSection::default()
            },
            log: LogSection::default(),
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
}
