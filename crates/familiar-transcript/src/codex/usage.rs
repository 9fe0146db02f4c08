//! Tokens of a Codex rollout for `familiar stats`: [`crate::usage::scan_parsed_line`] hands
//! Codex records here ([`scan_record`]: a parsed record's type and payload), and
//! [`crate::usage::scan_line`] Codex lines ([`scan`]), with a little state per file
//! ([`CodexScan`]: the model of the current turn, the session, whether the file has
//! per-request records). Each request counts once:
//! - Codex 0.169 writes a `token_usage_record` per request, keyed by its `response_id`;
//! - older versions only wrote `token_count` events, whose `last_token_usage` is the request
//!   and whose `total_token_usage.total_tokens` (the session's running total) tells a repeat
//!   (the same count is often written twice) from the next request. A file with
//!   `token_usage_record`s is counted from those alone.
//!
//! `input_tokens` includes the cached ones: uncached input is their difference, priced at the
//! input rate; cached input at the cache-read rate ([`crate::pricing`]).

use std::borrow::Cow;

use serde::Deserialize;

use crate::pricing::Tokens;
use crate::record::Usage;
use crate::usage::UsageEntry;

use super::shapes::TokenUsage;

/// What a scan of one rollout has learnt so far.
#[derive(Debug, Clone, Default)]
pub struct CodexScan {
    model: Option<Box<str>>,
    session: Option<Box<str>>,
    /// A `token_usage_record` was seen: `token_count`s add nothing.
    records: bool,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    payload: Option<LinePayload<'a>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct LinePayload<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow)]
    response_id: Option<Cow<'a, str>>,
    usage: Option<TokenUsage>,
    info: Option<Info>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Info {
    last_token_usage: Option<TokenUsage>,
    total_token_usage: Option<TokenUsage>,
}

/// The record `type`s of Codex that [`scan`] learns from: `session_meta`, `turn_context`,
/// usage. [`may_matter`] looks for them in a line's text.
const TYPES: [&str; 4] = [
    "session_meta",
    "turn_context",
    "token_usage_record",
    "event_msg",
];

/// `true` for a record whose `type` (`kind`) makes it a Codex record [`scan`] needs.
pub fn matters(kind: Option<&str>) -> bool {
    kind.is_some_and(|kind| TYPES.contains(&kind))
}

/// `true` for a line that may be a Codex record the scan needs (a cheap look at its start,
/// where Codex writes `type`): `session_meta`, `turn_context`, usage. Whitespace around the
/// colon is allowed, as JSON allows it (a rollout rewritten by another tool may have it).
pub fn may_matter(line: &[u8]) -> bool {
    // Built once: this runs on every line of every input (`familiar stats`), and building a
    // finder per call cost more than the searches.
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"type\""));
    let start = &line[..line.len().min(120)];
    KEY.find_iter(start).any(|at| {
        let value = start[at + b"\"type\"".len()..].trim_ascii_start();
        let Some(value) = value.strip_prefix(b":") else {
            return false;
        };
        let Some(name) = value.trim_ascii_start().strip_prefix(b"\"") else {
            return false;
        };
        TYPES.iter().any(|kind| {
            name.strip_prefix(kind.as_bytes())
                .is_some_and(|rest| rest.first() == Some(&b'"'))
        })
    })
}

/// Learn from one Codex line; the usage entry of a request, if it is one.
pub fn scan(json: &str, state: &mut CodexScan) -> Option<UsageEntry<'static>> {
    let line: Line<'_> = serde_json::from_str(json).ok()?;
    learn(line.kind.as_deref()?, line.payload?, state)
}

/// [`scan`] of a record already parsed: its `type` and its `payload` as JSON text. Only the
/// payload is decoded, and only when it can teach something: an `event_msg` (a third of a
/// rollout's bytes, with every command's output) only when it is a `token_count` that counts.
pub fn scan_record(
    kind: &str,
    payload: &str,
    state: &mut CodexScan,
) -> Option<UsageEntry<'static>> {
    if !matters(Some(kind))
        || kind == "event_msg"
            && (state.records || !crate::contains!(payload.as_bytes(), b"\"token_count\""))
    {
        return None;
    }
    learn(kind, serde_json::from_str(payload).ok()?, state)
}

fn learn(
    kind: &str,
    payload: LinePayload<'_>,
    state: &mut CodexScan,
) -> Option<UsageEntry<'static>> {
    match kind {
        "session_meta" => {
            state.session = payload.id.map(|id| id.into());
            None
        }
        "turn_context" => {
            if let Some(model) = payload.model {
                state.model = Some(model.into());
            }
            None
        }
        "token_usage_record" => {
            state.records = true;
            let usage = payload.usage?;
            Some(entry(state, payload.response_id?.into_owned(), usage))
        }
        "event_msg" if payload.kind.as_deref() == Some("token_count") && !state.records => {
            let info = payload.info?;
            let last = info.last_token_usage?;
            let total = info.total_token_usage?;
            (last.total_tokens > 0)
                .then(|| entry(state, format!("total-{}", total.total_tokens), last))
        }
        _ => None,
    }
}

fn entry(state: &CodexScan, key: String, usage: TokenUsage) -> UsageEntry<'static> {
    UsageEntry {
        message_id: Some(Cow::Owned(key)),
        request_id: state.session.as_deref().map(|s| Cow::Owned(s.to_owned())),
        model: Cow::Owned(state.model.as_deref().unwrap_or("").to_owned()),
        tokens: Tokens::of_usage(&usage_of(usage)),
        sidechain: false,
    }
}

/// Codex's usage in the shape the metrics count: uncached input, cache reads, output.
pub(super) fn usage_of(usage: TokenUsage) -> Usage {
    Usage {
        input_tokens: Some(usage.input_tokens.saturating_sub(usage.cached_input_tokens)),
        cache_read_input_tokens: Some(usage.cached_input_tokens),
        output_tokens: Some(usage.output_tokens),
        ..Usage::default()
    }
}
