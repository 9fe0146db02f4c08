//! Typed, borrowed serde views of a Codex rollout record's `payload`: only the fields
//! [`super::Rollout`] reads, everything else (instructions, histories, world state) skipped by
//! serde. One struct covers every payload type, since they share few field names and each
//! field is optional.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::errors::TaskError;

type Str<'a> = Option<Cow<'a, str>>;

/// The `payload` of any record (`session_meta`, `turn_context`, `response_item`, `event_msg`,
/// `compacted`, `token_usage_record`).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Payload<'a> {
    /// `response_item` and `event_msg` say what they are.
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    /// `session_meta`: the session id.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// `session_meta`: the version of the CLI that wrote the rollout.
    #[serde(borrow)]
    pub cli_version: Str<'a>,
    /// `turn_context`.
    #[serde(borrow)]
    pub model: Str<'a>,
    /// `message`: `user`, `assistant`, `developer`.
    #[serde(borrow)]
    pub role: Str<'a>,
    /// `function_call`, `custom_tool_call`.
    #[serde(borrow)]
    pub name: Str<'a>,
    /// `function_call`: the arguments as a JSON string.
    #[serde(borrow)]
    pub arguments: Str<'a>,
    /// `custom_tool_call`: the freeform input (an `apply_patch` patch).
    #[serde(borrow)]
    pub input: Option<&'a RawValue>,
    #[serde(borrow)]
    pub call_id: Str<'a>,
    /// `*_call_output`: a string, or content items in some versions.
    #[serde(borrow)]
    pub output: Option<&'a RawValue>,
    /// Old `user_message` / `agent_message` text (`compacted`: the summary, unread).
    #[serde(borrow)]
    pub message: Option<&'a RawValue>,
    /// Old `agent_reasoning` text.
    #[serde(borrow)]
    pub text: Str<'a>,
    /// `item_completed`.
    #[serde(borrow)]
    pub item: Option<Item<'a>>,
    /// `token_count`.
    pub info: Option<TokenInfo>,
    /// `token_usage_record`.
    pub usage: Option<TokenUsage>,
    /// `token_usage_record`: the API response it counts.
    #[serde(borrow)]
    pub response_id: Str<'a>,
    /// `task_complete` of a failed turn.
    pub error: Option<TaskError>,
    /// `task_started` (0.169 on): the window of the turn's model, before any `token_count`.
    pub model_context_window: Option<u64>,
    /// `task_complete`.
    pub duration_ms: Option<u64>,
    /// Old `exec_command_end`.
    pub exit_code: Option<i64>,
    /// Decoded only for a failed command ([`raw_str`]): a command's output can be tens of MB.
    #[serde(borrow)]
    pub aggregated_output: Option<&'a RawValue>,
    /// Old `patch_apply_end`.
    pub success: Option<bool>,
    #[serde(borrow)]
    pub stderr: Option<&'a RawValue>,
}

/// The `item` of an `item_completed` event.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Item<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    /// The call id, for CommandExecution and FileChange.
    #[serde(borrow)]
    pub id: Str<'a>,
    /// UserMessage (`text`) and AgentMessage (`Text`) parts.
    #[serde(borrow)]
    pub content: Vec<Part<'a>>,
    /// Reasoning.
    pub summary_text: Vec<String>,
    /// CommandExecution.
    pub exit_code: Option<i64>,
    /// Decoded only for a failed command ([`raw_str`]): a command's output can be tens of MB.
    #[serde(borrow)]
    pub aggregated_output: Option<&'a RawValue>,
    /// CommandExecution and FileChange: `completed`, `failed`.
    #[serde(borrow)]
    pub status: Str<'a>,
    /// FileChange.
    #[serde(borrow)]
    pub stderr: Option<&'a RawValue>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct Part<'a> {
    /// Decoded when used ([`crate::scan::string`]): a pasted prompt can be tens of MB.
    #[serde(borrow)]
    pub text: Option<&'a RawValue>,
}

impl Item<'_> {
    /// The text parts, joined by newlines; one part decoded once (a pasted prompt can be tens
    /// of MB).
    pub fn text(&self) -> String {
        let mut texts = self
            .content
            .iter()
            .filter_map(|part| part.text.and_then(raw_str));
        match (texts.next(), texts.next()) {
            (Some(only), None) => only.into_owned(),
            (first, second) => {
                let parts: Vec<Cow<'_, str>> =
                    first.into_iter().chain(second).chain(texts).collect();
                parts.join("\n")
            }
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(super) struct TokenInfo {
    pub last_token_usage: Option<TokenUsage>,
    pub total_token_usage: Option<TokenUsage>,
    pub model_context_window: Option<u64>,
}

/// Tokens of one request (`last_token_usage`, `token_usage_record.usage`). `input_tokens`
/// includes `cached_input_tokens`; `output_tokens` includes `reasoning_output_tokens`.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub(super) struct TokenUsage {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub total_tokens: u64,
}

/// A JSON string value's text (`None` for anything else).
pub(super) fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    crate::scan::string(raw.get())
}
