//! A mapped value as the event needs it: text, a whole number, a finite
//! number or a time. Device formats are lenient where devices are: a
//! number written as text (`"151"`, CSV cells, captures) is a number. What
//! cannot be converted is `unmapped`, except where SPEC §1 has a reason
//! (`non_finite`, `out_of_range`, `invalid_time`).

use super::record::Value;
use crate::config::sources::format::{TimeFormat, EPOCH_NS};
use crate::model::{Micros, Reject, RejectReason};
use crate::util::time::parse_rfc3339;
use std::borrow::Cow;
use std::fmt::Display;

fn unmapped(detail: String) -> Reject {
    Reject::new(RejectReason::Unmapped, detail)
}

/// Text (an id, a name, a sensor kind): strings as they are, numbers as
/// written.
pub fn text<'a>(v: Value<'a>, what: &dyn Display) -> Result<Cow<'a, str>, Reject> {
    match v {
        Value::Text(t) => Ok(t),
        Value::NumText(t) => Ok(Cow::Borrowed(t)),
        Value::Int(i) => Ok(Cow::Owned(i.to_string())),
        v => Err(unmapped(format!("{what} is {}, not text", v.type_name()))),
    }
}

/// A whole number.
pub fn int(v: Value<'_>, what: &dyn Display) -> Result<i64, Reject> {
    let t = match v {
        Value::Int(i) => return Ok(i),
        Value::Num(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => return Ok(f as i64),
        Value::Text(ref t) => t.trim(),
        Value::NumText(t) => t,
        v => {
            return Err(unmapped(format!(
                "{what} is {}, not a whole number",
                v.type_name()
            )))
        }
    };
    t.parse::<i64>()
        .map_err(|_| unmapped(format!("{what} {t:?} is not a whole number")))
}

/// A finite number. NaN and infinities are `non_finite`, numbers beyond a
/// 64-bit float `out_of_range`, as in SPEC §1.
pub fn number(v: Value<'_>, what: &dyn Display) -> Result<f64, Reject> {
    let (x, t) = match v {
        Value::Num(f) => (f, None),
        Value::Int(i) => (i as f64, None),
        Value::NumText(t) => (t.parse::<f64>().unwrap_or(f64::INFINITY), Some(t)),
        Value::Text(ref t) => {
            let t = t.trim();
            match t.parse::<f64>() {
                // "NaN", "inf", "infinity" parse; "1e999" is infinite too but out of range.
                Ok(x)
                    if x.is_nan()
                        || (x.is_infinite() && t.bytes().any(|c| matches!(c, b'i' | b'I'))) =>
                {
                    return Err(Reject::new(
                        RejectReason::NonFinite,
                        format!("{what} is {t}; only finite numbers are accepted"),
                    ))
                }
                Ok(x) => (x, Some(t)),
                Err(_) => return Err(unmapped(format!("{what} {t:?} is not a number"))),
            }
        }
        Value::NonFinite(t) => {
            return Err(Reject::new(
                RejectReason::NonFinite,
                format!("{what} is {t}; only finite numbers are accepted"),
            ))
        }
        v => {
            return Err(unmapped(format!(
                "{what} is {}, not a number",
                v.type_name()
            )))
        }
    };
    if x.is_finite() {
        Ok(x)
    } else {
        Err(Reject::new(
            RejectReason::OutOfRange,
            format!(
                "{what} {} is outside the range of a 64-bit float",
                t.map_or_else(|| x.to_string(), str::to_string)
            ),
        ))
    }
}

fn invalid_time(detail: String) -> Reject {
    Reject::new(RejectReason::InvalidTime, detail)
}

/// An event time in `format`.
pub fn time(v: Value<'_>, format: &TimeFormat, what: &dyn Display) -> Result<Micros, Reject> {
    match format {
        TimeFormat::Default => match v {
            Value::Text(t) => rfc3339(&t, what),
            v => epoch(v, 1_000, "epoch_ms", what),
        },
        TimeFormat::Rfc3339 => rfc3339(&text(v, what)?, what),
        TimeFormat::Epoch(unit) => {
            let name = match *unit {
                1_000_000 => "epoch_s",
                1_000 => "epoch_ms",
                1 => "epoch_us",
                _ => "epoch_ns",
            };
            epoch(v, *unit, name, what)
        }
        TimeFormat::Pattern(p, offset) => {
            let t = text(v, what)?;
            p.apply(t.trim(), *offset).map_err(|why| {
                invalid_time(format!(
                    "{what} {t:?} does not fit the time format: expected {why}"
                ))
            })
        }
    }
}

fn rfc3339(t: &str, what: &dyn Display) -> Result<Micros, Reject> {
    parse_rfc3339(t.trim())
        .map_err(|why| invalid_time(format!("{what} {t:?} is not RFC 3339: {why}")))
}

/// A number of `unit` µs (or ns, [`EPOCH_NS`]) since the epoch; whole or
/// with a fraction (truncated to µs).
fn epoch(v: Value<'_>, unit: Micros, name: &str, what: &dyn Display) -> Result<Micros, Reject> {
    let bad = |t: &str| invalid_time(format!("{what} {t:?} is not a time in {name}"));
    let whole = match &v {
        Value::Int(i) => Some(*i),
        Value::Text(t) => t.trim().parse::<i64>().ok(),
        Value::NumText(t) => t.parse::<i64>().ok(),
        _ => None,
    };
    let scaled = match whole {
        Some(n) if unit == EPOCH_NS => Some(n.div_euclid(1_000)),
        Some(n) => n.checked_mul(unit),
        None => {
            let x = number(v.clone(), what).map_err(|_| bad(&display(&v)))?;
            let us = if unit == EPOCH_NS {
                x / 1_000.0
            } else {
                x * unit as f64
            };
            (us.abs() < 9.0e18).then(|| us.floor() as i64)
        }
    };
    scaled.ok_or_else(|| invalid_time(format!("{what} {} is out of range for {name}", display(&v))))
}

fn display(v: &Value<'_>) -> String {
    match v {
        Value::Text(t) => t.to_string(),
        Value::NumText(t) | Value::NonFinite(t) => t.to_string(),
        Value::Num(f) => f.to_string(),
        Value::Int(i) => i.to_string(),
        v => v.type_name().to_string(),
    }
}
