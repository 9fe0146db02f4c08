//! What the real Claude Code 2.1.332 CLI wrote, driven by `tests/real_claude.rs` against its mock
//! API (`fixtures/claude-2.1.332/`, rewritten by `FAMILIAR_UPDATE_FIXTURES=1 cargo test
//! --workspace --test real_claude -- --skip previous`). Each file matches its reviewed snapshot,
//! and each fact of issue 25 that 2.1.197's files could not show is pinned by a test named
//! after the bug (`claude_cli.rs` keeps 2.1.197's).

mod common;

use std::path::PathBuf;

use common::{events_of, render};
use familiar_transcript::{ErrorKind, Event, EventKind, Normalizer, NormalizerConfig, Status};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/claude-2.1.332")
}

fn read(name: &str) -> Vec<u8> {
    let path = dir().join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn read_events(name: &str) -> Vec<Event> {
    let (events, diagnostics) = events_of(&read(name));
    assert!(diagnostics.is_empty(), "{name}: {diagnostics:?}");
    events
}

fn of_kind(events: &[Event], kind: EventKind) -> Vec<&Event> {
    events.iter().filter(|event| event.kind == kind).collect()
}

/// A normalizer that read the whole of `name`.
fn normalized(name: &str, config: NormalizerConfig) -> (Normalizer, Vec<Event>) {
    let mut normalizer = Normalizer::new(config);
    let mut events = Vec::new();
    for (index, line) in read(name).split(|&b| b == b'\n').enumerate() {
        normalizer
            .push_line(line, index as u64 + 1, &mut events)
            .expect("a line the CLI wrote");
    }
    normalizer.flush(&mut events);
    (normalizer, events)
}

#[test]
fn every_cli_file_parses_and_matches_its_snapshot() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .expect("fixtures/claude-2.1.332")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".jsonl") && name != "sessions-file.jsonl")
        .collect();
    names.sort();
    assert!(names.len() >= 13, "{names:?}");
    for name in names {
        let events = read_events(&name);
        assert!(!events.is_empty(), "{name}");
        insta::assert_snapshot!(format!("cli-2.1.332-{name}"), render(&events));
        // Everything the pinned CLI writes is known: a type it adds shows up here first.
        let (normalizer, _) = normalized(&name, NormalizerConfig::default());
        let metrics = normalizer.metrics();
        assert!(metrics.unknown.is_empty(), "{name}: {:?}", metrics.unknown);
        if !name.contains(".stream") {
            assert_eq!(metrics.cli_version.as_deref(), Some("2.1.332"), "{name}");
        }
    }
}

#[test]
fn every_subagent_became_a_second_session() {
    // `api-request` records in the subagent's file carry `agentId` but no `isSidechain`.
    let events = read_events("main-subagent.jsonl");
    assert_eq!(
        of_kind(&events, EventKind::SessionStart).len(),
        1,
        "{events:#?}"
    );
    assert!(
        events
            .iter()
            .all(|event| event.sidechain && event.agent.is_some()),
        "{events:#?}"
    );
    // The file's place alone says whose records they are: a record naming no agent at all.
    let config = NormalizerConfig {
        subagent: Some("a1".to_owned()),
        ..NormalizerConfig::default()
    };
    let mut normalizer = Normalizer::new(config);
    let mut out = Vec::new();
    for line in [
        r#"{"type":"api-request","sessionId":"s","params":{"model":"claude-opus-5-5"}}"#,
        r#"{"type":"user","sessionId":"s","message":{"role":"user","content":"look"}}"#,
    ] {
        normalizer
            .push_line(line.as_bytes(), 1, &mut out)
            .expect("line");
    }
    assert_eq!(of_kind(&out, EventKind::SessionStart).len(), 1, "{out:#?}");
    assert!(out.iter().all(|event| event.agent.as_deref() == Some("a1")));
}

#[test]
fn auto_and_bypass_mode_showed_approval_no_one_was_asked_for() {
    for name in [
        "main.jsonl",
        "main-subagent.jsonl",
        "denied.jsonl",
        "todo.jsonl",
    ] {
        let events = read_events(name);
        assert!(
            events
                .iter()
                .all(|event| event.status != Status::WaitingForApproval),
            "{name}: {events:#?}"
        );
    }
}

#[test]
fn a_finished_background_agent_left_the_status_at_working() {
    let events = read_events("main.jsonl");
    let position = |kind| events.iter().position(|event| event.kind == kind);
    let success = position(EventKind::Success).expect("the turn's success");
    let end = position(EventKind::SubagentEnd).expect("the subagent's end");
    // The Agent result only says "launched": the subagent ends at its `<task-notification>`.
    assert!(end > success, "{events:#?}");
    assert_eq!(events[end].description.as_deref(), Some("Look around"));
    // The CLI's turn about that notification ends waiting for the user, with no second
    // `success` (no prompt of the user's started it).
    let after: Vec<&Event> = events[end..]
        .iter()
        .take_while(|event| event.kind != EventKind::Prompt)
        .collect();
    let status = after
        .iter()
        .find(|event| event.kind == EventKind::Status)
        .expect("a status event");
    assert_eq!(status.status, Status::WaitingForInput);
    assert!(after.iter().all(|event| event.kind != EventKind::Success));
}

