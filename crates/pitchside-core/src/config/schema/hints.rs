//! The words of the schema's problems: what a value is, what to write
//! instead, "did you mean", and where a misplaced key belongs.

use super::keys::{Key, Ty};
use super::ROOT;
use toml::Value;

/// `path.name`, or `name` at the top of the file.
pub(super) fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

pub(super) fn describe(v: &Value) -> String {
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

pub(super) fn duration_hint(v: &Value, got: &str) -> String {
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

pub(super) fn size_hint(v: &Value, got: &str) -> String {
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

pub(super) fn whole_hint(v: &Value, got: &str, max: u64) -> String {
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

pub(super) fn missing(full: &str, key: &Key) -> String {
    match key.ty {
        Ty::Table(keys) => {
            let needed: Vec<_> = Key::each(keys)
                .filter(|k| k.required)
                .map(|k| k.name)
                .collect();
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
pub(super) fn unknown(full: &str, name: &str, path: &str, keys: &'static [Key]) -> String {
    let section = if path.is_empty() {
        "at the top of the file".to_string()
    } else {
        format!("in [{path}]")
    };
    if name == "password" && Key::each(keys).any(|k| k.name == "password_env") {
        return format!(
            "{full}: passwords are never written in the config; use password_env (the name of an environment variable holding it) or password_file (a file holding it)"
        );
    }
    let as_file = format!("{name}_file");
    if Key::each(keys).any(|k| k.name == as_file) {
        return format!(
            "{full}: secrets are never written in the config; name a file holding it with {as_file} (or use the environment; docs: configuration.md, section Cloud credentials)"
        );
    }
    let close = Key::each(keys)
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
    let names: Vec<_> = Key::each(keys).map(|k| k.name).collect();
    format!(
        "{full}: unknown key {section} (the keys there are {})",
        names.join(", ")
    )
}

fn find_elsewhere(name: &str, path: &str, keys: &'static [Key], out: &mut Vec<String>) {
    for key in Key::each(keys) {
        let full = join(path, key.name);
        match key.ty {
            Ty::Table(inner) | Ty::Tables(inner) | Ty::TextOrTable(inner) | Ty::Named(inner) => {
                if Key::each(inner).any(|k| k.name == name) {
                    out.push(full.clone());
                }
                find_elsewhere(name, &full, inner, out);
            }
            _ => {}
        }
    }
}

/// Edit distance with transpositions (optimal string alignment).
pub(super) fn distance(a: &str, b: &str) -> usize {
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
