//! One test per normalizer rule, each on a small transcript in `fixtures/`.

mod common;

use common::{events_of, own_fixture};
use familiar_transcript::{
    DiagnosticKind, ErrorKind, EventKind, Normalizer, NormalizerConfig, PriceTable, Status,
    normalize_bytes,
};

fn kinds(events: &[familiar_transcript::Event]) -> Vec<&'static str> {
    events.iter().map(|event| event.kind.as_str()).collect()
}

#[test]
fn the_four_error_kinds_stay_apart() {
    let (events, diagnostics) = events_of(&own_fixture("errors-each-kind.jsonl"));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let errors: Vec<_> = events
        .iter()
        .filter(|event| event.kind == EventKind::Error)
        .map(|event| (event.line, event.error.expect("error kind set")))
        .collect();
    assert_eq!(
        errors,
        [
            (3, ErrorKind::Tool),
            (5, ErrorKind::Rejected),
            (6, ErrorKind::Interrupted),
            (8, ErrorKind::Api),
            (9, ErrorKind::Api),
        ]
    );
    let tool_error = &events
        .iter()
        .find(|e| e.line == 3 && e.kind == EventKind::Error)
        .expect("tool error");
    assert_eq!(tool_error.tool.as_deref(), Some("Bash"));
    assert_eq!(tool_error.target.as_deref(), Some("cargo test"));
    assert!(
        tool_error
            .text
            .as_deref()
            .is_some_and(|t| t.starts_with("Exit code 101"))
    );

    let retry = events
        .iter()
        .find(|e| e.line == 8)
        .expect("api_error retry");
    assert_eq!(retry.cause.as_deref(), Some("ConnectionRefused"));
    assert_eq!(retry.retry_attempt, Some(1));
    assert_eq!(retry.max_retries, Some(10));
    assert_eq!(retry.retry_in_ms, Some(563.5));

    let limit = events.iter().find(|e| e.line == 9).expect("rate limit");
    assert_eq!(limit.error_code.as_deref(), Some("rate_limit"));
    assert_eq!(
        limit.text.as_deref(),
        Some("You've hit your session limit · resets 11:30am (Europe/Berlin)")
    );
    assert_eq!(limit.status, Status::WaitingForInput);
    // The stop hook after the API error does not make the failed turn a success.
    assert!(!events.iter().any(|e| e.kind == EventKind::Success));
    // The synthetic error message does not reset the context meter.
    assert_eq!(limit.context_used, Some(12_903));
}

#[test]
fn compaction_sets_context_to_post_tokens() {
    let (events, _) = events_of(&own_fixture("compaction-with-post-tokens.jsonl"));
    let boundary = events
        .iter()
        .find(|event| event.kind == EventKind::CompactBoundary)
        .expect("compact_boundary");
    assert_eq!(boundary.trigger.as_deref(), Some("auto"));
    assert_eq!(boundary.pre_tokens, Some(155_317));
    assert_eq!(boundary.post_tokens, Some(21_034));
    assert_eq!(boundary.context_used, Some(21_034));
    // The compact summary is not a prompt.
    assert_eq!(
        events
            .iter()
            .filter(|e| e.kind == EventKind::Prompt)
            .count(),
        1
    );
}

#[test]
fn compaction_without_post_tokens_makes_context_unknown_until_next_usage() {
    let (events, _) = events_of(&own_fixture("compaction-without-post-tokens.jsonl"));
    let boundary = events
        .iter()
        .find(|event| event.kind == EventKind::CompactBoundary)
        .expect("compact_boundary");
    assert_eq!(boundary.trigger.as_deref(), Some("manual"));
    assert_eq!(boundary.post_tokens, None);
    assert_eq!(boundary.context_used, None);
    let next_prompt = events
        .iter()
        .find(|e| e.line == 5)
        .expect("prompt after compaction");
    assert_eq!(next_prompt.context_used, None);
    let last = events.last().expect("events");
    assert_eq!(last.context_used, Some(18_908));
}

#[test]
fn usage_over_200k_switches_to_the_1m_window() {
    let (events, _) = events_of(&own_fixture("context-over-200k.jsonl"));
    let limits: Vec<_> = events
        .iter()
        .map(|e| (e.context_used, e.context_limit))
        .collect();
    assert_eq!(limits[2], (Some(160_004), 200_000));
    assert_eq!(limits[3], (Some(252_004), 1_000_000));
}

#[test]
fn a_1m_model_id_sets_the_1m_window_from_the_start() {
    let (events, _) = events_of(&own_fixture("stream-json-model-1m.jsonl"));
    assert!(events.iter().all(|event| event.context_limit == 1_000_000));
    assert_eq!(
        kinds(&events),
        ["session_start", "reading", "success", "status"]
    );
}

