//! Tokens of a Copilot CLI session for `familiar stats`: each `session.usage_record` is one
//! request (a subagent's too), keyed by the record's `id` (written once).
//!
//! A compaction's summary request is in no usage record: its `session.compaction_complete`
//! holds it (`compactionTokensUsed`, the same fields), keyed by that record's `id`.
//!
//! `inputTokens` includes the cached tokens (seen against the mock: `prompt_tokens` 1000 with
//! `cached_tokens` 400 was written `inputTokens: 1000, cacheReadTokens: 400`): uncached input
//! is their difference, priced at the input rate; cached input at the cache-read rate;
//! `cacheWriteTokens` at the cache-write rate; output is `outputTokens` ([`crate::pricing`]).

use std::borrow::Cow;

use serde::Deserialize;

use crate::pricing::Tokens;
use crate::usage::UsageEntry;

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "agentId", default)]
    agent_id: Option<Cow<'a, str>>,
    #[serde(default)]
    data: Option<Data>,
}

#[derive(Deserialize)]
struct Data {
    usage: Option<Usage>,
    #[serde(rename = "compactionTokensUsed")]
    compaction: Option<Usage>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    model: Option<String>,
    #[serde(rename = "inputTokens", default)]
    input: u64,
    #[serde(rename = "outputTokens", default)]
    output: u64,
    #[serde(rename = "cacheReadTokens", default)]
    cache_read: u64,
    #[serde(rename = "cacheWriteTokens", default)]
    cache_write: u64,
}

/// `true` for a line that may be a usage record or a compaction's (`"session.usage_record"`
/// or `"compactionTokensUsed"` in it).
pub fn may_matter(line: &[u8]) -> bool {
    crate::contains!(line, b"\"session.usage_record\"")
        || crate::contains!(line, b"\"compactionTokensUsed\"")
}

/// The usage entry of one Copilot CLI line, if it is a usage record.
pub fn scan(json: &str) -> Option<UsageEntry<'static>> {
    let line: Line<'_> = serde_json::from_str(json).ok()?;
    let data = line.data?;
    let usage = match line.kind.as_deref() {
        Some("session.usage_record") => data.usage?,
        Some("session.compaction_complete") => data.compaction?,
        _ => return None,
    };
    Some(UsageEntry {
        message_id: Some(Cow::Owned(line.id?.into_owned())),
        request_id: None,
        model: Cow::Owned(usage.model.unwrap_or_default()),
        tokens: Tokens {
            input: usage.input.saturating_sub(usage.cache_read),
            output: usage.output,
            cache_read: usage.cache_read,
            cache_creation: usage.cache_write,
            cache_creation_1h: 0,
        },
        sidechain: line.agent_id.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_usage_record_is_one_request_its_cached_tokens_apart() {
        let fixture = include_str!("../../../../fixtures/copilot-1.0.102/cached.jsonl");
        let entries: Vec<_> = fixture
            .lines()
            .filter(|line| may_matter(line.as_bytes()))
            .filter_map(scan)
            .collect();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].model, "gpt-4.1");
        assert_eq!(
            entries[0].tokens,
            Tokens {
                input: 600,
                output: 30,
                cache_read: 400,
                cache_creation: 0,
                cache_creation_1h: 0
            }
        );
        assert_eq!(
            scan(r#"{"type":"session.start","data":{},"id":"x","parentId":null}"#),
            None
        );
    }

    #[test]
    fn a_compactions_summary_request_is_counted_from_its_record() {
        let fixture = include_str!("../../../../fixtures/copilot-1.0.102/compact.jsonl");
        let entries: Vec<_> = fixture
            .lines()
            .filter(|line| may_matter(line.as_bytes()))
            .filter_map(scan)
            .collect();
        // Four requests of the agent, and the summary's (3,000 in, 30 out).
        let input: Vec<u64> = entries.iter().map(|e| e.tokens.input).collect();
        assert_eq!(input, [60_000, 20_000, 3_000, 21_000, 22_000]);
        assert_eq!(entries[2].tokens.output, 30);
    }
}
