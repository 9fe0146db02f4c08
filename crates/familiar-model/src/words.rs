//! How quantities and states read to people, in every place that shows them (the window's
//! plates, `familiar sessions`, `familiar statusline`, `familiar stats`): one wording, so a
//! user reads the same `1.25M` and `5h 12m` everywhere. Machine output (JSON, NDJSON) keeps
//! exact numbers and the status names of `docs/events.md`.

use std::time::Duration;

use crate::Status;

/// A token count at a glance: `950`, `45.2k`, `182k`, `1M`, `1.25M`.
pub fn tokens(n: u64) -> String {
    fn trim(text: String) -> String {
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_owned()
        } else {
            text
        }
    }
    match n {
        0..1_000 => n.to_string(),
        1_000..100_000 => trim(format!("{:.1}", n as f64 / 1e3)) + "k",
        100_000..1_000_000 => format!("{}k", n / 1000),
        _ => trim(format!("{:.2}", n as f64 / 1e6)) + "M",
    }
}

/// A size on disk at a glance, in decimal units as `du --si` and file managers show them:
/// `1 byte`, `950 bytes`, `45.2 kB`, `25.8 MB`, `5.1 GB`.
pub fn bytes(n: u64) -> String {
    let scaled = |unit: f64, name: &str| format!("{:.1} {name}", n as f64 / unit);
    match n {
        1 => "1 byte".to_owned(),
        0..1_000 => format!("{n} bytes"),
        // Where one decimal would round up to 1000, the next unit.
        1_000..999_950 => scaled(1e3, "kB"),
        999_950..999_950_000 => scaled(1e6, "MB"),
        _ => scaled(1e9, "GB"),
    }
}

/// A token count as people write it, the way [`tokens`] shows them: `1000000`, `200k`, `1M`,
/// `1.25M` (`k` and `M` in either case, `_` and `,` between digits ignored). `None` for
/// anything else, zero included.
pub fn parse_tokens(text: &str) -> Option<u64> {
    let text: String = text
        .trim()
        .chars()
        .filter(|c| !matches!(c, '_' | ','))
        .collect();
    let (number, scale) = match text.char_indices().last()? {
        (at, 'k' | 'K') => (&text[..at], 1_000.0),
        (at, 'm' | 'M') => (&text[..at], 1_000_000.0),
        _ => (text.as_str(), 1.0),
    };
    if number.is_empty() || !number.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let value = number.parse::<f64>().ok()? * scale;
    (value.is_finite() && value >= 1.0 && value <= u64::MAX as f64).then(|| value.round() as u64)
}

/// A context window as mana: what is *left* of it, everywhere it is shown (the window's
/// bar and label, `familiar sessions`, the status line): `152k left of 200k`, or
/// `? left of 200k` while the context is not known.
pub fn context_left(used: Option<u64>, limit: u64) -> String {
    match used {
        Some(used) => format!(
            "{} left of {}",
            tokens(limit.saturating_sub(used)),
            tokens(limit)
        ),
        None => format!("? left of {}", tokens(limit)),
    }
}

/// The share of the window left, in whole percent (rounded down, as a gauge empties),
/// `None` while the context is not known.
pub fn percent_left(used: Option<u64>, limit: u64) -> Option<u64> {
    let used = used?;
    (limit > 0).then(|| limit.saturating_sub(used) * 100 / limit)
}

/// A duration as people say it, two units at most: `42s`, `7m`, `5h 12m`, `3d 4h`, `40d`.
pub fn duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    let (days, hours, minutes) = (secs / 86_400, secs / 3_600 % 24, secs / 60 % 60);
    match secs {
        0..60 => format!("{secs}s"),
        60..3_600 => format!("{minutes}m"),
        3_600..86_400 if minutes == 0 => format!("{}h", secs / 3_600),
        3_600..86_400 => format!("{}h {minutes}m", secs / 3_600),
        _ if days >= 10 || hours == 0 => format!("{days}d"),
        _ => format!("{days}d {hours}h"),
    }
}

/// A session's status as people read it (the window's plate, `sessions`, the status line).
pub fn status(status: Status) -> &'static str {
    match status {
        Status::Unknown => "status unknown",
        Status::Working => "working",
        Status::WaitingForApproval => "needs approval",
        Status::WaitingForInput => "your turn",
        Status::Idle => "idle",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mana_is_what_is_left_of_the_window() {
        assert_eq!(context_left(Some(48_000), 200_000), "152k left of 200k");
        assert_eq!(context_left(None, 1_000_000), "? left of 1M");
        assert_eq!(context_left(Some(250_000), 200_000), "0 left of 200k");
        assert_eq!(percent_left(Some(161_000), 1_000_000), Some(83));
        assert_eq!(percent_left(None, 200_000), None);
        assert_eq!(percent_left(Some(5), 0), None);
    }

    #[test]
    fn token_counts_read_at_a_glance() {
        let read: Vec<String> = [
            950, 45_210, 34_010, 200_000, 1_000_000, 1_250_000, 2_000_000,
        ]
        .into_iter()
        .map(tokens)
        .collect();
        assert_eq!(read, ["950", "45.2k", "34k", "200k", "1M", "1.25M", "2M"]);
    }

    #[test]
    fn sizes_read_at_a_glance() {
        let read: Vec<String> = [
            0,
            1,
            950,
            45_210,
            999_949,
            999_950,
            25_812_000,
            5_100_000_000,
        ]
        .into_iter()
        .map(bytes)
        .collect();
        assert_eq!(
            read,
            [
                "0 bytes",
                "1 byte",
                "950 bytes",
                "45.2 kB",
                "999.9 kB",
                "1.0 MB",
                "25.8 MB",
                "5.1 GB"
            ]
        );
    }

    #[test]
    fn token_counts_are_read_as_they_are_written() {
        for (text, want) in [
            ("1M", Some(1_000_000)),
            ("1m", Some(1_000_000)),
            ("1.25M", Some(1_250_000)),
            ("200k", Some(200_000)),
            ("45.2k", Some(45_200)),
            ("1000000", Some(1_000_000)),
            ("1_000_000", Some(1_000_000)),
            (" 950 ", Some(950)),
            ("0", None),
            ("", None),
            ("M", None),
            ("-1M", None),
            ("1e6", None),
            ("lots", None),
        ] {
            assert_eq!(parse_tokens(text), want, "{text:?}");
        }
        // What `tokens` writes reads back.
        for n in [950, 45_200, 200_000, 1_000_000, 1_250_000] {
            assert_eq!(parse_tokens(&tokens(n)), Some(n));
        }
    }

    #[test]
    fn durations_read_as_people_say_them() {
        let read: Vec<String> = [0, 42, 60, 425, 3_600, 18_720, 86_400, 273_600, 23_752_800]
            .into_iter()
            .map(|secs| duration(Duration::from_secs(secs)))
            .collect();
        assert_eq!(
            read,
            [
                "0s", "42s", "1m", "7m", "1h", "5h 12m", "1d", "3d 4h", "274d"
            ]
        );
    }
}