#[test]
fn the_context_limit_override_wins() {
    let config = NormalizerConfig {
        context_limit: Some(500_000),
        ..NormalizerConfig::default()
    };
    let (events, _) = normalize_bytes(&own_fixture("context-over-200k.jsonl"), &config);
    assert!(events.iter().all(|event| event.context_limit == 500_000));
}

#[test]
fn split_message_tokens_are_counted_once_with_the_largest_output() {
    // The same parse of each line feeds the normalizer and the usage ledger, as in `stats`.
    let bytes = own_fixture("split-message-usage.jsonl");
    let mut normalizer = Normalizer::default();
    let mut ledger = familiar_transcript::Ledger::new();
    let mut events = Vec::new();
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        familiar_transcript::usage::push_line(
            &mut normalizer,
            &mut ledger,
            line,
            index as u64 + 1,
            &mut events,
        )
        .expect("valid line");
    }
    let tokens = ledger.tokens();
    assert_eq!(tokens.input, 10 + 4);
    assert_eq!(tokens.output, 95 + 12);
    assert_eq!(tokens.cache_read, 20_000 + 20_400);
    assert_eq!(tokens.cache_creation, 300 + 60);
    // end_turn ends the turn: one success.
    assert_eq!(
        kinds(&events),
        [
            "session_start",
            "prompt",
            "thinking",
            "text",
            "reading",
            "text",
            "success",
            "status"
        ]
    );
    // An empty thinking block (only a signature) is still thinking.
    assert_eq!(events[2].text.as_deref(), Some(""));
    let cost = ledger.cost_usd(&PriceTable::default());
    let expected = (14.0 * 3.0 + 107.0 * 15.0 + 40_400.0 * 0.3 + 360.0 * 3.75) / 1e6;
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
}

#[test]
fn slash_commands_are_prompts_with_command_and_think_levels_are_read() {
    let (events, _) = events_of(&own_fixture("slash-command-and-think.jsonl"));
    let prompts: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::Prompt)
        .map(|e| {
            (
                e.command.as_deref(),
                e.text.as_deref().unwrap_or(""),
                e.think,
            )
        })
        .collect();
    assert_eq!(
        prompts,
        [
            (Some("/clear"), "/clear", Some(0)),
            (
                Some("/review"),
                "/review think hard about src/lib.rs",
                Some(2)
            ),
            (Some("/model"), "/model", Some(0)),
            (None, "ultrathink: why does the parser drop lines?", Some(3)),
            (None, "think harder about it", Some(3)),
            (None, "I think so", Some(1)),
        ]
    );
}

#[test]
fn meta_compact_summary_and_injected_records_are_not_prompts() {
    let (events, _) = events_of(&own_fixture("meta-and-injected-user-records.jsonl"));
    assert_eq!(kinds(&events), ["session_start", "prompt"]);
    assert_eq!(events[1].text.as_deref(), Some("the only real prompt"));
}

#[test]
fn the_older_flat_shape_is_read() {
    let (events, diagnostics) = events_of(&own_fixture("flat-records.jsonl"));
    assert!(diagnostics.is_empty());
    assert_eq!(
        kinds(&events),
        [
            "session_start",
            "prompt",
            "text",
            "reading",
            "writing",
            "error"
        ]
    );
    assert_eq!(
        events[3].target.as_deref(),
        Some("/home/user/proj/README.md")
    );
    assert_eq!(events[5].error, Some(ErrorKind::Tool));
    assert_eq!(events[5].tool.as_deref(), Some("edit"));
}

#[test]
fn stream_json_error_result_is_an_api_error() {
    let (events, _) = events_of(&own_fixture("stream-json-error-max-turns.jsonl"));
    let error = events.last().expect("events");
    assert_eq!(error.kind, EventKind::Error);
    assert_eq!(error.error, Some(ErrorKind::Api));
    assert_eq!(error.error_code.as_deref(), Some("error_max_turns"));
    assert_eq!(error.duration_ms, Some(30_000));
    assert!(!events.iter().any(|e| e.kind == EventKind::Success));
}

#[test]
fn json_mode_arrays_single_line_and_pretty_give_the_same_events() {
    let (one_line, d1) = events_of(&own_fixture("json-mode-array.json"));
    let (pretty, d2) = events_of(&own_fixture("json-mode-array-pretty.json"));
    assert!(d1.is_empty() && d2.is_empty(), "{d1:?} {d2:?}");
    assert_eq!(
        kinds(&one_line),
        ["session_start", "bash", "text", "success", "status"]
    );
    assert_eq!(one_line, pretty);
    assert_eq!(one_line[3].duration_ms, Some(4000));
}

