//! Local-time patterns for device clocks (`"%d/%m/%Y %H:%M:%S"`), parsed
//! once at config time and matched against each input's text without
//! allocating. A device that prints local time without an offset gets a
//! fixed `utc_offset` from the config; the pattern itself never reads one.
//!
//! Directives: `%Y` (4-digit year), `%y` (2-digit year, 2000–2099), `%m`,
//! `%d`, `%H`, `%M`, `%S` (2 digits each; `%e` a day with a leading space
//! or 1–2 digits), `%j` (day of the year, 3 digits), `%b` (English month
//! abbreviation, any case), `%f` (1–9 fraction digits, truncated to µs),
//! `%%`. Every other character must match itself.

use crate::model::Micros;
use crate::util::time::{days_from_civil, MICROS_PER_SEC};

/// One piece of a pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    Literal(u8),
    Year4,
    Year2,
    Month,
    MonthName,
    Day,
    DaySpace,
    DayOfYear,
    Hour,
    Minute,
    Second,
    Fraction,
}

/// A checked pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimePattern {
    items: Vec<Item>,
}

/// Longest pattern accepted, in bytes.
pub const MAX_PATTERN: usize = 64;

const MONTHS: [&[u8; 3]; 12] = [
    b"jan", b"feb", b"mar", b"apr", b"may", b"jun", b"jul", b"aug", b"sep", b"oct", b"nov", b"dec",
];

impl TimePattern {
    /// Parses `pattern`; the error says which directive is wrong or what is
    /// missing (a pattern needs a date and an hour).
    pub fn parse(pattern: &str) -> Result<TimePattern, String> {
        if pattern.len() > MAX_PATTERN {
            return Err(format!("is longer than {MAX_PATTERN} bytes"));
        }
        let mut items = Vec::new();
        let mut b = pattern.bytes();
        while let Some(c) = b.next() {
            if c != b'%' {
                items.push(Item::Literal(c));
                continue;
            }
            items.push(match b.next() {
                Some(b'Y') => Item::Year4,
                Some(b'y') => Item::Year2,
                Some(b'm') => Item::Month,
                Some(b'b') => Item::MonthName,
                Some(b'd') => Item::Day,
                Some(b'e') => Item::DaySpace,
                Some(b'j') => Item::DayOfYear,
                Some(b'H') => Item::Hour,
                Some(b'M') => Item::Minute,
                Some(b'S') => Item::Second,
                Some(b'f') => Item::Fraction,
                Some(b'%') => Item::Literal(b'%'),
                Some(c) => {
                    return Err(format!(
                        "%{} is not a supported directive (%Y %y %m %b %d %e %j %H %M %S %f %%)",
                        c as char
                    ))
                }
                None => return Err("ends with a lone %".into()),
            });
        }
        let has = |f: &dyn Fn(&Item) -> bool| items.iter().any(f);
        let year = has(&|i| matches!(i, Item::Year4 | Item::Year2));
        let day_of_year = has(&|i| *i == Item::DayOfYear);
        let month_day = has(&|i| matches!(i, Item::Month | Item::MonthName))
            && has(&|i| matches!(i, Item::Day | Item::DaySpace));
        if !year || !(day_of_year || month_day) || !has(&|i| *i == Item::Hour) {
            return Err(
                "needs a year (%Y or %y), a month and day (%m/%b and %d) or %j, and an hour (%H)"
                    .into(),
            );
        }
        Ok(TimePattern { items })
    }

    /// The time `text` spells, as µs since the epoch, read as local time
    /// `offset_s` seconds east of UTC. The error names what did not match.
    pub fn apply(&self, text: &str, offset_s: i64) -> Result<Micros, &'static str> {
        let mut f = Parts::default();
        let mut s = text.as_bytes();
        for item in &self.items {
            s = f.take(item, s)?;
        }
        if !s.is_empty() {
            return Err("text left over after the pattern");
        }
        f.micros(offset_s)
    }
}

/// The fields read so far.
#[derive(Default)]
struct Parts {
    year: i64,
    month: u32,
    day: u32,
    day_of_year: u32,
    hour: u32,
    minute: u32,
    second: u32,
    micros: i64,
}

