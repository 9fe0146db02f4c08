//! Tokens of a Qwen Code session for `familiar stats`: each `assistant` record with
//! `usageMetadata` is one request, keyed by its `uuid` (written once).
//!
//! `promptTokenCount` includes the cached tokens: uncached input is their difference, priced
//! at the input rate; cached input (`cachedContentTokenCount`) at the cache-read rate; output
//! is `candidatesTokenCount`, the answer's `completion_tokens`, reasoning included (its
//! `thoughtsTokenCount` is a part of it, not added: seen against the mock in
//! `tests/real_qwen.rs`) ([`crate::pricing`]).

use std::borrow::Cow;

use serde::Deserialize;

use crate::pricing::Tokens;
use crate::usage::UsageEntry;

use super::shapes::UsageMetadata;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    uuid: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(rename = "usageMetadata", default)]
    usage: Option<UsageMetadata>,
}

/// `true` for a line that may be a reply with usage (`"usageMetadata":{` in it).
pub fn may_matter(line: &[u8]) -> bool {
    crate::contains!(line, b"\"usageMetadata\":{")
}

/// The usage entry of one Qwen Code line, if it is a reply with usage.
pub fn scan(json: &str) -> Option<UsageEntry<'static>> {
    let line: Line<'_> = serde_json::from_str(json).ok()?;
    if line.kind.as_deref() != Some("assistant") {
        return None;
    }
    let usage = line.usage?;
    Some(UsageEntry {
        message_id: Some(Cow::Owned(line.uuid?.into_owned())),
        request_id: None,
        model: Cow::Owned(line.model.as_deref().unwrap_or("").to_owned()),
        tokens: tokens_of(usage),
        sidechain: false,
    })
}

/// Qwen Code's usage in the ledger's categories (see the module documentation).
pub fn tokens_of(usage: UsageMetadata) -> Tokens {
    Tokens {
        input: usage.prompt.saturating_sub(usage.cached),
        output: usage.candidates,
        cache_read: usage.cached,
        cache_creation: 0,
        cache_creation_1h: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_with_usage_is_one_request() {
        let line = r#"{"uuid":"r1","parentUuid":"p","sessionId":"s","timestamp":"2026-11-28T04:36:20.000Z","type":"assistant","model":"qwen3-coder-plus","message":{"role":"model","parts":[{"text":"hi"}]},"usageMetadata":{"promptTokenCount":1100,"candidatesTokenCount":20,"thoughtsTokenCount":5,"totalTokenCount":1120,"cachedContentTokenCount":400},"contextWindowSize":1000000}"#;
        assert!(may_matter(line.as_bytes()));
        let entry = scan(line).expect("an entry");
        assert_eq!(entry.message_id.as_deref(), Some("r1"));
        assert_eq!(entry.model, "qwen3-coder-plus");
        assert_eq!(
            entry.tokens,
            Tokens {
                input: 700,
                output: 20,
                cache_read: 400,
                cache_creation: 0,
                cache_creation_1h: 0
            }
        );
        let user =
            r#"{"uuid":"u1","type":"user","message":{"role":"user","parts":[{"text":"hi"}]}}"#;
        assert!(!may_matter(user.as_bytes()));
        assert_eq!(scan(user), None);
    }
}
