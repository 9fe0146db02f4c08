//! The `error` of a failed turn's `task_complete`: its `error_code` and the one line a person
//! reads (the event's `message`; `text` stays as Codex wrote it). What Codex 0.171 writes, for
//! the mock's answers in `tests/real_codex.rs` (`fixtures/codex-0.171.0/`):
//!
//! | HTTP | `message` | `codex_error_info` |
//! |---|---|---|
//! | 429 | `exceeded retry limit, last status: 429 Too Many Requests` | `{"response_too_many_failed_attempts": {"http_status_code": 429}}` |
//! | 500 | `We’re currently experiencing high demand, …` | `"internal_server_error"` |
//! | 400 | the body's JSON, `{"error": {"message": …, …}}` | `"other"` |
//! | 503 | `unexpected status 503 Service Unavailable: <body's message>, url: <URL>` | `{"http_connection_failed": {"http_status_code": 503}}` |

use serde::Deserialize;

use crate::error_message::{capitalized, one_line, words};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct TaskError {
    pub message: Option<String>,
    /// `{"response_too_many_failed_attempts": {"http_status_code": 429}}`, or a bare name
    /// (`"internal_server_error"`, `"other"`).
    pub codex_error_info: Option<serde_json::Value>,
}

impl TaskError {
    /// A short code for the failure: `rate_limit` for HTTP 429, `server_error` for 5xx (and
    /// the bare `internal_server_error`), else the name Codex gives it.
    pub fn code(&self) -> Option<String> {
        let info = self.codex_error_info.as_ref()?;
        if let Some(name) = info.as_str() {
            return Some(match name {
                "internal_server_error" => "server_error".to_owned(),
                name => name.to_owned(),
            });
        }
        let (name, detail) = info.as_object()?.iter().next()?;
        Some(match detail["http_status_code"].as_u64() {
            Some(429) => "rate_limit".to_owned(),
            Some(500..=599) => "server_error".to_owned(),
            _ => name.clone(),
        })
    }

    /// One line for a person, never JSON: the API's own message when Codex passed its body
    /// on (`{"error": {"message": …}}`, or after `unexpected status 503 …:`), else Codex's
    /// sentence, else what the code says.
    pub fn readable(&self) -> String {
        let text = self.message.as_deref().unwrap_or("").trim();
        // `unexpected status …` ends in the URL asked: no use in a notification.
        let text = text
            .rfind(", url: ")
            .map_or(text, |at| text[..at].trim_end());
        let sentence = if let Some(message) = body_message(text) {
            capitalized(message.trim())
        } else if let Some(rest) = text.strip_prefix("unexpected status ") {
            unexpected_status(rest)
        } else if text.is_empty() || text.starts_with('{') {
            match self.code() {
                Some(code) => format!("The API request failed ({})", words(&code)),
                None => "The API request failed".to_owned(),
            }
        } else {
            capitalized(text)
        };
        one_line(&sentence)
    }
}

/// `503 Service Unavailable: The engine is overloaded.` → `The engine is overloaded (HTTP
/// 503)`; the body may be the API's JSON.
fn unexpected_status(rest: &str) -> String {
    let (status, body) = rest.split_once(": ").unwrap_or((rest, ""));
    let code = status.split_whitespace().next().unwrap_or(status);
    let body = body.trim();
    let what = body_message(body).map_or(body, str::trim);
    if what.is_empty() || what.starts_with('{') {
        return format!("The API answered {}", status.trim());
    }
    format!("{} (HTTP {code})", capitalized(what.trim_end_matches('.')))
}

/// The `error.message` of the API's JSON error body, when `text` is one.
fn body_message(text: &str) -> Option<&str> {
    #[derive(Deserialize)]
    struct Body<'a> {
        #[serde(borrow)]
        error: Detail<'a>,
    }
    #[derive(Deserialize)]
    struct Detail<'a> {
        #[serde(borrow)]
        message: Option<&'a str>,
    }
    if !text.starts_with('{') {
        return None;
    }
    let body: Body<'_> = serde_json::from_str(text).ok()?;
    body.error
        .message
        .filter(|message| !message.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error(message: &str, info: serde_json::Value) -> TaskError {
        TaskError {
            message: Some(message.to_owned()),
            codex_error_info: Some(info),
        }
    }

    #[test]
    fn codes_of_both_forms() {
        let code = |info| error("", info).code();
        assert_eq!(
            code(json!({"response_too_many_failed_attempts": {"http_status_code": 429}})),
            Some("rate_limit".into())
        );
        assert_eq!(
            code(json!({"http_connection_failed": {"http_status_code": 503}})),
            Some("server_error".into())
        );
        assert_eq!(
            code(json!("internal_server_error")),
            Some("server_error".into())
        );
        assert_eq!(code(json!("other")), Some("other".into()));
        assert_eq!(TaskError::default().code(), None);
    }

    #[test]
    fn an_escaped_body_that_is_not_the_apis_falls_back_to_the_code() {
        let readable = error(r#"{"detail": "nope"}"#, json!("other")).readable();
        assert_eq!(readable, "The API request failed (other)");
        let readable = error("unexpected status 502 Bad Gateway: {}", json!("other")).readable();
        assert_eq!(readable, "The API answered 502 Bad Gateway");
        let readable = error(
            r#"unexpected status 400 Bad Request: {"error": {"message": "Bad input."}}"#,
            json!("other"),
        )
        .readable();
        assert_eq!(readable, "Bad input (HTTP 400)");
        assert_eq!(TaskError::default().readable(), "The API request failed");
    }
}