impl Parts {
    /// Reads `item` from the start of `s`; the rest of `s`.
    fn take<'a>(&mut self, item: &Item, s: &'a [u8]) -> Result<&'a [u8], &'static str> {
        Ok(match item {
            Item::Literal(c) => match s.split_first() {
                Some((x, rest)) if x == c => rest,
                _ => return Err("a separator of the pattern did not match"),
            },
            Item::Year4 => number(s, 4, 4, &mut self.year, "a 4-digit year (%Y)")?,
            Item::Year2 => {
                let rest = number(s, 2, 2, &mut self.year, "a 2-digit year (%y)")?;
                self.year += 2000;
                rest
            }
            Item::Month => number(s, 2, 2, &mut self.month, "a 2-digit month (%m)")?,
            Item::MonthName => {
                let (name, rest) = s.split_at_checked(3).ok_or("a month name (%b)")?;
                let lower = name.to_ascii_lowercase();
                let m = MONTHS.iter().position(|m| m[..] == lower[..]);
                self.month = m.ok_or("a month name such as Nov (%b)")? as u32 + 1;
                rest
            }
            Item::Day => number(s, 2, 2, &mut self.day, "a 2-digit day (%d)")?,
            Item::DaySpace => {
                let s = s.strip_prefix(b" ").unwrap_or(s);
                number(s, 1, 2, &mut self.day, "a day (%e)")?
            }
            Item::DayOfYear => number(s, 3, 3, &mut self.day_of_year, "a day of the year (%j)")?,
            Item::Hour => number(s, 2, 2, &mut self.hour, "a 2-digit hour (%H)")?,
            Item::Minute => number(s, 2, 2, &mut self.minute, "2-digit minutes (%M)")?,
            Item::Second => number(s, 2, 2, &mut self.second, "2-digit seconds (%S)")?,
            Item::Fraction => {
                let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
                if n == 0 || n > 9 {
                    return Err("1 to 9 fraction digits (%f)");
                }
                self.micros = s[..n.min(6)]
                    .iter()
                    .fold(0, |v, c| v * 10 + (c - b'0') as i64);
                self.micros *= 10i64.pow(6u32.saturating_sub(n as u32));
                &s[n..]
            }
        })
    }

    /// The instant, checked field by field.
    fn micros(&self, offset_s: i64) -> Result<Micros, &'static str> {
        let days = if self.day_of_year > 0 {
            let leap = days_from_civil(self.year + 1, 1, 1) - days_from_civil(self.year, 1, 1);
            if self.day_of_year as i64 > leap {
                return Err("day of the year out of range");
            }
            days_from_civil(self.year, 1, 1) + self.day_of_year as i64 - 1
        } else {
            if !(1..=12).contains(&self.month) {
                return Err("month out of range");
            }
            let next = if self.month == 12 {
                days_from_civil(self.year + 1, 1, 1)
            } else {
                days_from_civil(self.year, self.month + 1, 1)
            };
            let first = days_from_civil(self.year, self.month, 1);
            if self.day == 0 || self.day as i64 > next - first {
                return Err("day out of range");
            }
            first + self.day as i64 - 1
        };
        if self.hour > 23 || self.minute > 59 || self.second > 60 {
            return Err("time of day out of range");
        }
        let secs =
            days * 86_400 + (self.hour * 3600 + self.minute * 60) as i64 + self.second as i64
                - offset_s;
        Ok(secs * MICROS_PER_SEC + self.micros)
    }
}

/// Reads `min..=max` digits into `out`; the rest of `s`.
fn number<'a, T: From<u16>>(
    s: &'a [u8],
    min: usize,
    max: usize,
    out: &mut T,
    what: &'static str,
) -> Result<&'a [u8], &'static str> {
    let n = s
        .iter()
        .take(max)
        .take_while(|c| c.is_ascii_digit())
        .count();
    if n < min {
        return Err(what);
    }
    let v = s[..n].iter().fold(0u16, |v, c| v * 10 + (c - b'0') as u16);
    *out = T::from(v);
    Ok(&s[n..])
}

