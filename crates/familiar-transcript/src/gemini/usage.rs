//! Tokens of a Gemini CLI session for `familiar stats`: each model message with `tokens` is one
//! request, keyed by its message `id` (the CLI writes a message again each time it grows: the
//! ledger counts the id once). Messages listed again in a `$set` history were all written on
//! their own line first, so `$set` lines are not read. A whole session document (before 0.39)
//! lists its messages: each with `tokens` is one request ([`scan_document`]). Those versions
//! put the tool calls of a reply with neither text nor thoughts into the model message before
//! it, with that message's tokens: such a request's tokens are in no file.
//!
//! `input` (`promptTokenCount`) includes the cached tokens: uncached input is their difference
//! plus the tool-use prompt tokens, priced at the input rate; cached input at the cache-read
//! rate; output is the candidates' tokens plus the thoughts' (billed as output)
//! ([`crate::pricing`]).

use std::borrow::Cow;

use serde::Deserialize;

use crate::pricing::Tokens;
use crate::usage::UsageEntry;

use super::shapes::MessageTokens;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    tokens: Option<MessageTokens>,
}

/// `true` for a line that may be a model's message (`"type":"gemini"` near its start, after its
/// `id` and `timestamp`).
pub fn may_matter(line: &[u8]) -> bool {
    crate::contains!(&line[..line.len().min(160)], b"\"type\":\"gemini\"")
}

/// `true` for a whole session document (the versions before 0.39: pretty-printed, so `{` and
/// a newline, not JSONL's `{"`; with a `"sessionId"`).
pub fn is_document(line: &[u8]) -> bool {
    let start = line.trim_ascii_start();
    let (Some(b'{'), Some(b'\n' | b'\r')) = (start.first(), start.get(1)) else {
        return false;
    };
    memchr::memmem::find(start, b"\"sessionId\"").is_some()
}

/// The usage entries of a whole session document: each of its model messages with tokens.
pub fn scan_document(json: &str) -> Vec<UsageEntry<'static>> {
    #[derive(Deserialize)]
    struct Document<'a> {
        #[serde(borrow, default)]
        messages: Vec<&'a serde_json::value::RawValue>,
    }
    let Ok(document) = serde_json::from_str::<Document<'_>>(json) else {
        return Vec::new();
    };
    document
        .messages
        .iter()
        .filter_map(|message| scan(message.get()))
        .collect()
}

/// The usage entry of one Gemini line, if it is a model's message with tokens.
pub fn scan(json: &str) -> Option<UsageEntry<'static>> {
    let line: Line<'_> = serde_json::from_str(json).ok()?;
    if line.kind.as_deref() != Some("gemini") {
        return None;
    }
    let tokens = line.tokens?;
    Some(UsageEntry {
        message_id: Some(Cow::Owned(line.id?.into_owned())),
        request_id: None,
        model: Cow::Owned(line.model.as_deref().unwrap_or("").to_owned()),
        tokens: tokens_of(tokens),
        sidechain: false,
    })
}

/// Gemini's usage in the ledger's categories (see the module documentation).
pub fn tokens_of(tokens: MessageTokens) -> Tokens {
    Tokens {
        input: tokens.input.saturating_sub(tokens.cached) + tokens.tool,
        output: tokens.output + tokens.thoughts,
        cache_read: tokens.cached,
        cache_creation: 0,
        cache_creation_1h: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_with_tokens_is_one_request() {
        let line = r#"{"id":"m1","timestamp":"2026-11-28T01:55:01.068Z","type":"gemini","content":"","tokens":{"input":1000,"output":20,"cached":400,"thoughts":5,"tool":0,"total":1025},"model":"gemini-2.5-pro"}"#;
        assert!(may_matter(line.as_bytes()));
        let entry = scan(line).expect("an entry");
        assert_eq!(entry.message_id.as_deref(), Some("m1"));
        assert_eq!(entry.model, "gemini-2.5-pro");
        assert_eq!(
            entry.tokens,
            Tokens {
                input: 600,
                output: 25,
                cache_read: 400,
                cache_creation: 0,
                cache_creation_1h: 0
            }
        );
        let user = r#"{"id":"u1","timestamp":"2026-11-28T01:55:01.068Z","type":"user","content":[{"text":"hi"}]}"#;
        assert!(!may_matter(user.as_bytes()));
        assert_eq!(scan(user), None);
        let no_tokens = r#"{"id":"m2","type":"gemini","content":"x"}"#;
        assert_eq!(scan(no_tokens), None);
    }
}
