//! Token counts are read leniently (issue 28): a count that is not an unsigned integer (`-1`,
//! `1.5`, `"12"`, `1e400`) dropped the whole record, its tool use included, and one of
//! `2^63 - 1` pinned the context window at 9.2e18 tokens. Now such a count is missing, the
//! rest of the record is read, and the fast path and serde agree.

use familiar_model::EventKind;
use familiar_transcript::{NormalizerConfig, normalize_bytes};

/// An assistant record with a Bash tool use whose usage's `input_tokens` is `count`.
fn record(count: &str) -> String {
    format!(
        r#"{{"type":"assistant","sessionId":"s-tok","timestamp":"2026-02-11T10:00:00.000Z","message":{{"id":"msg_1","role":"assistant","model":"claude-opus-4-6","content":[{{"type":"tool_use","id":"toolu_1","name":"Bash","input":{{"command":"cargo test"}}}}],"usage":{{"input_tokens":{count},"output_tokens":7,"cache_read_input_tokens":1000,"cache_creation_input_tokens":0}}}}}}
"#
    )
}

#[test]
fn an_odd_token_count_is_missing_and_the_record_is_read() {
    for count in [
        "-1",
        "1.5",
        r#""12""#,
        "1e400",
        "9223372036854775807",
        "null",
        "[1]",
    ] {
        let (events, diagnostics) =
            normalize_bytes(record(count).as_bytes(), &NormalizerConfig::default());
        assert!(diagnostics.is_empty(), "{count}: {diagnostics:?}");
        let bash = events
            .iter()
            .find(|event| event.kind == EventKind::Bash)
            .unwrap_or_else(|| panic!("{count}: the tool use was dropped: {events:?}"));
        assert_eq!(bash.target.as_deref(), Some("cargo test"));
        // The other counts still make the context; the odd one counts as none.
        assert_eq!(bash.context_used, Some(1000), "{count}");
        assert_eq!(bash.context_limit, 200_000, "{count}");
    }
    let (events, _) = normalize_bytes(record("2500").as_bytes(), &NormalizerConfig::default());
    assert_eq!(events.iter().find_map(|e| e.context_used), Some(3500));
}
