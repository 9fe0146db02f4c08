//! Tokens of an opencode session for `familiar stats`: each assistant message is one request
//! (a step of the agent loop; a compaction's summary is one too), its `tokens` written on
//! the message once it completed (`time.completed`), keyed by the message id (a message
//! written again, as the live source sees it, is counted once by the ledger).
//!
//! opencode splits what the API sent (seen against the mock: `prompt_tokens` 1001 of which
//! `cached_tokens` 400, `completion_tokens` 20 of which `reasoning_tokens` 5, written
//! `input: 601, cache.read: 400, output: 15, reasoning: 5`): uncached input is `input`, at
//! the input rate; `cache.read` and `cache.write` at their rates; output is `output` plus
//! `reasoning` (the completion the API billed) ([`crate::pricing`]).

use std::borrow::Cow;

use serde::Deserialize;

use crate::pricing::Tokens;
use crate::usage::UsageEntry;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
pub(super) struct Message {
    #[serde(default)]
    pub role: Option<String>,
    #[serde(rename = "modelID", default)]
    pub model: Option<String>,
    #[serde(default)]
    pub tokens: Option<MessageTokens>,
    #[serde(default)]
    pub time: Option<MessageTime>,
}

#[derive(Deserialize, Default, Clone, Copy)]
pub(super) struct MessageTokens {
    #[serde(default)]
    pub total: Option<u64>,
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub reasoning: u64,
    #[serde(default)]
    pub cache: Cache,
}

#[derive(Deserialize, Default, Clone, Copy)]
pub(super) struct Cache {
    #[serde(default)]
    pub read: u64,
    #[serde(default)]
    pub write: u64,
}

#[derive(Deserialize)]
pub(super) struct MessageTime {
    #[serde(default)]
    pub completed: Option<u64>,
}

impl MessageTokens {
    /// The request's whole context: its prompt (cached or not) and its completion.
    pub fn context(&self) -> u64 {
        self.total.filter(|&total| total > 0).unwrap_or(
            self.input + self.cache.read + self.cache.write + self.output + self.reasoning,
        )
    }
}

/// `true` for a line that may be a message row (`"opencode.message"` in it).
pub fn may_matter(line: &[u8]) -> bool {
    crate::contains!(line, b"\"opencode.message\"")
}

/// The usage entry of one opencode line, if it is a completed assistant message with tokens.
pub fn scan(json: &str) -> Option<UsageEntry<'static>> {
    let line: Line<'_> = serde_json::from_str(json).ok()?;
    if line.kind.as_deref() != Some("opencode.message") {
        return None;
    }
    let message: Message = serde_json::from_str(&super::row_json(line.data?)?).ok()?;
    if message.role.as_deref() != Some("assistant") {
        return None;
    }
    message.time.as_ref()?.completed?;
    let tokens = message.tokens?;
    let entry = Tokens {
        input: tokens.input,
        output: tokens.output + tokens.reasoning,
        cache_read: tokens.cache.read,
        cache_creation: tokens.cache.write,
        cache_creation_1h: 0,
    };
    if entry == Tokens::default() {
        return None;
    }
    Some(UsageEntry {
        message_id: Some(Cow::Owned(line.id?.into_owned())),
        request_id: None,
        model: Cow::Owned(message.model.unwrap_or_default()),
        tokens: entry,
        sidechain: line.agent_id.is_some(),
    })
}
