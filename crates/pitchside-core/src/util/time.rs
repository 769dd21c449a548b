//! Timestamps: parsing and formatting without a calendar crate. Event times are RFC 3339 (`2026-11-29T19:30:00.250Z`) or epoch
//! milliseconds; everything internal is microseconds since the epoch, UTC.

use crate::model::Micros;

/// Microseconds in a second.
pub const MICROS_PER_SEC: i64 = 1_000_000;
/// Microseconds in a day.
pub const MICROS_PER_DAY: i64 = 86_400 * MICROS_PER_SEC;

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The (year, month, day) of a day number since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if is_leap(y) => 29,
        _ => 28,
    }
}

fn digits(b: &[u8]) -> Option<u32> {
    let mut v = 0u32;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
    }
    Some(v)
}

/// Parses an RFC 3339 timestamp with a `T` separator and a `Z` or `±HH:MM`
/// offset, 0–9 fraction digits (truncated to µs). Returns µs since the epoch.
pub fn parse_rfc3339(s: &str) -> Result<Micros, &'static str> {
    let b = s.as_bytes();
    if b.len() < 20 {
        return Err("too short for RFC 3339 (YYYY-MM-DDTHH:MM:SSZ)");
    }
    if b[4] != b'-' || b[7] != b'-' || b[13] != b':' || b[16] != b':' {
        return Err("expected YYYY-MM-DDTHH:MM:SS");
    }
    if b[10] != b'T' {
        return Err("expected 'T' between date and time");
    }
    let field = |r: std::ops::Range<usize>| digits(&b[r]).ok_or("non-digit in date or time");
    let year = field(0..4)? as i64;
    let month = field(5..7)?;
    let day = field(8..10)?;
    let hour = field(11..13)?;
    let minute = field(14..16)?;
    let second = field(17..19)?;
    if !(1..=12).contains(&month) {
        return Err("month out of range");
    }
    if day == 0 || day > days_in_month(year, month) {
        return Err("day out of range");
    }
    if hour > 23 || minute > 59 || second > 59 {
        return Err("time of day out of range");
    }
    let mut i = 19;
    let mut frac_us: i64 = 0;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let n = i - start;
        if n == 0 || n > 9 {
            return Err("fraction must have 1 to 9 digits");
        }
        for k in 0..6 {
            frac_us *= 10;
            if k < n {
                frac_us += (b[start + k] - b'0') as i64;
            }
        }
    }
    let offset_s: i64 = match &b[i..] {
        [b'Z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let oh = digits(&[*h1, *h2]).ok_or("non-digit in offset")?;
            let om = digits(&[*m1, *m2]).ok_or("non-digit in offset")?;
            if oh > 23 || om > 59 {
                return Err("offset out of range");
            }
            let o = (oh * 3600 + om * 60) as i64;
            if *sign == b'-' {
                -o
            } else {
                o
            }
        }
        _ => return Err("expected 'Z' or ±HH:MM offset"),
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + (hour * 3600 + minute * 60 + second) as i64 - offset_s;
    Ok(secs * MICROS_PER_SEC + frac_us)
}

/// Converts epoch milliseconds to µs; `None` on overflow.
pub fn millis_to_micros(ms: i64) -> Option<Micros> {
    ms.checked_mul(1000)
}

/// `YYYY-MM-DD` of a timestamp (UTC), as used in the `date=` partition.
pub fn format_date(t: Micros) -> String {
    let (y, m, d) = civil_from_days(t.div_euclid(MICROS_PER_DAY));
    format!("{y:04}-{m:02}-{d:02}")
}

/// RFC 3339 with microseconds and `Z`, for logs and JSON output.
pub fn format_rfc3339(t: Micros) -> String {
    let days = t.div_euclid(MICROS_PER_DAY);
    let rem = t.rem_euclid(MICROS_PER_DAY);
    let (y, m, d) = civil_from_days(days);
    let secs = rem / MICROS_PER_SEC;
    let us = rem % MICROS_PER_SEC;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{us:06}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The wall clock, µs since the epoch.
pub fn now_micros() -> Micros {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_micros() as Micros,
        // A clock before 1970 is as wrong as a clock can be; call it the epoch.
        Err(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_with_fraction_and_zulu_parses_to_micros() {
        let t = parse_rfc3339("2026-11-29T19:30:00.250Z").unwrap();
        assert_eq!(format_rfc3339(t), "2026-11-29T19:30:00.250000Z");
    }

    #[test]
    fn nine_fraction_digits_are_truncated_not_rounded() {
        let a = parse_rfc3339("2026-01-01T00:00:00.123456999Z").unwrap();
        let b = parse_rfc3339("2026-01-01T00:00:00.123456Z").unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn offsets_shift_to_utc() {
        let a = parse_rfc3339("2026-11-29T21:00:00+05:30").unwrap();
        let b = parse_rfc3339("2026-11-29T15:30:00Z").unwrap();
        assert_eq!(a, b);
        let c = parse_rfc3339("2026-11-29T10:30:00-05:00").unwrap();
        assert_eq!(c, b);
    }

    #[test]
    fn malformed_timestamps_are_refused() {
        for s in [
            "2026-11-29 19:30:00Z",
            "2026-11-29T19:30:00",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-29T24:00:00Z",
            "2026-11-29T19:30:00.Z",
            "2026-11-29T19:30:00.1234567890Z",
            "2026-11-29T19:30:00+5:30",
            "2026-11-29T19:30:00z",
            "２026-11-29T19:30:00Z",
        ] {
            assert!(parse_rfc3339(s).is_err(), "{s} should be refused");
        }
        assert!(parse_rfc3339("2024-02-29T00:00:00Z").is_ok());
    }

    #[test]
    fn civil_round_trips_over_centuries() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(-1), "1969-12-31");
    }
}
