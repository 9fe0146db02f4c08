//! Typed, borrowed serde views of the records Qwen Code 0.24.4 writes to
//! `projects/<project>/chats/<session id>.jsonl` (seen in `fixtures/qwen-0.24.4/`, and written so
//! by its `chatRecordingService`): only the fields [`super::Session`] reads.
//!
//! Every line is one record, appended once: `{uuid, parentUuid, sessionId, timestamp, type,
//! cwd, version, gitBranch?, …}` and, by `type`:
//! - `user`: `message: {role: user, parts}` (the prompt's text parts); a `subtype` for those
//!   that are not typed by the user (`notification`, `cron`, …);
//! - `assistant`: `model`, `message: {role: model, parts}` (`{text}`, `{text, thought: true}`,
//!   `{functionCall: {id, name, args}}`), `usageMetadata` (the Gemini API's names, converted
//!   from the OpenAI-compatible answer's `usage`) and `contextWindowSize`;
//! - `tool_result`: `message: {role: user, parts: [{functionResponse: {id, name, response}}]}`
//!   and `toolCallResult: {callId, status, resultDisplay, error?, errorType?}`;
//! - a subagent's records, in its own file: the same, with `agentId`, `agentName` and
//!   `isSidechain: true` (its `sessionId` is its parent's);
//! - `system`: a `subtype` and its `systemPayload` (`ui_telemetry`: `{uiEvent: {"event.name",
//!   …}}`, the API's answers and errors and the tools' runs as the CLI's telemetry saw them).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

type Str<'a> = Option<Cow<'a, str>>;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Record<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(borrow)]
    pub subtype: Str<'a>,
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Str<'a>,
    #[serde(borrow)]
    pub timestamp: Str<'a>,
    #[serde(borrow)]
    pub version: Str<'a>,
    #[serde(borrow)]
    pub model: Str<'a>,
    pub message: Option<Message>,
    #[serde(rename = "usageMetadata")]
    pub usage: Option<UsageMetadata>,
    #[serde(rename = "contextWindowSize")]
    pub context_window: Option<u64>,
    #[serde(rename = "toolCallResult")]
    pub tool_call_result: Option<ToolCallResult>,
    #[serde(rename = "systemPayload")]
    pub system_payload: Option<Value>,
    /// A subagent's records (its own file, `projects/<project>/subagents/<session>/agent-<id>.
    /// jsonl`): its id, and `isSidechain: true`.
    #[serde(rename = "agentId")]
    pub agent_id: Option<String>,
    #[serde(rename = "isSidechain")]
    pub is_sidechain: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Message {
    /// Each string decoded once, at its length (a prompt can be tens of MB).
    #[serde(deserialize_with = "crate::scan::exact_values")]
    pub parts: Vec<Value>,
}

/// A tool's run, beside its `functionResponse`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct ToolCallResult {
    #[serde(rename = "callId")]
    pub call_id: Option<String>,
    /// `success`, `error` or `cancelled`.
    pub status: Option<String>,
    #[serde(rename = "resultDisplay")]
    pub result_display: Option<Value>,
}

/// The request's usage as the CLI wrote it (`usageMetadata`): `promptTokenCount` is the
/// answer's `prompt_tokens` (cached tokens included), `candidatesTokenCount` its
/// `completion_tokens` (reasoning tokens included: `thoughtsTokenCount` is their part of it),
/// `cachedContentTokenCount` its `prompt_tokens_details.cached_tokens`, `totalTokenCount` its
/// `total_tokens`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct UsageMetadata {
    #[serde(rename = "promptTokenCount")]
    pub prompt: u64,
    #[serde(rename = "candidatesTokenCount")]
    pub candidates: u64,
    #[serde(rename = "thoughtsTokenCount")]
    pub thoughts: u64,
    #[serde(rename = "cachedContentTokenCount")]
    pub cached: u64,
    #[serde(rename = "totalTokenCount")]
    pub total: u64,
}

/// A part of a message, as read.
pub(super) enum Part<'v> {
    Text(&'v str),
    Thought(&'v str),
    Call {
        id: Option<&'v str>,
        name: &'v str,
        args: &'v Value,
    },
    Response {
        response: &'v Value,
    },
    Other,
}

pub(super) fn part(value: &Value) -> Part<'_> {
    if let Some(call) = value.get("functionCall") {
        return match call.get("name").and_then(Value::as_str) {
            Some(name) => Part::Call {
                id: call.get("id").and_then(Value::as_str),
                name,
                args: call.get("args").unwrap_or(&Value::Null),
            },
            None => Part::Other,
        };
    }
    if let Some(answer) = value.get("functionResponse") {
        return Part::Response {
            response: answer.get("response").unwrap_or(&Value::Null),
        };
    }
    match value.get("text").and_then(Value::as_str) {
        Some(text) if value.get("thought").and_then(Value::as_bool) == Some(true) => {
            Part::Thought(text)
        }
        Some(text) => Part::Text(text),
        None => Part::Other,
    }
}
