//! Config values with units: durations (`"30s"`, `"1.5h"`) and sizes
//! (`"64MiB"`), with errors that name the accepted units.

use crate::model::Micros;

/// Splits `"1.5h"` into 1.5 and its unit's factor from `units`; errors name
/// the accepted units.
fn number_and_unit(s: &str, units: &[(&str, f64)], example: &str) -> Result<f64, String> {
    let s = s.trim();
    let names = units.iter().map(|u| u.0).collect::<Vec<_>>().join(", ");
    let split = s
        .find(|c: char| c.is_ascii_alphabetic())
        .ok_or_else(|| format!("{s:?} has no unit; use {names}, e.g. \"{example}\""))?;
    let (num, unit) = s.split_at(split);
    let factor = units
        .iter()
        .find(|u| u.0 == unit)
        .map(|u| u.1)
        .ok_or_else(|| format!("{s:?} has unknown unit {unit:?}; use {names}"))?;
    let n: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} does not start with a number"))?;
    if !n.is_finite() || n < 0.0 {
        return Err(format!("{s:?} must be a non-negative number and a unit"));
    }
    Ok(n * factor)
}

/// Parses a duration string: a number and a unit `ms`, `s`, `m`, `h` or `d`
/// (`"30s"`, `"1m"`, `"1.5h"`). Returns µs.
pub fn parse_duration(s: &str) -> Result<Micros, String> {
    let units = [
        ("ms", 1e3),
        ("s", 1e6),
        ("m", 60e6),
        ("h", 3600e6),
        ("d", 86_400e6),
    ];
    let us = number_and_unit(s, &units, "30s")?;
    if us > i64::MAX as f64 / 2.0 {
        return Err(format!("{:?} is too long", s.trim()));
    }
    Ok(us.round() as Micros)
}

/// Parses a size string with `B`, `KiB`, `MiB` or `GiB` (`"2GiB"`). Returns bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let units = [
        ("B", 1.0),
        ("KiB", 1024.0),
        ("MiB", 1048576.0),
        ("GiB", 1073741824.0),
    ];
    Ok(number_and_unit(s, &units, "64MiB")?.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_sizes_parse_with_units() {
        assert_eq!(parse_duration("30s").unwrap(), 30_000_000);
        assert_eq!(parse_duration("1m").unwrap(), 60_000_000);
        assert_eq!(parse_duration("250ms").unwrap(), 250_000);
        assert_eq!(parse_duration("1.5h").unwrap(), 5_400_000_000);
        assert!(parse_duration("30").is_err());
        assert!(parse_duration("30 sec").is_err());
        assert_eq!(parse_size("2GiB").unwrap(), 2 << 30);
        assert_eq!(parse_size("512KiB").unwrap(), 512 << 10);
        assert!(parse_size("2GB").is_err());
    }
}
