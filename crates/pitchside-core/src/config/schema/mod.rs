//! The shape of the config file, key by key: every unknown key (with a "did
//! you mean"), every value of the wrong type and every missing required key is
//! found in one pass over the TOML table, and said in words a person
//! understands ("must be a duration string such as \"30s\""), before serde
//! builds the typed structs. Keys that fail are removed, so that serde and
//! `validate` can still report the problems of the rest in the same run.
//!
//! Each section's keys ([`keys::Key`]) come from its declaration
//! ([`declare::section!`]), the serde struct from the same one, so the two
//! cannot disagree; `config::file::ConfigFile` is the root. The words of the
//! problems are in [`hints`]; the configuration reference is made from the
//! same keys in [`reference`].

pub(crate) mod declare;
pub(super) mod hints;
pub(crate) mod keys;
pub mod reference;

use hints::{describe, duration_hint, join, missing, size_hint, unknown, whole_hint};
use keys::{Key, Section, Ty};
use toml::{Table, Value};

/// The keys of the whole file.
pub(crate) const ROOT: &[Key] = crate::config::ConfigFile::KEYS;

/// What the walk found.
#[derive(Debug, Default)]
pub(super) struct Checked {
    /// One problem per unknown key, key of the wrong type and missing
    /// required key, each starting with the key's full name.
    pub problems: Vec<String>,
    /// Whether a required key is missing (or was removed): then serde's
    /// stand-in for it must not be taken for a value.
    pub incomplete: bool,
}

/// Checks `table` against [`ROOT`] (the keys of every section); removes
/// every key that is unknown or of the wrong type.
pub(super) fn check(table: &mut Table) -> Checked {
    let mut out = Checked::default();
    walk("", table, ROOT, &mut out);
    out
}

fn walk(path: &str, table: &mut Table, keys: &'static [Key], out: &mut Checked) {
    let mut bad = Vec::new();
    for (name, value) in table.iter_mut() {
        let full = join(path, name);
        let Some(key) = Key::each(keys).find(|k| k.name == name) else {
            out.problems.push(unknown(&full, name, path, keys));
            bad.push(name.clone());
            continue;
        };
        if let Err(why) = check_value(&full, name, key.ty, value, out) {
            out.problems.push(format!("{full}: {why}"));
            bad.push(name.clone());
        }
    }
    for name in &bad {
        table.remove(name);
    }
    for key in Key::each(keys).filter(|k| k.required) {
        if !table.contains_key(key.name) {
            out.incomplete = true;
            if !bad.iter().any(|b| b == key.name) {
                out.problems.push(missing(&join(path, key.name), key));
            }
        }
    }
}

/// Checks one value; nested tables are walked (their problems go to `out`).
fn check_value(
    full: &str,
    name: &str,
    ty: Ty,
    value: &mut Value,
    out: &mut Checked,
) -> Result<(), String> {
    let got = describe(value);
    match (ty, &mut *value) {
        (Ty::Text, Value::String(_)) => Ok(()),
        (Ty::Choice(names, _), Value::String(s)) if names.contains(&s.as_str()) => Ok(()),
        (Ty::Choice(_, words), Value::String(s)) => Err(format!("{s:?} must be {words}")),
        (Ty::Text | Ty::Choice(..), Value::Integer(_) | Value::Float(_) | Value::Boolean(_)) => {
            Err(format!(
                "must be text in quotes, but it is {got}; write {name} = \"{value}\""
            ))
        }
        (Ty::Text | Ty::Choice(..), _) => Err(format!("must be text in quotes, but it is {got}")),
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
        _ => check_section(full, ty, value, &got, out),
    }
}

/// Checks a value made of parts (a section, a list, a map entry, named
/// entries) or a fixed value of any plain type; nested problems go to `out`.
fn check_section(
    full: &str,
    ty: Ty,
    value: &mut Value,
    got: &str,
    out: &mut Checked,
) -> Result<(), String> {
    match (ty, value) {
        (Ty::Table(keys), Value::Table(t)) => {
            walk(full, t, keys, out);
            Ok(())
        }
        (Ty::Table(_), _) => Err(format!(
            "must be a section, but it is {got}; write [{full}] on a line of its own with its keys below it"
        )),
        (Ty::Tables(keys), Value::Array(items)) => {
            walk_list(full, items, keys, out);
            Ok(())
        }
        (Ty::Tables(_), Value::Table(_)) => Err(format!(
            "must be a list of sections: write [[{full}]] (double brackets) above each one, even if there is only one"
        )),
        (Ty::Tables(_), _) => Err(format!(
            "must be a list of sections, but it is {got}; write [[{full}]] (double brackets) above each one"
        )),
        (Ty::TextList, Value::Array(items)) if items.iter().all(Value::is_str) => Ok(()),
        (Ty::TextList, _) => Err(format!(
            "must be a list of texts such as [\"a\", \"b\"], but it is {got}"
        )),
        (Ty::NumberList, Value::Array(items))
            if items
                .iter()
                .all(|v| matches!(v, Value::Integer(_) | Value::Float(_))) =>
        {
            Ok(())
        }
        (Ty::NumberList, _) => Err(format!(
            "must be a list of numbers such as [50, 60, 70], but it is {got}"
        )),
        (Ty::IntList, Value::Array(items)) if items.iter().all(Value::is_integer) => Ok(()),
        (Ty::IntList, _) => Err(format!(
            "must be a list of whole numbers such as [7, 9], but it is {got}"
        )),
        (Ty::Scalar, Value::String(_) | Value::Integer(_) | Value::Float(_) | Value::Boolean(_)) => {
            Ok(())
        }
        (Ty::Scalar, _) => Err(format!(
            "must be text, a number or true/false, but it is {got}"
        )),
        (Ty::TextOrTable(_), Value::String(_)) => Ok(()),
        (Ty::TextOrTable(keys), Value::Table(t)) => {
            walk(full, t, keys, out);
            Ok(())
        }
        (Ty::TextOrTable(_), _) => Err(format!(
            "must be text or a section such as {{ field = \"…\" }}, but it is {got}"
        )),
        (Ty::Named(keys), Value::Table(t)) => {
            walk_named(full, t, keys, out);
            Ok(())
        }
        (Ty::Named(_), _) => Err(format!(
            "must be a section of named entries, but it is {got}; write [{full}] on a line of its own"
        )),
        // The plain types are checked by `check_value` before it calls here.
        (ty, _) => Err(format!("is {got}, not a {ty:?}")),
    }
}

/// Walks a section of named entries, each a section with `keys`; an entry
/// that is not a section is a problem, and removed.
fn walk_named(full: &str, table: &mut Table, keys: &'static [Key], out: &mut Checked) {
    let mut bad = Vec::new();
    for (name, value) in table.iter_mut() {
        let at = join(full, name);
        match value {
            Value::Table(t) => walk(&at, t, keys, out),
            other => {
                out.problems.push(format!(
                    "{at}: must be a section such as {{ field = \"…\" }}, but it is {}",
                    describe(other)
                ));
                bad.push(name.clone());
            }
        }
    }
    for name in &bad {
        table.remove(name);
    }
}

/// Walks every section of a list (`[[full]]`); an item that is not a
/// section is a problem, and removed.
fn walk_list(full: &str, items: &mut Vec<Value>, keys: &'static [Key], out: &mut Checked) {
    let mut bad = Vec::new();
    for (i, item) in items.iter_mut().enumerate() {
        let at = format!("{full}[{i}]");
        match item {
            Value::Table(t) => walk(&at, t, keys, out),
            other => {
                out.problems.push(format!(
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
}

#[cfg(test)]
mod tests;
