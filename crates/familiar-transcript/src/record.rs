//! Typed, borrowed views of transcript records: the serde layer under [`crate::Normalizer`].
//!
//! Only the fields the normalizer uses are named; everything else (tool outputs,
//! `toolUseResult`, hook data) is skipped by serde without allocating, and the few large values
//! that are needed only sometimes (`input`, tool result `content`) are captured as raw JSON and
//! decoded on demand. Strings borrow from the line unless they contain escapes.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

type Str<'a> = Option<Cow<'a, str>>;

/// One JSONL record, of any type.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Record<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(borrow)]
    pub subtype: Str<'a>,
    #[serde(rename = "sessionId", borrow)]
    pub session_id: Str<'a>,
    /// stream-json spelling.
    #[serde(rename = "session_id", borrow)]
    pub session_id_snake: Str<'a>,
    #[serde(rename = "agentId", borrow)]
    pub agent_id: Str<'a>,
    /// stream-json: the Task/Agent tool use a subagent's message belongs to.
    #[serde(borrow)]
    pub parent_tool_use_id: Str<'a>,
    #[serde(rename = "isSidechain")]
    pub is_sidechain: Option<bool>,
    #[serde(rename = "isMeta")]
    pub is_meta: Option<bool>,
    #[serde(rename = "isCompactSummary")]
    pub is_compact_summary: Option<bool>,
    #[serde(rename = "isApiErrorMessage")]
    pub is_api_error_message: Option<bool>,
    #[serde(borrow)]
    pub timestamp: Str<'a>,
    /// What ran the CLI: `cli` (interactive), `sdk-cli` (`-p`), other `sdk-*`.
    #[serde(borrow)]
    pub entrypoint: Str<'a>,
    /// Codex rollouts: `{timestamp, type, payload}` (read by [`crate::codex`]).
    #[serde(borrow)]
    pub payload: Option<&'a RawValue>,
    #[serde(borrow)]
    pub message: Option<MessageField<'a>>,
    /// String (`isApiErrorMessage`) or object (system `api_error`).
    #[serde(borrow)]
    pub error: Option<&'a RawValue>,
    #[serde(borrow)]
    pub cause: Option<&'a RawValue>,
    #[serde(rename = "retryInMs")]
    pub retry_in_ms: Option<f64>,
    #[serde(rename = "retryAttempt")]
    pub retry_attempt: Option<u64>,
    #[serde(rename = "maxRetries")]
    pub max_retries: Option<u64>,
    /// stream-json `api_retry`: `attempt`, `max_retries`, `retry_delay_ms`, `error_status`.
    pub attempt: Option<u64>,
    #[serde(rename = "max_retries")]
    pub max_retries_snake: Option<u64>,
    pub retry_delay_ms: Option<f64>,
    pub error_status: Option<u64>,
    /// stream-json `result`: the HTTP status of the API error that ended the run.
    pub api_error_status: Option<u64>,
    #[serde(rename = "compactMetadata")]
    pub compact_metadata: Option<CompactMetadata<'a>>,
    #[serde(rename = "durationMs")]
    pub duration_ms_camel: Option<f64>,
    /// system `local_command` text, flat `tool_result` content.
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    #[serde(borrow)]
    pub summary: Str<'a>,
    /// Object or plain string; decoded only for subagent results.
    #[serde(rename = "toolUseResult", borrow)]
    pub tool_use_result: Option<&'a RawValue>,
    /// stream-json `result`.
    pub is_error: Option<bool>,
    pub duration_ms: Option<f64>,
    pub num_turns: Option<u64>,
    pub total_cost_usd: Option<f64>,
    #[serde(borrow)]
    pub result: Option<&'a RawValue>,
    #[serde(borrow)]
    pub errors: Option<&'a RawValue>,
    /// stream-json `result` usage, and the model of a stream-json `init`.
    pub usage: Option<Usage>,
    #[serde(borrow)]
    pub model: Str<'a>,
    /// Older flat shape: top-level `tool_use` / `tool_result`.
    #[serde(borrow)]
    pub name: Str<'a>,
    #[serde(borrow)]
    pub input: Option<&'a RawValue>,
    #[serde(borrow)]
    pub tool_use_id: Str<'a>,
    #[serde(borrow)]
    pub id: Str<'a>,
    /// With `message.id`, what identifies an API message across records ([`crate::usage`]).
    #[serde(rename = "requestId", borrow)]
    pub request_id: Str<'a>,
    /// `progress` records: a running subagent's message is in `data.message`; decoded only by
    /// [`crate::usage`], and only when it mentions usage.
    #[serde(borrow)]
    pub data: Option<&'a RawValue>,
    /// Qwen Code's replies: the request's usage (read by [`crate::qwen::usage`]).
    #[serde(rename = "usageMetadata", borrow)]
    pub usage_metadata: Option<&'a RawValue>,
    /// `attachment` records (2.1.x): `{type, ...}`; a `model` attachment names the model
    /// before any reply (`identity.modelId`). Decoded only for those.
    #[serde(borrow)]
    pub attachment: Option<&'a RawValue>,
    /// `api-request` records (2.1.3xx): the request's parameters, `model` among them.
    #[serde(borrow)]
    pub params: Option<&'a RawValue>,
    /// A tool result's permission decision (2.1.3xx): `{decision: accept|reject, source:
    /// config|user|..., ...}`: who allowed or refused the tool.
    #[serde(rename = "permissionDecision", borrow)]
    pub permission_decision: Option<&'a RawValue>,
    /// `cost-state` records (2.1.3xx): the CLI's own running total of the session's cost.
    #[serde(rename = "totalCostUSD")]
    pub total_cost_usd_camel: Option<f64>,
    /// The CLI version that wrote the record.
    #[serde(borrow)]
    pub version: Str<'a>,
}