#[test]
fn the_last_retry_notice_was_taken_for_the_final_error() {
    let events = read_events("ratelimit.jsonl");
    let errors = of_kind(&events, EventKind::Error);
    assert_eq!(errors.len(), 3, "{errors:#?}");
    for (attempt, retry) in errors[..2].iter().enumerate() {
        assert_eq!(retry.retry_attempt, Some(attempt as u64 + 1));
        assert_eq!(retry.max_retries, Some(2));
        // The CLI retries after the notice numbered `maxRetries` too.
        assert_eq!(retry.status, Status::Working, "{retry:?}");
        assert_eq!(retry.error_code.as_deref(), Some("rate_limit"));
        // `error.formatted`, not "429 429 {json}".
        assert_eq!(retry.text.as_deref(), Some("429 mock"));
    }
    assert_eq!(errors[2].status, Status::WaitingForInput);
    assert_eq!(errors[2].error_code.as_deref(), Some("rate_limit"));
    let overload = read_events("overload.jsonl");
    let codes: Vec<Option<&str>> = of_kind(&overload, EventKind::Error)
        .iter()
        .map(|event| event.error_code.as_deref())
        .collect();
    assert_eq!(codes, [Some("server_error"); 3]);
}

#[test]
fn the_window_was_known_only_at_the_first_reply() {
    // A `model` attachment names Opus 5.5 right after the prompt, before any request.
    let events = read_events("ratelimit.jsonl");
    // Every request failed: no assistant record ever named the model.
    assert!(events.iter().all(|event| event.model.is_none()));
    let prompt = of_kind(&events, EventKind::Prompt)[0].line;
    for event in events.iter().filter(|event| event.line > prompt) {
        assert_eq!(event.context_limit, 1_000_000, "{event:?}");
    }
    let (normalizer, _) = normalized("ratelimit.jsonl", NormalizerConfig::default());
    assert_eq!(normalizer.context_limit(), 1_000_000);
}

#[test]
fn p_refusals_in_the_new_wording_were_tool_errors() {
    // "Output redirection to '…' needs approval. …": refused by the CLI's rules
    // (`permissionDecision` reject, source config; stream-json `permission_denied`).
    for name in ["denied.jsonl", "denied.stream.jsonl"] {
        let events = read_events(name);
        let errors: Vec<(Option<&str>, Option<ErrorKind>)> = of_kind(&events, EventKind::Error)
            .iter()
            .map(|event| (event.tool.as_deref(), event.error))
            .collect();
        assert_eq!(
            errors,
            [
                (Some("Read"), Some(ErrorKind::Denied)),
                (Some("Bash"), Some(ErrorKind::Denied))
            ],
            "{name}"
        );
    }
}

#[test]
fn the_clis_own_cost_figure_was_not_read() {
    let (normalizer, _) = normalized("main.jsonl", NormalizerConfig::default());
    let text = String::from_utf8(read("main.jsonl")).expect("UTF-8");
    let last = text
        .lines()
        .filter(|line| line.contains("\"type\":\"cost-state\""))
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|record| record["totalCostUSD"].as_f64())
        .next_back()
        .expect("a cost-state record");
    assert_eq!(normalizer.metrics().cli_cost_usd, Some(last));
}

#[test]
fn record_types_never_seen_were_skipped_in_silence() {
    let mut normalizer = Normalizer::default();
    let mut out = Vec::new();
    let lines = [
        r#"{"type":"hologram","sessionId":"s","version":"9.9.9"}"#,
        r#"{"type":"hologram","sessionId":"s"}"#,
        r#"{"type":"system","subtype":"weather","sessionId":"s"}"#,
        r#"{"type":"attachment","attachment":{"type":"smell"},"sessionId":"s"}"#,
        r#"{"type":"atis-latch","sessionId":"s"}"#,
    ];
    let mut news = Vec::new();
    for (index, line) in lines.iter().enumerate() {
        normalizer
            .push_line(line.as_bytes(), index as u64 + 1, &mut out)
            .expect("line");
        news.extend(normalizer.take_unknown_news());
    }
    // Each said once, every one counted.
    assert_eq!(news, ["hologram", "system/weather", "attachment/smell"]);
    let unknown = &normalizer.metrics().unknown;
    assert_eq!(unknown.get("hologram"), Some(2));
    assert_eq!(unknown.len(), 3);
    assert_eq!(normalizer.metrics().cli_version.as_deref(), Some("9.9.9"));
}

#[test]
fn the_clis_own_markup_showed_in_tool_error_texts() {
    // 2.1.332 refuses a tool it does not have with `<tool_use_error>…</tool_use_error>`: the
    // words are for a person (the window's log, a notification), the tags for the model.
    let events = read_events("interactive.jsonl");
    let texts: Vec<&str> = of_kind(&events, EventKind::Error)
        .iter()
        .filter(|event| event.tool.as_deref() == Some("TaskCreate"))
        .filter_map(|event| event.text.as_deref())
        .collect();
    assert!(!texts.is_empty(), "{events:#?}");
    for text in texts {
        assert!(text.starts_with("Error: No such tool available"), "{text}");
        assert!(!text.contains("tool_use_error"), "{text}");
    }
}
