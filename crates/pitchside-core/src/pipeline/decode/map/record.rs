//! One input parsed in its device format, and the lookup of a map's field
//! in it: a JSON Pointer, a CSV column, a regex capture, a logfmt key, an
//! influx tag or field. Values borrow from the input.

use super::super::formats::influx::{FieldValue, Point};
use super::super::json::{JsonValue, Root};
use crate::config::sources::format::FieldRef;
use std::borrow::Cow;

/// A value found in an input, before the map converts it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// Text: a string, or any value of an untyped format (CSV, regex, logfmt).
    Text(Cow<'a, str>),
    /// A JSON number, as its text.
    NumText(&'a str),
    /// A number.
    Num(f64),
    /// A whole number.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// JSON `null`.
    Null,
    /// `NaN`, `Infinity`, `-Infinity` in JSON.
    NonFinite(&'a str),
    /// A JSON object or array where a value was expected: its type.
    Nested(&'static str),
}

impl Value<'_> {
    /// A short name of the value's type, for reject details.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Text(_) => "text",
            Value::NumText(_) | Value::Num(_) | Value::Int(_) => "a number",
            Value::Bool(_) => "a boolean",
            Value::Null => "null",
            Value::NonFinite(_) => "a non-finite number",
            Value::Nested(t) => t,
        }
    }
}

impl<'a> From<JsonValue<'a>> for Value<'a> {
    fn from(v: JsonValue<'a>) -> Value<'a> {
        match v {
            JsonValue::Null => Value::Null,
            JsonValue::Bool(b) => Value::Bool(b),
            JsonValue::Str(s) => Value::Text(s),
            JsonValue::Num(t) => Value::NumText(t.text()),
            JsonValue::NonFinite(t) => Value::NonFinite(t),
            v @ (JsonValue::Object(_) | JsonValue::Array(_)) => Value::Nested(v.type_name()),
        }
    }
}

/// One parsed input.
pub enum Record<'a, 'b> {
    /// A JSON document.
    Json(Root<'a>),
    /// CSV cells; `names` are the header's columns (`header = true`), else
    /// fields carry their column index.
    Csv {
        /// The cells.
        cells: &'b [Cow<'a, str>],
        /// The columns learned from the header line.
        names: Option<&'b [String]>,
    },
    /// A regex match: the capture spans of `text`.
    Regex {
        /// The input.
        text: &'a str,
        /// The capture locations of the match.
        locations: &'b regex::CaptureLocations,
    },
    /// logfmt pairs (the last of a repeated key wins).
    Logfmt(&'b [(Cow<'a, str>, Cow<'a, str>)]),
    /// An influx point.
    Influx(Point<'a>),
}

impl<'a> Record<'a, '_> {
    /// The value of `field`; `Ok(None)` when the input does not have it, an
    /// error text when the input is malformed below the field (JSON).
    pub fn get(&self, field: &FieldRef) -> Result<Option<Value<'a>>, String> {
        Ok(match self {
            Record::Json(root) => match field.pointer.as_ref().map(|p| p.resolve(root)) {
                Some(Ok(v)) => v.map(Value::from),
                Some(Err(e)) => {
                    return Err(format!(
                        "{} is not valid JSON (at byte {}: expected {})",
                        field.text, e.at, e.what
                    ))
                }
                None => None,
            },
            Record::Csv { cells, names } => {
                let index = match names {
                    Some(names) => names.iter().position(|n| *n == field.text),
                    None => field.index,
                };
                let cell = index.and_then(|i| cells.get(i));
                cell.map(|c| Value::Text(c.clone()))
            }
            Record::Regex { text, locations } => field
                .index
                .and_then(|i| locations.get(i))
                .and_then(|(s, e)| text.get(s..e))
                .map(|t| Value::Text(Cow::Borrowed(t))),
            Record::Logfmt(pairs) => pairs
                .iter()
                .rev()
                .find(|(k, _)| *k == field.text)
                .map(|(_, v)| Value::Text(v.clone())),
            Record::Influx(p) => influx(p, &field.text),
        })
    }
}

/// `measurement`, `time`, a tag or a field of a point (tags first).
fn influx<'a>(p: &Point<'a>, name: &str) -> Option<Value<'a>> {
    match name {
        "measurement" => return Some(Value::Text(p.measurement.clone())),
        "time" => return p.timestamp.map(Value::Int),
        _ => {}
    }
    if let Some((_, v)) = p.tags.iter().rev().find(|(k, _)| k == name) {
        return Some(Value::Text(v.clone()));
    }
    let (_, v) = p.fields.iter().rev().find(|(k, _)| k == name)?;
    Some(match v {
        FieldValue::Float(f) => Value::Num(*f),
        FieldValue::Int(i) => Value::Int(*i),
        FieldValue::UInt(u) => i64::try_from(*u).map_or(Value::Num(*u as f64), Value::Int),
        FieldValue::Bool(b) => Value::Bool(*b),
        FieldValue::Str(s) => Value::Text(s.clone()),
    })
}
