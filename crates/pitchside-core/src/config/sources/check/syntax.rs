//! A source's format keys: the format's name, the regex pattern (bounded
//! in length and compiled size), the CSV columns, header and delimiter.

use super::{MAX_PATTERN_BYTES, MAX_PATTERN_SIZE};
use crate::config::error::Problems;
use crate::config::sources::format::Syntax;
use crate::config::sources::input::InputSection;

/// The format's syntax, with its own keys checked.
pub(super) fn syntax(
    format: &str,
    input: &InputSection,
    key: &str,
    p: &mut Problems,
) -> Option<Syntax> {
    let only = |name: &str, set: bool, for_format: &str, p: &mut Problems| {
        p.check(!set || format == for_format, || {
            format!("{key}.{name}: only for format \"{for_format}\", not {format:?}")
        })
    };
    only("pattern", input.pattern.is_some(), "regex", p);
    only("columns", input.columns.is_some(), "csv", p);
    only("header", input.header.is_some(), "csv", p);
    only("delimiter", input.delimiter.is_some(), "csv", p);
    Some(match format {
        "json" => Syntax::Json,
        "logfmt" => Syntax::Logfmt,
        "influx" => Syntax::Influx,
        "regex" => Syntax::Regex(regex(input.pattern.as_deref(), key, p)?),
        "csv" => csv(input, key, p)?,
        other => {
            p.push(format!(
                "{key}.format: {other:?} must be pitchside, json, csv, regex, logfmt or influx"
            ));
            return None;
        }
    })
}

fn regex(pattern: Option<&str>, key: &str, p: &mut Problems) -> Option<regex::Regex> {
    let Some(pattern) = pattern else {
        p.push(format!("{key}.pattern: format \"regex\" needs a pattern with named captures such as (?P<db>[0-9.]+)"));
        return None;
    };
    if pattern.len() > MAX_PATTERN_BYTES {
        p.push(format!(
            "{key}.pattern: {} bytes, at most {MAX_PATTERN_BYTES}",
            pattern.len()
        ));
        return None;
    }
    match regex::RegexBuilder::new(pattern)
        .size_limit(MAX_PATTERN_SIZE)
        .dfa_size_limit(MAX_PATTERN_SIZE)
        .build()
    {
        Ok(r) if r.capture_names().flatten().next().is_some() => Some(r),
        Ok(_) => {
            p.push(format!("{key}.pattern: has no named capture; name what the map uses, as in (?P<db>[0-9.]+)"));
            None
        }
        Err(e) => {
            p.push(format!(
                "{key}.pattern: not a valid regular expression: {e}"
            ));
            None
        }
    }
}

fn csv(input: &InputSection, key: &str, p: &mut Problems) -> Option<Syntax> {
    let delimiter = match input.delimiter.as_deref().unwrap_or(",") {
        "\\t" => b'\t',
        d if d.len() == 1 && d.is_ascii() && !matches!(d, "\"" | "\n" | "\r") => d.as_bytes()[0],
        d => {
            p.push(format!("{key}.delimiter: {d:?} must be one ASCII character other than a quote or a newline (\"\\t\" for a tab)"));
            return None;
        }
    };
    let header = input.header.unwrap_or(false);
    let columns = input.columns.clone().unwrap_or_default();
    match (header, columns.is_empty()) {
        (true, false) => p.push(format!(
            "{key}: columns and header = true are exclusive; keep one"
        )),
        (false, true) => p.push(format!(
            "{key}.columns: format \"csv\" needs columns = [\"…\", …] or header = true"
        )),
        _ => {}
    }
    for (i, c) in columns.iter().enumerate() {
        p.check(!c.is_empty() && !columns[..i].contains(c), || {
            format!("{key}.columns: {c:?} is empty or named twice")
        });
    }
    Some(Syntax::Csv {
        columns,
        header,
        delimiter,
    })
}
