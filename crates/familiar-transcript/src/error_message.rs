//! A sentence a person reads at a glance for an `api` error event: the `message` field the
//! normalizer ([`crate::normalize`]) sets beside the CLI's own `text`, which older Claude Code
//! versions write as `API Error: 500 {"type":"error",...}` (Anthropic's JSON error body).
//! Notifications (`scripts/notify-errors.rhai`) show this sentence; `text` stays as written.
//! The Codex reader (`crate::codex`) builds its own sentence with the same line helpers.

use familiar_model::Event;
use serde::Deserialize;

/// Longest message, in bytes: one notification line.
const MAX: usize = 300;

/// The readable sentence for an `api` error event whose `text`, `error_code`, `cause` and
/// retry fields are already set.
pub fn api_error(event: &Event) -> String {
    let text = event.text.as_deref().unwrap_or("").trim();
    let mut message = if let Some(code) = event.cause.as_deref().filter(|_| !has_status(text)) {
        // A request that never got an answer (`system`/`api_error`: `cause.code`).
        format!("Cannot reach the API ({})", words(code))
    } else if event.retry_attempt.is_some() && has_status(text) {
        // stream-json `api_retry` ("429 rate_limit") or a retried `system`/`api_error`.
        let (status, rest) = text.split_at(3);
        match rest.trim() {
            "" => format!("The API answered {status}"),
            rest => format!("The API answered {status} ({})", words(rest)),
        }
    } else {
        answer(text, event.error_code.as_deref())
    };
    if let (Some(attempt), Some(max)) = (event.retry_attempt, event.max_retries) {
        message.push_str(&format!("; retry {attempt} of {max}"));
    }
    one_line(&message)
}

/// The short code of an HTTP status an API answered with, as `error_code` names it
/// (`docs/events.md`): `rate_limit` for 429, `server_error` for 5xx (529, "overloaded",
/// included: Claude Code's own `error` field says `server_error` for it); `None` otherwise.
pub fn code_of_status(status: u64) -> Option<String> {
    match status {
        429 => Some("rate_limit".to_owned()),
        500..=599 => Some("server_error".to_owned()),
        _ => None,
    }
}

/// The CLI's final message for a failed request: `API Error: STATUS {json}`,
/// `API Error: STATUS Sentence. More.`, `API Error: Request rejected (429) · …` or a plain
/// sentence ("You've hit your session limit · resets 11:30am").
fn answer(text: &str, code: Option<&str>) -> String {
    let rest = text
        .strip_prefix("API Error:")
        .map_or(text, str::trim_start);
    if !has_status(rest) {
        return match (rest, code) {
            ("", Some(code)) => run_end(code),
            ("", None) => "The API request failed".to_owned(),
            (rest, Some(code)) if rest == code => run_end(code),
            (rest, _) => capitalized(rest),
        };
    }
    let (status, body) = rest.split_at(3);
    let body = body.trim_start();
    if body.starts_with('{') {
        #[derive(Deserialize)]
        struct Body {
            error: Detail,
        }
        #[derive(Deserialize)]
        struct Detail {
            message: Option<String>,
        }
        if let Ok(Body { error }) = serde_json::from_str::<Body>(body) {
            let what = error
                .message
                .unwrap_or_else(|| "The API request failed".to_owned());
            let mut sentence = format!(
                "{} (HTTP {status})",
                capitalized(what.trim_end_matches('.'))
            );
            if status.starts_with('5') {
                // Anthropic's 500 and 529 (overloaded): its side, not the user's.
                sentence.push_str(": a server-side issue, usually temporary");
            }
            return sentence;
        }
    }
    // Claude Code 2.x: "529 Overloaded. This is a server-side issue, usually temporary — ...".
    match body.split_once(". ") {
        Some((first, more)) => format!("{} (HTTP {status}). {more}", capitalized(first)),
        None if body.is_empty() => format!("The API answered {status}"),
        None => format!(
            "{} (HTTP {status})",
            capitalized(body.trim_end_matches('.'))
        ),
    }
}

