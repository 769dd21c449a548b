//! The configuration reference, made from the keys the sections declare
//! (the same keys the schema walker checks): every section, every key with
//! its type, whether it is required, its default and its doc text.
//! `pitchside check-config --reference` prints it as Markdown; the copy in
//! `docs/src/reference/config-keys.md` is checked against it by a test.

use super::keys::{Key, Ty};
use super::ROOT;
use std::fmt::Write;

/// One key of the reference.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Its full path: `detector.window`, `sources.serial[].baud`,
    /// `sources.serial[].map.metrics.<name>.scale`.
    pub path: String,
    /// The key as declared.
    pub key: &'static Key,
    /// Its default (`None`: required, or unset unless written).
    pub default: Option<toml::Value>,
}

/// Every key of the file, depth first in declaration order.
pub fn entries() -> Vec<Entry> {
    let mut out = Vec::new();
    collect("", ROOT, &mut out);
    out
}

fn collect(path: &str, keys: &'static [Key], out: &mut Vec<Entry>) {
    for key in Key::each(keys) {
        let full = join(path, key.name);
        out.push(Entry {
            path: full.clone(),
            key,
            default: key.default.and_then(|f| f()),
        });
        match key.ty {
            Ty::Table(inner) | Ty::TextOrTable(inner) => collect(&full, inner, out),
            Ty::Tables(inner) => collect(&format!("{full}[]"), inner, out),
            Ty::Named(inner) => collect(&format!("{full}.<name>"), inner, out),
            _ => {}
        }
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// The reference as Markdown.
pub fn markdown() -> String {
    let mut md = String::from(
        "<!-- Generated from the section declarations in crates/pitchside-core/src/config/ by\n     \
         `pitchside check-config --reference > docs/src/reference/config-keys.md`.\n     \
         Do not edit: a test fails when this file and the declarations differ. -->\n\n\
         # Configuration keys\n\n\
         Every key of the venue config file, section by section. A key that is not\n\
         written takes its default; `pitchside check-config --config FILE` prints the\n\
         whole effective configuration, every default filled in. Durations are strings\n\
         such as `\"30s\"` (ms, s, m, h, d); sizes are strings such as `\"256MiB\"`\n\
         (B, KiB, MiB, GiB).\n\n\
         ## Sections\n\n",
    );
    table(&mut md, ROOT);
    let mut done: Vec<(String, Vec<&str>)> = Vec::new();
    sections("", ROOT, &mut md, &mut done);
    md
}

/// A heading and a table for every section below `path`; a section with
/// the same keys as one already written refers to it.
fn sections(
    path: &str,
    keys: &'static [Key],
    md: &mut String,
    done: &mut Vec<(String, Vec<&'static str>)>,
) {
    let mut entries_done = false;
    for key in Key::each(keys) {
        let full = join(path, key.name);
        let (heading, doc, inner, at) = match key.ty {
            Ty::Table(inner) => (format!("[{full}]"), key.doc_line(), inner, full),
            Ty::Tables(inner) => (
                format!("[[{full}]]"),
                key.doc_line(),
                inner,
                format!("{full}[]"),
            ),
            Ty::TextOrTable(inner) | Ty::Named(inner) if !entries_done => {
                // The entries of a map share their keys: one heading for all.
                entries_done = true;
                let (heading, at) = entry_heading(path, keys);
                let doc = "Each of these entries, written as a section instead of text, takes these keys.";
                (heading, doc.to_string(), inner, at)
            }
            _ => continue,
        };
        let names: Vec<&str> = Key::each(inner).map(|k| k.name).collect();
        let _ = write!(md, "\n## `{heading}`\n\n{doc}\n\n");
        if let Some((first, _)) = done.iter().find(|(_, n)| *n == names) {
            let _ = writeln!(md, "The same keys as `{first}`.");
            continue;
        }
        done.push((heading, names));
        table(md, inner);
        sections(&at, inner, md, done);
    }
}

/// The heading of the entries of a map (`path.{sensor, …, metrics.<name>} = { … }`)
/// and the path of their keys.
fn entry_heading(path: &str, keys: &'static [Key]) -> (String, String) {
    let names: Vec<String> = Key::each(keys)
        .filter_map(|k| match k.ty {
            Ty::TextOrTable(_) => Some(k.name.to_string()),
            Ty::Named(_) => Some(format!("{}.<name>", k.name)),
            _ => None,
        })
        .collect();
    (
        format!("{path}.{{{}}} = {{ … }}", names.join(", ")),
        format!("{path}.<entry>"),
    )
}

/// The table of one section's keys.
fn table(md: &mut String, keys: &'static [Key]) {
    md.push_str("| key | type | required | default | description |\n|---|---|---|---|---|\n");
    for key in Key::each(keys) {
        let default = match key.default.and_then(|f| f()) {
            _ if key.required => String::new(),
            Some(toml::Value::Table(_)) => "see below".into(),
            Some(v) => format!("`{v}`"),
            None => "unset".into(),
        };
        let _ = writeln!(
            md,
            "| `{}` | {} | {} | {} | {} |",
            key.name,
            words(key.ty),
            if key.required { "yes" } else { "no" },
            default,
            key.doc_line().replace('|', "\\|"),
        );
    }
}

/// What a key holds, in a few words.
fn words(ty: Ty) -> String {
    match ty {
        Ty::Text => "text".into(),
        Ty::Choice(names, _) => {
            let quoted: Vec<String> = names.iter().map(|n| format!("`\"{n}\"`")).collect();
            format!("one of {}", quoted.join(", "))
        }
        Ty::Duration => "duration".into(),
        Ty::Size => "size".into(),
        Ty::BytesOrSize => "bytes or size".into(),
        Ty::Whole(max) => format!("whole number, 0 to {max}"),
        Ty::Int => "whole number".into(),
        Ty::Number => "number".into(),
        Ty::Bool => "`true` or `false`".into(),
        Ty::Table(_) => "section".into(),
        Ty::Tables(_) => "list of sections".into(),
        Ty::TextList => "list of texts".into(),
        Ty::NumberList => "list of numbers".into(),
        Ty::IntList => "list of whole numbers".into(),
        Ty::Scalar => "text, number or `true`/`false`".into(),
        Ty::TextOrTable(_) => "text or section".into(),
        Ty::Named(_) => "named sections".into(),
        Ty::Flatten(_) => "keys of the section".into(),
    }
}

#[cfg(test)]
mod tests;
