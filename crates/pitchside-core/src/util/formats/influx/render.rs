//! Writing a [`Point`] as one line of line protocol (no line break).

use super::{FieldValue, Part, Point};
use std::fmt::Write;

/// Writes `p` as line protocol with the escapes [`parse`](super::parse)
/// reads, so that parsing gives `p` back.
///
/// What line protocol cannot hold is written as near as it allows: trailing
/// backslashes of names are dropped (a name cannot end in one), tags with an
/// empty key or value are left out. A non-finite float is written as Rust
/// prints it (`NaN`, `inf`), which `parse` refuses. A measurement starting
/// with `#`, an empty name, control characters in names and a point without
/// fields are written as given and do not parse back.
pub fn render(p: &Point<'_>, out: &mut String) {
    escaped(&p.measurement, Part::Measurement, out);
    for (key, value) in &p.tags {
        if key.trim_end_matches('\\').is_empty() || value.trim_end_matches('\\').is_empty() {
            continue;
        }
        out.push(',');
        escaped(key, Part::Key, out);
        out.push('=');
        escaped(value, Part::Key, out);
    }
    out.push(' ');
    for (n, (key, value)) in p.fields.iter().enumerate() {
        if n > 0 {
            out.push(',');
        }
        escaped(key, Part::Key, out);
        out.push('=');
        field_value(value, out);
    }
    if let Some(t) = p.timestamp {
        // Writing to a String cannot fail.
        let _ = write!(out, " {t}");
    }
}

/// Writes a name with a backslash before each byte that would end it.
fn escaped(name: &str, part: Part, out: &mut String) {
    for c in name.trim_end_matches('\\').chars() {
        if c.is_ascii() && part.ends_at(c as u8) {
            out.push('\\');
        }
        out.push(c);
    }
}

/// Writes a field value: the shortest float text that reads back the same
/// (with an exponent when very large or small),
/// `i`/`u` suffixes, `true`/`false`, strings in quotes.
fn field_value(value: &FieldValue<'_>, out: &mut String) {
    // Writing to a String cannot fail.
    let _ = match value {
        FieldValue::Float(x) if *x == 0.0 || (1e-5..1e16).contains(&x.abs()) => write!(out, "{x}"),
        FieldValue::Float(x) => write!(out, "{x:e}"),
        FieldValue::Int(n) => write!(out, "{n}i"),
        FieldValue::UInt(n) => write!(out, "{n}u"),
        FieldValue::Bool(b) => write!(out, "{b}"),
        FieldValue::Str(s) => {
            out.push('"');
            for c in s.chars() {
                if c == '"' || c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push('"');
            Ok(())
        }
    };
}