/// Parses a fixed offset `+05:30`, `-03:00` or `Z` into seconds east of UTC.
pub fn parse_utc_offset(s: &str) -> Result<i64, String> {
    if s == "Z" || s == "+00:00" {
        return Ok(0);
    }
    let b = s.as_bytes();
    let ok = b.len() == 6 && matches!(b[0], b'+' | b'-') && b[3] == b':';
    let digits = |r: std::ops::Range<usize>| s.get(r).and_then(|d| d.parse::<i64>().ok());
    match (ok, digits(1..3), digits(4..6)) {
        (true, Some(h), Some(m)) if h <= 23 && m <= 59 => {
            let o = h * 3600 + m * 60;
            Ok(if b[0] == b'-' { -o } else { o })
        }
        _ => Err(format!(
            "{s:?} must be an offset such as \"+05:30\" or \"-03:00\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::time::parse_rfc3339;

    fn at(p: &str, text: &str, offset: &str) -> Result<Micros, &'static str> {
        let off = parse_utc_offset(offset).unwrap();
        TimePattern::parse(p).unwrap().apply(text, off)
    }

    #[test]
    fn a_local_time_with_its_offset_is_the_utc_instant() {
        let t = at("%d/%m/%Y %H:%M:%S", "29/11/2026 19:30:05", "+05:30").unwrap();
        assert_eq!(t, parse_rfc3339("2026-11-29T14:00:05Z").unwrap());
        let t = at("%Y-%m-%d %H:%M:%S.%f", "2026-11-29 19:30:05.25", "-03:00").unwrap();
        assert_eq!(t, parse_rfc3339("2026-11-29T22:30:05.250Z").unwrap());
    }

    #[test]
    fn month_names_two_digit_years_and_day_of_year() {
        let want = parse_rfc3339("2026-11-29T19:30:00Z").unwrap();
        assert_eq!(at("%b %e %y %H:%M:%S", "NOV 29 26 19:30:00", "Z"), Ok(want));
        assert_eq!(at("%Y%j%H%M%S", "2026333193000", "Z"), Ok(want));
        assert_eq!(
            at("%b %e %Y %H:%M", "Nov  9 2026 19:30", "Z").map(|t| t / 1_000_000 % 86_400),
            Ok(70_200)
        );
    }

    #[test]
    fn what_does_not_match_is_named() {
        assert_eq!(
            at("%d/%m/%Y %H:%M", "29-11-2026 19:30", "Z"),
            Err("a separator of the pattern did not match")
        );
        assert_eq!(
            at("%d/%m/%Y %H:%M", "31/11/2026 19:30", "Z"),
            Err("day out of range")
        );
        assert_eq!(
            at("%d/%m/%Y %H:%M", "29/11/2026 19:30x", "Z"),
            Err("text left over after the pattern")
        );
        assert_eq!(
            at("%d/%m/%Y %H:%M", "29/11/26 19:30", "Z"),
            Err("a 4-digit year (%Y)")
        );
        assert_eq!(at("%d/%m/%Y %H:%M", "", "Z"), Err("a 2-digit day (%d)"));
    }

    #[test]
    fn patterns_without_a_date_or_with_unknown_directives_are_refused() {
        assert!(TimePattern::parse("%H:%M:%S")
            .unwrap_err()
            .contains("needs a year"));
        assert!(TimePattern::parse("%Y-%m-%d %H %Q")
            .unwrap_err()
            .contains("%Q is not"));
        assert!(TimePattern::parse("%Y-%m-%d %H%")
            .unwrap_err()
            .contains("lone %"));
        assert!(TimePattern::parse(&"%Y".repeat(40)).is_err());
    }

    #[test]
    fn offsets_parse_and_bad_ones_are_explained() {
        assert_eq!(parse_utc_offset("+05:30"), Ok(19_800));
        assert_eq!(parse_utc_offset("-03:00"), Ok(-10_800));
        assert_eq!(parse_utc_offset("Z"), Ok(0));
        for bad in ["+5:30", "05:30", "+24:00", "+05:60", "+0530", "IST"] {
            assert!(parse_utc_offset(bad).is_err(), "{bad}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_against_any_pattern_never_panics(p in "[%YymbdejHMSf/ :.-]{0,20}", t in "\\PC{0,40}") {
            if let Ok(p) = TimePattern::parse(&p) {
                let _ = p.apply(&t, 0);
            }
        }
    }
}
