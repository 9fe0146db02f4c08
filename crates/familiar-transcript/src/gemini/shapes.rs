//! Typed, borrowed serde views of the records Gemini CLI 0.61.0 writes to
//! `chats/session-*.jsonl` (seen in `fixtures/gemini-0.61.0/`, and read so in its
//! `chatRecordingService`): only the fields [`super::Chat`] reads; everything else (tool
//! descriptions, display strings, the functions' whole answers) is skipped by serde.
//!
//! One line is one of:
//! - the session's metadata, first: `{sessionId, projectHash, startTime, lastUpdated, kind}`;
//! - a message: `{id, timestamp, type, content, …}`, written again whole (same `id`) each time
//!   it grows (its `tokens`, then its `toolCalls` once they ran);
//! - a metadata update `{"$set": {…}}` (`lastUpdated` after every message; `messages`, the whole
//!   history, when the CLI rewrites it, e.g. after a failed request rolled the prompt back);
//! - a rewind `{"$rewindTo": id}` (the messages from that one on are gone).
//!
//! The versions before 0.39 (`fixtures/gemini-0.28.2/`) wrote one JSON document per session,
//! `chats/session-*.json`, pretty-printed and rewritten whole on every change: the metadata
//! with `messages` (the same message shape; a reply's later tool calls merged into it) and
//! `summary`. Its reader takes the whole document as one line.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

type Str<'a> = Option<Cow<'a, str>>;

/// Any line, read once: which of the four it is follows from its fields.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Line<'a> {
    /// A message's id.
    #[serde(borrow)]
    pub id: Str<'a>,
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(borrow)]
    pub timestamp: Str<'a>,
    /// A string (a model's reply) or a list of parts (`{text}`, `{functionResponse}`, …);
    /// read when used ([`Line::content`]): a pasted prompt can be tens of MB.
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    #[serde(rename = "toolCalls")]
    pub tool_calls: Vec<ToolCall<'a>>,
    pub thoughts: Vec<Thought>,
    pub tokens: Option<MessageTokens>,
    #[serde(borrow)]
    pub model: Str<'a>,
    /// The metadata line.
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Str<'a>,
    #[serde(rename = "projectHash", borrow)]
    pub project_hash: Str<'a>,
    /// `main` or `subagent`.
    #[serde(rename = "kind", borrow)]
    pub session_kind: Str<'a>,
    /// A metadata update.
    #[serde(rename = "$set", borrow)]
    pub set: Option<&'a RawValue>,
    /// A rewind.
    #[serde(rename = "$rewindTo", borrow)]
    pub rewind_to: Str<'a>,
    /// A whole session (the versions before 0.39): the metadata with every message in it.
    #[serde(borrow)]
    pub messages: Option<&'a RawValue>,
    /// A whole session's summary.
    #[serde(borrow)]
    pub summary: Str<'a>,
}

/// A message as the history of a `$set` lists it (the same shape, fewer fields read).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Listed<'a> {
    #[serde(borrow)]
    pub id: Str<'a>,
}

/// One tool call of a model's message, written once it ran (with its result and status).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct ToolCall<'a> {
    #[serde(borrow)]
    pub id: Str<'a>,
    #[serde(borrow)]
    pub name: Str<'a>,
    pub args: Value,
    /// The `functionResponse` parts the model was sent; read when a failure is looked for
    /// ([`ToolCall::response`]): a tool's output can be tens of MB.
    #[serde(borrow)]
    pub result: Option<&'a RawValue>,
    /// `success`, `error` or `cancelled`.
    #[serde(borrow)]
    pub status: Str<'a>,
    /// What the CLI showed (`"Command exited with code: 3"`, `"File not found."`).
    #[serde(rename = "resultDisplay", borrow)]
    pub result_display: Option<&'a RawValue>,
}

/// A thought of the model, as the CLI parsed it (`**subject** description`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Thought {
    pub subject: String,
    pub description: String,
}

/// The request's usage, as the CLI copied it from `usageMetadata`: `input` is
/// `promptTokenCount` (cached tokens included), `output` `candidatesTokenCount`, `cached`
/// `cachedContentTokenCount`, `thoughts` `thoughtsTokenCount`, `tool`
/// `toolUsePromptTokenCount`, `total` `totalTokenCount`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct MessageTokens {
    pub input: u64,
    pub output: u64,
    pub cached: u64,
    pub thoughts: u64,
    pub tool: u64,
    pub total: u64,
}

impl Line<'_> {
    /// Its `content`, read with each string decoded once ([`crate::scan::value`]).
    pub fn content(&self) -> Option<Value> {
        crate::scan::value(self.content?.get())
    }
}

impl ToolCall<'_> {
    /// The first `functionResponse.response` of its result.
    pub fn response(&self) -> Option<Value> {
        let Value::Array(parts) = crate::scan::value(self.result?.get())? else {
            return None;
        };
        parts.into_iter().find_map(|mut part| {
            let response = part.get_mut("functionResponse")?.get_mut("response")?;
            Some(response.take())
        })
    }

    /// What the CLI showed, when it is a string.
    pub fn display(&self) -> Option<String> {
        crate::scan::string(self.result_display?.get()).map(|text| text.into_owned())
    }
}

/// The text of a message's `content`: the string, or its parts' `text` that are not thoughts
/// (one such part moved out, not copied).
pub(super) fn content_text(content: Option<Value>) -> String {
    match content {
        Some(Value::String(text)) => text,
        Some(Value::Array(mut parts)) => crate::scan::take_texts(
            parts
                .iter_mut()
                .filter(|part| part.get("thought").and_then(Value::as_bool) != Some(true)),
        ),
        _ => String::new(),
    }
}

/// Does a message's `content` answer tool calls (`functionResponse` parts)?
pub(super) fn is_tool_answer(content: Option<&Value>) -> bool {
    content.and_then(Value::as_array).is_some_and(|parts| {
        parts
            .iter()
            .any(|part| part.get("functionResponse").is_some())
    })
}