impl<'a> Record<'a> {
    pub fn session(&self) -> Option<&str> {
        self.session_id
            .as_deref()
            .or(self.session_id_snake.as_deref())
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct CompactMetadata<'a> {
    #[serde(borrow)]
    pub trigger: Str<'a>,
    #[serde(rename = "preTokens")]
    pub pre_tokens: Option<u64>,
    #[serde(rename = "postTokens")]
    pub post_tokens: Option<u64>,
}

/// A JSON string, or a structured value `T`, decided by the value itself in one pass (serde's
/// untagged enums would buffer the whole value first).
#[derive(Debug)]
pub enum TextOr<'a, T> {
    Text(Cow<'a, str>),
    Value(T),
}

/// `message`: an API message object, or a plain string in the older flat shape.
pub type MessageField<'a> = TextOr<'a, Message<'a>>;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Message<'a> {
    #[serde(borrow)]
    pub id: Str<'a>,
    #[serde(borrow)]
    pub model: Str<'a>,
    #[serde(borrow)]
    pub content: Option<Content<'a>>,
    #[serde(borrow)]
    pub stop_reason: Str<'a>,
    pub usage: Option<Usage>,
}

/// `message.content`: a string, or an array of blocks.
pub type Content<'a> = TextOr<'a, Vec<Block<'a>>>;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Block<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Str<'a>,
    #[serde(borrow)]
    pub text: Str<'a>,
    #[serde(borrow)]
    pub thinking: Str<'a>,
    #[serde(borrow)]
    pub id: Str<'a>,
    #[serde(borrow)]
    pub name: Str<'a>,
    #[serde(borrow)]
    pub input: Option<&'a RawValue>,
    #[serde(borrow)]
    pub tool_use_id: Str<'a>,
    #[serde(borrow)]
    pub content: Option<&'a RawValue>,
    pub is_error: Option<bool>,
}

/// The largest token count believed: a count above it (`2^63 - 1`, a wrong field) is no
/// count at all, as if missing, and cannot pin a context window or a cost at absurd values.
pub const MAX_TOKENS: u64 = 1 << 30;

/// Token counts of one API message. Each count is read leniently: one that is not an
/// unsigned integer up to [`MAX_TOKENS`] (`-1`, `1.5`, `"12"`, `1e400`) is that count
/// missing, never the record dropped.
#[derive(Debug, Default, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Usage {
    #[serde(deserialize_with = "lenient_count")]
    pub input_tokens: Option<u64>,
    #[serde(deserialize_with = "lenient_count")]
    pub output_tokens: Option<u64>,
    #[serde(deserialize_with = "lenient_count")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(deserialize_with = "lenient_count")]
    pub cache_creation_input_tokens: Option<u64>,
    pub cache_creation: Option<CacheCreation>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct CacheCreation {
    #[serde(deserialize_with = "lenient_count")]
    pub ephemeral_5m_input_tokens: Option<u64>,
    #[serde(deserialize_with = "lenient_count")]
    pub ephemeral_1h_input_tokens: Option<u64>,
}

/// A token count: an unsigned integer up to [`MAX_TOKENS`], anything else none. Read from
/// the value's own text, so no number (`1e400`, out of every range) can fail the record.
fn lenient_count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    let raw = Box::<RawValue>::deserialize(deserializer)?;
    let text = raw.get();
    Ok(
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<u64>().ok())
            .flatten()
            .filter(|n| *n <= MAX_TOKENS),
    )
}

impl Usage {
    /// Tokens in the context window for this request.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens.unwrap_or(0)
            + self.cache_read_input_tokens.unwrap_or(0)
            + self.cache_creation_input_tokens.unwrap_or(0)
    }
}

impl<'de: 'a, 'a, T: Deserialize<'de>> Deserialize<'de> for TextOr<'a, T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextOrVisitor<'a, T>(std::marker::PhantomData<(&'a (), T)>);
        impl<'de: 'a, 'a, T: Deserialize<'de>> Visitor<'de> for TextOrVisitor<'a, T> {
            type Value = TextOr<'a, T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, an object or an array")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(TextOr::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(TextOr::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(TextOr::Text(Cow::Owned(v)))
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Self::Value, M::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(TextOr::Value)
            }
            fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<Self::Value, S::Error> {
                T::deserialize(de::value::SeqAccessDeserializer::new(seq)).map(TextOr::Value)
            }
        }
        deserializer.deserialize_any(TextOrVisitor(std::marker::PhantomData))
    }
}

/// Text of a tool result `content` (a string, or an array of `text` blocks; images skipped).
pub fn raw_text(raw: &RawValue) -> Option<String> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum TextOrBlocks<'a> {
        #[serde(borrow)]
        Text(Cow<'a, str>),
        #[serde(borrow)]
        Blocks(Vec<TextBlock<'a>>),
    }
    #[derive(Deserialize)]
    struct TextBlock<'a> {
        #[serde(borrow, default)]
        text: Option<Cow<'a, str>>,
    }
    match serde_json::from_str::<TextOrBlocks>(raw.get()).ok()? {
        TextOrBlocks::Text(text) => Some(text.into_owned()),
        TextOrBlocks::Blocks(blocks) => {
            let parts: Vec<Cow<str>> = blocks.into_iter().filter_map(|b| b.text).collect();
            Some(parts.join("\n"))
        }
    }
}

/// A JSON string value, decoded ([`crate::scan::string`]); `None` when the value is not a
/// string.
pub fn raw_str(raw: &RawValue) -> Option<String> {
    crate::scan::string(raw.get()).map(Cow::into_owned)
}