/// A stream-json `result` that ended the run on its own terms (`error_max_turns`, ...).
fn run_end(code: &str) -> String {
    match code {
        "error_max_turns" => "The run stopped: it reached its maximum number of turns".to_owned(),
        "error_during_execution" => "The run failed during execution".to_owned(),
        code => format!("The run ended with an error ({})", words(code)),
    }
}

/// Starts with an HTTP status: three digits, then the end or a space.
fn has_status(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len() >= 3
        && bytes[..3].iter().all(u8::is_ascii_digit)
        && bytes.get(3).is_none_or(|b| *b == b' ')
}

/// `ConnectionRefused` → "connection refused", `rate_limit` → "rate limit"; codes in capitals
/// (`ECONNRESET`) stay as they are.
pub(crate) fn words(code: &str) -> String {
    if code.chars().all(|c| !c.is_lowercase()) {
        return code.replace('_', " ");
    }
    let mut out = String::with_capacity(code.len() + 4);
    for (i, c) in code.chars().enumerate() {
        if c == '_' {
            out.push(' ');
        } else if c.is_uppercase() {
            if i > 0 && !out.ends_with(' ') {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// One line, at most [`MAX`] bytes (cut at a character boundary, with an ellipsis).
pub(crate) fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.len() <= MAX {
        return line;
    }
    let mut end = MAX - '…'.len_utf8();
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &line[..end])
}

#[cfg(test)]
mod tests {
    use familiar_model::{ErrorKind, EventKind};

    use super::*;

    fn event(text: &str) -> Event {
        let mut event = Event::new(EventKind::Error, 1);
        event.error = Some(ErrorKind::Api);
        event.text = Some(text.to_owned());
        event
    }

    #[test]
    fn json_body_of_an_old_cli_becomes_its_message_and_status() {
        let ev = event(
            r#"API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"},"request_id":"req_011CYV7D8i4vdbhUksAbiNWA"}"#,
        );
        assert_eq!(
            api_error(&ev),
            "Internal server error (HTTP 500): a server-side issue, usually temporary"
        );
        let ev = event(
            r#"API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201000 tokens > 200000 maximum"}}"#,
        );
        assert_eq!(
            api_error(&ev),
            "Prompt is too long: 201000 tokens > 200000 maximum (HTTP 400)"
        );
    }

    #[test]
    fn sentences_of_a_new_cli_keep_their_words() {
        let ev = event(
            "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.",
        );
        assert_eq!(
            api_error(&ev),
            "Overloaded (HTTP 529). This is a server-side issue, usually temporary — try again in a moment."
        );
        assert_eq!(
            api_error(&event("API Error: Request rejected (429) · mock")),
            "Request rejected (429) · mock"
        );
        assert_eq!(
            api_error(&event(
                "You've hit your session limit · resets 11:30am (Europe/Berlin)"
            )),
            "You've hit your session limit · resets 11:30am (Europe/Berlin)"
        );
    }

    #[test]
    fn retries_say_which_attempt() {
        let mut ev = event("ConnectionRefused");
        ev.cause = Some("ConnectionRefused".into());
        ev.retry_attempt = Some(1);
        ev.max_retries = Some(10);
        assert_eq!(
            api_error(&ev),
            "Cannot reach the API (connection refused); retry 1 of 10"
        );
        let mut ev = event("429 rate_limit");
        ev.error_code = Some("rate_limit".into());
        ev.retry_attempt = Some(2);
        ev.max_retries = Some(10);
        assert_eq!(
            api_error(&ev),
            "The API answered 429 (rate limit); retry 2 of 10"
        );
    }

    #[test]
    fn a_run_that_ended_on_its_own_terms_says_why() {
        let mut ev = event("error_max_turns");
        ev.error_code = Some("error_max_turns".into());
        assert_eq!(
            api_error(&ev),
            "The run stopped: it reached its maximum number of turns"
        );
    }

    #[test]
    fn a_huge_multiline_text_gives_one_short_line() {
        let ev = event(&format!(
            "API Error: 500 first\nsecond {}",
            "é".repeat(1000)
        ));
        let message = api_error(&ev);
        assert!(!message.contains('\n'));
        assert!(message.len() <= MAX, "{}", message.len());
        assert!(message.starts_with("First second"), "{message}");
        assert!(message.ends_with('…'));
    }
}