#[test]
fn malformed_lines_are_reported_and_skipped() {
    let (events, diagnostics) = events_of(&own_fixture("malformed-line.jsonl"));
    let reported: Vec<_> = diagnostics.iter().map(|d| d.line).collect();
    assert_eq!(reported, [2, 3, 4]);
    assert!(matches!(diagnostics[0].kind, DiagnosticKind::Malformed(_)));
    assert_eq!(diagnostics[1].kind, DiagnosticKind::NotAnObject);
    let prompts: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::Prompt)
        .map(|e| e.line)
        .collect();
    assert_eq!(prompts, [1, 6]);
}

#[test]
fn a_truncated_last_line_is_an_unfinished_write_not_an_error() {
    let (events, diagnostics) = events_of(&own_fixture("truncated-last-line.jsonl"));
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].line, 2);
    assert_eq!(diagnostics[0].kind, DiagnosticKind::Unfinished { len: 70 });
    assert_eq!(kinds(&events), ["session_start", "prompt"]);
}

#[test]
fn invalid_utf8_is_reported_with_its_offset() {
    let (events, diagnostics) = events_of(&own_fixture("invalid-utf8.jsonl"));
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].line, 2);
    assert!(matches!(
        diagnostics[0].kind,
        DiagnosticKind::InvalidUtf8 { .. }
    ));
    let prompts: Vec<_> = events.iter().filter_map(|e| e.text.as_deref()).collect();
    assert_eq!(prompts, ["before", "after"]);
}

#[test]
fn a_huge_line_over_the_cap_is_skipped_and_the_next_line_read() {
    let mut input = own_fixture("meta-and-injected-user-records.jsonl");
    let huge = format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{}\"}}}}\n",
        "x".repeat(300_000)
    );
    let split_at = input.iter().position(|&b| b == b'\n').expect("lines") + 1;
    input.splice(split_at..split_at, huge.into_bytes());
    let config = NormalizerConfig {
        max_line_bytes: 100_000,
        ..NormalizerConfig::default()
    };
    let (events, diagnostics) = normalize_bytes(&input, &config);
    assert_eq!(diagnostics.len(), 1);
    assert_eq!(diagnostics[0].line, 2);
    assert!(
        matches!(diagnostics[0].kind, DiagnosticKind::TooLong { len, cap: 100_000 } if len > 300_000)
    );
    assert_eq!(
        events.last().and_then(|e| e.text.as_deref()),
        Some("the only real prompt")
    );
    assert_eq!(events.last().map(|e| e.line), Some(7));
}

#[test]
fn unknown_record_types_and_fields_are_counted_not_errors() {
    let input = br#"{"type":"brand-new-record","sessionId":"s1","whatever":{"deep":[1,2]}}
{"type":"user","message":{"role":"user","content":"hi","extra":true},"sessionId":"s1","newField":1}
"#;
    let mut normalizer = Normalizer::default();
    let mut events = Vec::new();
    for (index, line) in input.split(|&b| b == b'\n').enumerate() {
        normalizer
            .push_line(line, index as u64 + 1, &mut events)
            .expect("no diagnostic");
    }
    assert_eq!(kinds(&events), ["session_start", "prompt"]);
    assert_eq!(
        normalizer.metrics().records.get("brand-new-record"),
        Some(1)
    );
}

/// Tool results are matched to their calls by id among up to 256 waiting calls (the ids are
/// hashed for the search); the oldest call is let go when a 257th comes.
#[test]
fn a_result_finds_its_call_among_many_and_the_oldest_call_is_let_go() {
    let call = |n: usize| {
        format!(
            r#"{{"type":"assistant","sessionId":"s","message":{{"id":"msg_{n}","role":"assistant","content":[{{"type":"tool_use","id":"toolu_{n:04}","name":"Bash","input":{{"command":"job {n}"}}}}]}},"timestamp":"2026-02-10T10:00:02.000Z"}}"#
        )
    };
    let failed = |n: usize| {
        format!(
            r#"{{"type":"user","sessionId":"s","message":{{"role":"user","content":[{{"tool_use_id":"toolu_{n:04}","type":"tool_result","content":"Exit code 1","is_error":true}}]}},"timestamp":"2026-02-10T10:00:03.000Z"}}"#
        )
    };
    let mut lines: Vec<String> = (0..300).map(call).collect();
    // 300 calls: the first 44 are let go, 44..300 still wait.
    lines.extend([
        failed(150),
        failed(10),
        failed(299),
        failed(44),
        failed(150),
    ]);
    let input = lines.join("\n") + "\n";
    let (events, diagnostics) = normalize_bytes(input.as_bytes(), &NormalizerConfig::default());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let targets: Vec<Option<&str>> = events
        .iter()
        .filter(|event| event.kind == EventKind::Error)
        .map(|event| event.target.as_deref())
        .collect();
    // A result answered once is no longer waiting; one let go is known by no call.
    assert_eq!(
        targets,
        [Some("job 150"), None, Some("job 299"), Some("job 44"), None]
    );
}
