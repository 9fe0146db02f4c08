//! Record timestamps: the one parser every stage uses.
//!
//! Claude Code writes RFC 3339 timestamps (`2026-02-11T21:29:00.366Z`); Codex writes the same
//! form. Parsing them in one place keeps every stage in agreement about what a timestamp means
//! (a replay's pacing, the session model's idle timers, a script's `ev.ts`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ::time::OffsetDateTime;
use ::time::format_description::well_known::Rfc3339;

/// An RFC 3339 timestamp (any offset, with or without fractional seconds), `None` when it is
/// not one.
pub fn parse_timestamp(ts: &str) -> Option<SystemTime> {
    let parsed = OffsetDateTime::parse(ts.trim(), &Rfc3339).ok()?;
    Some(SystemTime::from(parsed))
}

/// Milliseconds since the Unix epoch (negative before it).
pub fn to_unix_ms(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_millis()).unwrap_or(i64::MAX),
        Err(before) => -i64::try_from(before.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// `time` as RFC 3339 in UTC with milliseconds, the form Claude Code writes.
pub fn format_timestamp(time: SystemTime) -> String {
    let utc = OffsetDateTime::from(time);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_timestamps_parse() {
        let t = parse_timestamp("2025-12-12T13:35:17.472Z").expect("valid");
        assert_eq!(to_unix_ms(t), 1_765_546_517_472);
        let offset = parse_timestamp("2025-12-12T14:35:17.472+01:00").expect("valid");
        assert_eq!(offset, t);
        assert_eq!(format_timestamp(t), "2025-12-12T13:35:17.472Z");
        assert_eq!(parse_timestamp("not a time"), None);
        assert_eq!(to_unix_ms(UNIX_EPOCH - Duration::from_secs(1)), -1000);
    }
}
