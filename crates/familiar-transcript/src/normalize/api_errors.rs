//! API errors: `system`/`api_error` records (retried requests, older CLIs), and stream-json
//! `result` records that end a run badly. Part of [`super::Normalizer`].

use std::borrow::Cow;

use familiar_model::{ErrorKind, Event, EventKind, Status};
use serde::Deserialize;

use super::parse::cap_text;
use super::{Normalizer, Origin};
use crate::error_message;
use crate::record::{self, Record};

impl Normalizer {
    pub(super) fn system_api_error(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct Cause<'a> {
            #[serde(borrow)]
            code: Option<Cow<'a, str>>,
            #[serde(borrow)]
            message: Option<Cow<'a, str>>,
        }
        #[derive(Deserialize, Default)]
        #[serde(default)]
        struct ApiError<'a> {
            #[serde(borrow)]
            message: Option<Cow<'a, str>>,
            /// The CLI's own wording ("429 mock"), 2.1.3xx: `message` holds the raw body.
            #[serde(borrow)]
            formatted: Option<Cow<'a, str>>,
            #[serde(borrow)]
            cause: Option<Cause<'a>>,
            status: Option<u64>,
        }
        let error: ApiError = record
            .error
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_default();
        let cause: Cause = record
            .cause
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .or(error.cause)
            .unwrap_or_default();
        let code = cause.code.as_deref().map(str::to_owned);
        let text = match (error.formatted, error.status) {
            (Some(formatted), _) if !formatted.trim().is_empty() => formatted.into_owned(),
            (_, status) => {
                let text = error
                    .message
                    .or(cause.message)
                    .map(|message| message.into_owned())
                    .or_else(|| code.clone())
                    .unwrap_or_else(|| "API error".to_owned());
                match status {
                    Some(status) if !text.starts_with(&status.to_string()) => {
                        format!("{status} {text}")
                    }
                    _ => text,
                }
            }
        };
        // A retry notice: the CLI retries after it, even after the one numbered
        // `maxRetries` (2.1.332 writes notices 1..=max, then tries once more). The failure
        // that ends the turn is the assistant record with `isApiErrorMessage` after them.
        self.claude.chains[chain].1.status = Status::Working;
        let mut event = self.event(chain, EventKind::Error, origin);
        event.error = Some(ErrorKind::Api);
        event.error_code = error.status.and_then(error_message::code_of_status);
        event.cause = code;
        event.text = Some(cap_text(&text));
        event.retry_in_ms = record.retry_in_ms;
        event.retry_attempt = record.retry_attempt;
        event.max_retries = record.max_retries;
        event.message = Some(error_message::api_error(&event));
        self.emit(event, out);
    }

    pub(super) fn result(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let duration = record.duration_ms.map(|ms| ms.max(0.0) as u64);
        let subtype = record.subtype.as_deref().unwrap_or("");
        if subtype == "success" && record.is_error != Some(true) {
            self.success(chain, duration, false, origin, out);
            return;
        }
        let state = &mut self.claude.chains[chain].1;
        if state.api_error_ended_turn {
            // The assistant record before it (`"error":"rate_limit"`) already said so.
            return;
        }
        state.turn_over = true;
        state.api_error_ended_turn = true;
        state.status = Status::WaitingForInput;
        let text = record
            .result
            .and_then(record::raw_str)
            .or_else(|| record.errors.map(|raw| raw.get().to_owned()))
            .unwrap_or_else(|| subtype.to_owned());
        let mut event = self.event(chain, EventKind::Error, origin);
        event.error = Some(ErrorKind::Api);
        // `"subtype":"success","is_error":true` ends a run on an API error: its code is the
        // HTTP status (`api_error_status`), not the subtype.
        event.error_code = match record.api_error_status {
            Some(status) => Some(status.to_string()),
            None => (!subtype.is_empty() && subtype != "success").then(|| subtype.to_owned()),
        };
        event.text = Some(cap_text(&text));
        event.duration_ms = duration;
        event.message = Some(error_message::api_error(&event));
        self.emit(event, out);
    }

    /// stream-json `api_retry`: a failed request the CLI is about to retry. An `api` error
    /// marked as retrying (`retry_attempt`, `max_retries`, `retry_in_ms`); the turn goes on.
    /// When the retries run out, the assistant record and the `result` that follow end it.
    pub(super) fn stream_api_retry(
        &mut self,
        chain: usize,
        record: &Record<'_>,
        origin: &Origin<'_>,
        out: &mut Vec<Event>,
    ) {
        let code = record.error.and_then(record::raw_str);
        let text = match (record.error_status, &code) {
            (Some(status), Some(code)) => format!("{status} {code}"),
            (Some(status), None) => status.to_string(),
            (None, Some(code)) => code.clone(),
            (None, None) => "API error".to_owned(),
        };
        // The CLI is at work on the request (a `-p` run has no prompt record before it).
        self.claude.chains[chain].1.status = Status::Working;
        let mut event = self.event(chain, EventKind::Error, origin);
        event.error = Some(ErrorKind::Api);
        event.error_code = code;
        event.text = Some(text);
        event.retry_in_ms = record.retry_delay_ms;
        event.retry_attempt = record.attempt;
        event.max_retries = record.max_retries_snake;
        event.message = Some(error_message::api_error(&event));
        self.emit(event, out);
    }
}
