//! Record timestamps: the one parser every stage uses.
//!
//! Claude Code writes RFC 3339 timestamps (`2026-02-11T21:29:00.366Z`); Codex writes the same
//! form. Parsing them in one place keeps every stage in agreement about what a timestamp means
//! (a replay's pacing, the session model's idle timers, a script's `ev.ts`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ::time::OffsetDateTime;

/// An RFC 3339 timestamp (any offset, with or without fractional seconds), `None` when it is
/// not one.
pub fn parse_timestamp(ts: &str) -> Option<SystemTime> {
    let ms = parse_timestamp_ms(ts)?;
    let magnitude = Duration::from_millis(ms.unsigned_abs());
    if ms >= 0 {
        UNIX_EPOCH.checked_add(magnitude)
    } else {
        UNIX_EPOCH.checked_sub(magnitude)
    }
}

/// [`parse_timestamp`] as milliseconds since the Unix epoch (negative before it): the one
/// parser of record timestamps. `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, `t`/`z` and a
/// space for the `T` accepted as RFC 3339 allows; a fraction past milliseconds is cut.
/// Hand-written for speed (a replay paces every event by it); checked against the `time`
/// crate's RFC 3339 parser on arbitrary timestamps.
pub fn parse_timestamp_ms(ts: &str) -> Option<i64> {
    let ts = ts.trim();
    let bytes = ts.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = bytes.get(range)?;
        part.iter().all(u8::is_ascii_digit).then(|| {
            part.iter()
                .fold(0i64, |n, digit| n * 10 + i64::from(digit - b'0'))
        })
    };
    let separator = |at: usize, allowed: &[u8]| bytes.get(at).is_some_and(|b| allowed.contains(b));
    if !(separator(4, b"-")
        && separator(7, b"-")
        && separator(10, b"Tt ")
        && separator(13, b":")
        && separator(16, b":"))
    {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &bytes[19..];
    let mut millis = 0i64;
    if let Some(fraction) = rest.strip_prefix(b".") {
        let count = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if count == 0 {
            return None;
        }
        millis = fraction[..count.min(3)]
            .iter()
            .chain(std::iter::repeat(&b'0'))
            .take(3)
            .fold(0, |n, digit| n * 10 + i64::from(digit - b'0'));
        rest = &fraction[count..];
    }
    let offset_minutes = match rest {
        b"Z" | b"z" => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let number = |high: u8, low: u8| -> Option<i64> {
                (high.is_ascii_digit() && low.is_ascii_digit())
                    .then(|| i64::from(high - b'0') * 10 + i64::from(low - b'0'))
            };
            let (hours, minutes) = (number(*h1, *h2)?, number(*m1, *m2)?);
            if hours > 23 || minutes > 59 {
                return None;
            }
            let sign = if *sign == b'-' { -1 } else { 1 };
            sign * (hours * 60 + minutes)
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let (y, m) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    // A leap second reads as the second after (as `time` reads 23:59:60).
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Milliseconds since the Unix epoch (negative before it).
pub fn to_unix_ms(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// `time` as RFC 3339 in UTC with milliseconds, the form Claude Code writes.
/// A time outside years 0 to 9999 (a sessions file may say anything) reads as the nearest end
/// of that range: four-digit years, as the parser reads them, and never a panic.
pub fn format_timestamp(time: SystemTime) -> String {
    const FIRST: &str = "0000-01-01T00:00:00.000Z";
    const LAST: &str = "9999-12-31T23:59:59.999Z";
    let utc = match time.duration_since(UNIX_EPOCH) {
        Ok(after) => ::time::Duration::try_from(after)
            .ok()
            .and_then(|after| OffsetDateTime::UNIX_EPOCH.checked_add(after))
            .ok_or(LAST),
        Err(before) => ::time::Duration::try_from(before.duration())
            .ok()
            .and_then(|before| OffsetDateTime::UNIX_EPOCH.checked_sub(before))
            .ok_or(FIRST),
    };
    let utc = match utc {
        Ok(utc) if utc.year() > 9999 => return LAST.to_owned(),
        Ok(utc) if utc.year() < 0 => return FIRST.to_owned(),
        Ok(utc) => utc,
        Err(end) => return end.to_owned(),
    };
    let millis = utc.millisecond();
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        utc.year(),
        u8::from(utc.month()),
        utc.day(),
        utc.hour(),
        utc.minute(),
        utc.second()
    )
}

/// How long from `earlier` to `later`, zero when the clock went backwards.
pub fn elapsed(earlier: SystemTime, later: SystemTime) -> Duration {
    later.duration_since(earlier).unwrap_or_default()
}

/// A daily span of local time, `"HH:MM-HH:MM"`; it may wrap past midnight (`"22:00-07:00"`).
/// The start minute is inside, the end minute is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietHours {
    /// Minutes after midnight.
    pub start: u16,
    pub end: u16,
}

impl QuietHours {
    /// Whether `minute` (after midnight, local time) is inside the span.
    pub fn contains(&self, minute: u16) -> bool {
        if self.start <= self.end {
            (self.start..self.end).contains(&minute)
        } else {
            minute >= self.start || minute < self.end
        }
    }
}

impl std::str::FromStr for QuietHours {
    type Err = String;

    fn from_str(text: &str) -> Result<QuietHours, String> {
        let invalid = || format!("invalid quiet hours {text:?}; write e.g. \"22:00-07:00\"");
        let minute = |part: &str| -> Option<u16> {
            let (hours, minutes) = part.trim().split_once(':')?;
            let (hours, minutes): (u16, u16) = (hours.parse().ok()?, minutes.parse().ok()?);
            (hours < 24 && minutes < 60).then_some(hours * 60 + minutes)
        };
        let (start, end) = text.split_once('-').ok_or_else(invalid)?;
        let (Some(start), Some(end)) = (minute(start), minute(end)) else {
            return Err(invalid());
        };
        if start == end {
            return Err(format!(
                "quiet hours {text:?} are empty (start = end); to turn sound off write enabled = false"
            ));
        }
        Ok(QuietHours { start, end })
    }
}

impl std::fmt::Display for QuietHours {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:02}:{:02}-{:02}:{:02}",
            self.start / 60,
            self.start % 60,
            self.end / 60,
            self.end % 60
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `hook_input` fuzz target: a sessions file whose `statusUpdatedAt` is
    /// 569,000 years away panicked `familiar watch` in `time`'s conversion.
    #[test]
    fn regression_a_time_past_year_9999_formats_as_its_last_millisecond_without_a_panic() {
        let far = UNIX_EPOCH + Duration::from_millis(17_958_023_302_331_228);
        assert_eq!(format_timestamp(far), "9999-12-31T23:59:59.999Z");
        let farthest = UNIX_EPOCH + Duration::from_secs(u64::MAX / 4);
        assert_eq!(format_timestamp(farthest), "9999-12-31T23:59:59.999Z");
        let before = UNIX_EPOCH - Duration::from_secs(400_000_000_000);
        assert_eq!(format_timestamp(before), "0000-01-01T00:00:00.000Z");
        // What it writes, the parser reads.
        assert!(parse_timestamp("9999-12-31T23:59:59.999Z").is_some());
        let last = UNIX_EPOCH + Duration::from_millis(253_402_300_799_999);
        assert_eq!(format_timestamp(last), "9999-12-31T23:59:59.999Z");
    }

    #[test]
    fn claude_code_timestamps_parse() {
        let t = parse_timestamp("2025-12-12T13:35:17.472Z").expect("valid");
        assert_eq!(to_unix_ms(t), 1_765_546_517_472);
        let offset = parse_timestamp("2025-12-12T14:35:17.472+01:00").expect("valid");
        assert_eq!(offset, t);
        assert_eq!(format_timestamp(t), "2025-12-12T13:35:17.472Z");
        assert_eq!(parse_timestamp("not a time"), None);
        assert_eq!(to_unix_ms(UNIX_EPOCH - Duration::from_secs(1)), -1000);
        assert_eq!(parse_timestamp_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_timestamp_ms("1969-12-31T23:59:59.5Z"), Some(-500));
        assert_eq!(
            parse_timestamp_ms(" 2025-12-12 13:35:17.4729Z "),
            Some(1_765_546_517_472)
        );
        for bad in [
            "",
            "2025-12-12T13:35:17",
            "2025-02-30T00:00:00Z",
            "2025-12-12T24:00:00Z",
            "2025-12-12T13:35:17.Z",
            "2025-12-12T13:35:17+0100",
            "2025-12-12T13:35:17Zjunk",
            "2025/12/12T13:35:17Z",
        ] {
            assert_eq!(parse_timestamp_ms(bad), None, "{bad}");
        }
    }

    /// The hand-written parser means what the `time` crate's RFC 3339 parser means, on
    /// arbitrary dates, times, fractions and offsets.
    #[test]
    fn the_parser_agrees_with_the_time_crate() {
        use ::time::format_description::well_known::Rfc3339;
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        for _ in 0..20_000 {
            let fraction = match next(4) {
                0 => String::new(),
                1 => format!(".{:03}", next(1000)),
                2 => format!(".{}", next(10)),
                _ => format!(".{:06}", next(1_000_000)),
            };
            let offset = match next(3) {
                0 => "Z".to_owned(),
                _ => format!(
                    "{}{:02}:{:02}",
                    if next(2) == 0 { '+' } else { '-' },
                    next(24),
                    next(60)
                ),
            };
            let ts = format!(
                "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{fraction}{offset}",
                1900 + next(300),
                1 + next(13),
                1 + next(31),
                next(25),
                next(61),
                next(61),
            );
            let theirs = OffsetDateTime::parse(&ts, &Rfc3339)
                .ok()
                .map(|parsed| parsed.unix_timestamp_nanos().div_euclid(1_000_000) as i64);
            let theirs = theirs.filter(|_| !ts.contains(":60"));
            let ours = parse_timestamp_ms(&ts).filter(|_| !ts.contains(":60"));
            // Both at millisecond precision, a finer fraction cut (floored).
            assert_eq!(ours, theirs, "{ts}");
        }
    }
}
