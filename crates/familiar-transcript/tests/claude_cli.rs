//! Transcripts and stream-json that the real Claude Code CLI wrote, driven by the end-to-end
//! harness `tests/real_claude.rs` against its mock API (`fixtures/claude-2.1.197/`, rewritten by
//! `FAMILIAR_UPDATE_FIXTURES=1 cargo test --test real_claude`). Each file matches its reviewed
//! snapshot, and each fact of issue 11 is pinned by a test named after the bug.

mod common;

use std::path::PathBuf;

use common::{events_of, render};
use familiar_transcript::{ErrorKind, Event, EventKind, Normalizer, NormalizerConfig, Status};

const VERSION_DIR: &str = "claude-2.1.197";

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(VERSION_DIR)
}

fn read_events(name: &str) -> Vec<Event> {
    let path = dir().join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let (events, diagnostics) = events_of(&bytes);
    assert!(diagnostics.is_empty(), "{name}: {diagnostics:?}");
    events
}

fn of_kind(events: &[Event], kind: EventKind) -> Vec<&Event> {
    events.iter().filter(|event| event.kind == kind).collect()
}

#[test]
fn every_cli_file_parses_and_matches_its_snapshot() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .expect("fixtures/claude-2.1.197")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert!(names.len() >= 12, "{names:?}");
    for name in names {
        let events = read_events(&name);
        assert!(!events.is_empty(), "{name}");
        insta::assert_snapshot!(format!("cli-{name}"), render(&events));
    }
}

#[test]
fn task_tools_showed_as_generic_tool() {
    let events = read_events("main.jsonl");
    let tasks: Vec<(&str, Option<&str>)> = events
        .iter()
        .filter(|e| e.tool.as_deref().is_some_and(|t| t.starts_with("Task")))
        .map(|e| (e.tool.as_deref().unwrap_or(""), e.target.as_deref()))
        .collect();
    assert_eq!(
        tasks,
        [
            ("TaskCreate", Some("Ship the fix")),
            ("TaskUpdate", Some("1"))
        ]
    );
    assert!(
        events
            .iter()
            .filter(|e| e.tool.as_deref().is_some_and(|t| t.starts_with("Task")))
            .all(|e| e.kind == EventKind::Thinking)
    );
    // CLAUDE_CODE_ENABLE_TASKS=0 brings TodoWrite back: planning too.
    let todo = read_events("todo.jsonl");
    let plan = of_kind(&todo, EventKind::Thinking);
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0].tool.as_deref(), Some("TodoWrite"));
}

#[test]
fn status_stuck_working_after_compact() {
    let events = read_events("main.jsonl");
    let prompt = events
        .iter()
        .position(|e| e.command.as_deref() == Some("/compact"))
        .expect("the /compact prompt");
    let boundary = of_kind(&events, EventKind::CompactBoundary);
    assert_eq!(boundary.len(), 1);
    assert_eq!(boundary[0].trigger.as_deref(), Some("manual"));
    let after = &events[prompt + 1];
    assert_eq!(after.kind, EventKind::Status);
    assert_eq!(after.status, Status::WaitingForInput);
    assert!(
        !events[prompt..]
            .iter()
            .take_while(|e| e.kind != EventKind::Prompt || e.command.is_some())
            .any(|e| e.kind == EventKind::Success),
        "a local command's end is no success"
    );

    // The file cut right after the compaction: the session rests.
    let bytes = std::fs::read(dir().join("main.jsonl")).expect("main.jsonl");
    let cut: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    for (at, line) in cut.iter().enumerate().take(after.line as usize) {
        normalizer
            .push_line(line, at as u64 + 1, &mut out)
            .expect("a good line");
    }
    assert_eq!(normalizer.status(), Status::WaitingForInput);
}

#[test]
fn stream_json_api_retry_made_no_event_and_result_error_said_success() {
    for (name, code, status) in [
        ("ratelimit.stream.jsonl", "rate_limit", "429"),
        ("overload.stream.jsonl", "overloaded", "529"),
    ] {
        let events = read_events(name);
        let errors: Vec<&Event> = of_kind(&events, EventKind::Error);
        // Two retries announced, then the final failure, once.
        assert_eq!(errors.len(), 3, "{name}: {errors:?}");
        for (attempt, retry) in errors[..2].iter().enumerate() {
            assert_eq!(retry.error, Some(ErrorKind::Api));
            assert_eq!(retry.error_code.as_deref(), Some(code), "{name}");
            assert_eq!(retry.retry_attempt, Some(attempt as u64 + 1));
            assert_eq!(retry.max_retries, Some(2));
            assert!(retry.retry_in_ms.is_some_and(|ms| ms > 0.0));
            assert_eq!(
                retry.text.as_deref(),
                Some(format!("{status} {code}").as_str())
            );
            assert_eq!(
                retry.status,
                Status::Working,
                "a retry does not end the turn"
            );
        }
        let last = errors[2];
        assert_eq!(last.error, Some(ErrorKind::Api));
        assert_eq!(last.retry_attempt, None);
        assert_ne!(last.error_code.as_deref(), Some("success"));
        assert_eq!(last.status, Status::WaitingForInput);
        assert!(of_kind(&events, EventKind::Success).is_empty(), "{name}");
    }
}

#[test]
fn stream_json_result_error_alone_carries_its_http_status() {
    // The `result` line of a failed run by itself (what `--output-format json` readers keep).
    let bytes = std::fs::read(dir().join("ratelimit.stream.jsonl")).expect("stream");
    let result = bytes
        .split(|&b| b == b'\n')
        .find(|line| line.starts_with(b"{\"type\":\"result\""))
        .expect("a result line");
    let mut line = result.to_vec();
    line.push(b'\n');
    let (events, diagnostics) = events_of(&line);
    assert!(diagnostics.is_empty());
    let errors = of_kind(&events, EventKind::Error);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].error, Some(ErrorKind::Api));
    assert_eq!(errors[0].error_code.as_deref(), Some("429"));
}

#[test]
fn assistant_error_code_without_is_api_error_message_was_text() {
    // stream-json's copy of the API error record has `"error":"rate_limit"` only.
    let events = read_events("ratelimit.stream.jsonl");
    assert!(of_kind(&events, EventKind::Text).is_empty());
    // The transcript's copy has `isApiErrorMessage` as well: the same one error.
    let transcript = read_events("ratelimit.jsonl");
    let errors = of_kind(&transcript, EventKind::Error);
    assert_eq!(errors.len(), 1, "retries are absent from transcripts");
    assert_eq!(errors[0].error_code.as_deref(), Some("rate_limit"));
    let overload = read_events("overload.jsonl");
    let errors = of_kind(&overload, EventKind::Error);
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].error_code.as_deref(), Some("server_error"));
}

#[test]
fn resume_added_a_fake_text_event() {
    let events = read_events("main.jsonl");
    let texts: Vec<&str> = of_kind(&events, EventKind::Text)
        .iter()
        .filter_map(|e| e.text.as_deref())
        .collect();
    assert_eq!(texts, ["Reading a.txt.", "All done.", "Back again."]);
}

#[test]
fn a_finished_subagent_ends_with_its_result_on_the_parent() {
    // The subagent's own last record has `stop_reason: null`: its file alone never says it
    // ended. The parent's Agent result does, as `subagent_end` with the same tool_use_id.
    let sub = read_events("main-subagent.jsonl");
    let last_text = of_kind(&sub, EventKind::Text);
    assert_eq!(last_text.len(), 1);
    assert_eq!(last_text[0].status, Status::Working);
    assert!(of_kind(&sub, EventKind::Success).is_empty());
    let main = read_events("main.jsonl");
    let start = of_kind(&main, EventKind::SubagentStart);
    let end = of_kind(&main, EventKind::SubagentEnd);
    assert_eq!((start.len(), end.len()), (1, 1));
    assert_eq!(start[0].tool_use_id, end[0].tool_use_id);
    assert_eq!(end[0].description.as_deref(), Some("Look around"));
}

#[test]
fn mana_bar_showed_200k_for_the_1m_default_model() {
    // Transcript: 200k until the Agent result's `resolvedModel` says `[1m]`.
    let main = read_events("main.jsonl");
    let end = main
        .iter()
        .position(|e| e.kind == EventKind::SubagentEnd)
        .expect("subagent_end");
    assert!(main[..end].iter().all(|e| e.context_limit == 200_000));
    assert!(main[end..].iter().all(|e| e.context_limit == 1_000_000));
    // stream-json: the `init` record's model says `[1m]` from the first event.
    let stream = read_events("main.stream.jsonl");
    assert!(stream.iter().all(|e| e.context_limit == 1_000_000));
    // A session whose only evidence is usage: 200k until a usage passes it. The todo run
    // never does.
    assert!(
        read_events("todo.jsonl")
            .iter()
            .all(|e| e.context_limit == 200_000)
    );
    // `--context-limit` still wins.
    let bytes = std::fs::read(dir().join("main.stream.jsonl")).expect("stream");
    let config = NormalizerConfig {
        context_limit: Some(123_456),
        ..NormalizerConfig::default()
    };
    let (events, _) = familiar_transcript::normalize_bytes(&bytes, &config);
    assert!(events.iter().all(|e| e.context_limit == 123_456));
}

#[test]
fn p_permission_denials_counted_as_tool_errors() {
    let events = read_events("denied.jsonl");
    let errors: Vec<(Option<ErrorKind>, Option<&str>)> = of_kind(&events, EventKind::Error)
        .iter()
        .map(|e| (e.error, e.tool.as_deref()))
        .collect();
    assert_eq!(
        errors,
        [
            (Some(ErrorKind::Denied), Some("Read")),
            (Some(ErrorKind::Denied), Some("Bash"))
        ]
    );
    // The failing Bash of the main run stays a tool error.
    let main = read_events("main.jsonl");
    let tool_errors: Vec<_> = of_kind(&main, EventKind::Error)
        .iter()
        .map(|e| (e.error, e.tool.as_deref()))
        .collect();
    assert_eq!(tool_errors, [(Some(ErrorKind::Tool), Some("Bash"))]);
}

#[test]
fn stream_json_subagent_messages_moved_the_main_context() {
    // stream-json repeats the subagent's messages with `parent_tool_use_id`: their own chain,
    // not the main one (no prompt, no context drop to the subagent's usage).
    let events = read_events("main.stream.jsonl");
    let start = of_kind(&events, EventKind::SubagentStart)[0];
    let parent = start.tool_use_id.as_deref().expect("the Agent tool use id");
    let sub: Vec<&Event> = events
        .iter()
        .filter(|e| e.agent.as_deref() == Some(parent))
        .collect();
    assert!(sub.iter().any(|e| e.kind == EventKind::Reading));
    assert!(sub.iter().all(|e| e.sidechain));
    assert!(of_kind(&events, EventKind::Prompt).is_empty());
    let main_context: Vec<u64> = events
        .iter()
        .filter(|e| e.agent.is_none())
        .filter_map(|e| e.context_used)
        .collect();
    assert!(
        main_context.windows(2).all(|pair| pair[0] <= pair[1]),
        "{main_context:?}"
    );
}

/// The line of the interactive session's `end_turn` record and the `durationMs` of the
/// `turn_duration` record after it.
fn interactive_turn_end() -> (usize, u64) {
    let text = std::fs::read_to_string(dir().join("interactive.jsonl")).expect("interactive");
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("a record"))
        .collect();
    let end = records
        .iter()
        .position(|r| r["message"]["stop_reason"] == "end_turn")
        .expect("an end_turn record");
    let duration = records[end..]
        .iter()
        .find(|r| r["subtype"] == "turn_duration")
        .and_then(|r| r["durationMs"].as_u64())
        .expect("a turn_duration record after it");
    // The order this test is about: end_turn, stop_hook_summary, turn_duration.
    assert_eq!(records[end + 1]["subtype"], "stop_hook_summary");
    assert_eq!(records[end + 2]["subtype"], "turn_duration");
    (end + 1, duration)
}

#[test]
fn interactive_success_never_carried_duration_ms() {
    // An interactive CLI writes `end_turn`, then `stop_hook_summary`, then `turn_duration`:
    // the success (at the `end_turn` record) waits for the duration.
    let (line, duration) = interactive_turn_end();
    let events = read_events("interactive.jsonl");
    let success = of_kind(&events, EventKind::Success);
    assert_eq!(success.len(), 1);
    assert_eq!(success[0].duration_ms, Some(duration));
    assert_eq!(
        success[0].line, line as u64,
        "dated by the record that ended the turn"
    );
    assert_eq!(success[0].status, Status::WaitingForInput);
    // A `-p` run (`entrypoint: sdk-cli`) writes no `turn_duration`: its success is not held.
    let bytes = std::fs::read(dir().join("todo.jsonl")).expect("todo.jsonl");
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    for (at, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let _ = normalizer.push_line(line, at as u64 + 1, &mut out);
    }
    assert!(!normalizer.has_deferred());
    assert_eq!(of_kind(&out, EventKind::Success).len(), 1);
    assert_eq!(of_kind(&out, EventKind::Success)[0].duration_ms, None);
}

#[test]
fn an_interactive_turn_without_turn_duration_still_succeeds() {
    // The file cut before `turn_duration`: the success is held, and goes out at the end of
    // the input (or, live, on a quiet pause) without a duration.
    let (line, _) = interactive_turn_end();
    let bytes = std::fs::read(dir().join("interactive.jsonl")).expect("interactive.jsonl");
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').take(line + 1).collect();
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        normalizer
            .push_line(line, at as u64 + 1, &mut out)
            .expect("a good line");
    }
    assert!(normalizer.has_deferred());
    assert!(of_kind(&out, EventKind::Success).is_empty());
    assert_eq!(normalizer.status(), Status::WaitingForInput);
    normalizer.flush(&mut out);
    assert!(!normalizer.has_deferred());
    let success = of_kind(&out, EventKind::Success);
    assert_eq!(success.len(), 1);
    assert_eq!(success[0].duration_ms, None);
    assert_eq!(
        normalizer.metrics().events.get(&EventKind::Success),
        Some(&1)
    );
}

fn events_with(bytes: &[u8], config: &NormalizerConfig) -> Vec<Event> {
    familiar_transcript::normalize_bytes(bytes, config).0
}

#[test]
fn the_configured_model_and_the_window_table_were_not_sources_of_the_limit() {
    let main = std::fs::read(dir().join("main.jsonl")).expect("main.jsonl");
    let limits = |configured: Option<&str>, context_limit: Option<u64>| -> Vec<u64> {
        let config = NormalizerConfig {
            configured_model: configured.map(str::to_owned),
            context_limit,
            ..NormalizerConfig::default()
        };
        events_with(&main, &config)
            .iter()
            .map(|e| e.context_limit)
            .collect()
    };
    let plain = limits(None, None);
    assert_eq!(plain.first(), Some(&200_000));
    // settings.json `model: "opus[1m]"` (or ANTHROPIC_MODEL): the session's opus runs with
    // 1M from its first event.
    assert!(
        limits(Some("opus[1m]"), None)
            .iter()
            .all(|&l| l == 1_000_000)
    );
    assert!(
        limits(Some("claude-opus-4-8[1m]"), None)
            .iter()
            .all(|&l| l == 1_000_000)
    );
    // A configured model without `[1m]` says nothing; one that is not the model the
    // transcript runs is believed only until the transcript names its model.
    assert_eq!(limits(Some("opus"), None), plain);
    let other = limits(Some("claude-sonnet-4-6[1m]"), None);
    let named = events_with(&main, &NormalizerConfig::default())
        .iter()
        .position(|e| e.model.is_some())
        .expect("an assistant event");
    assert!(other[..named].iter().all(|&l| l == 1_000_000));
    assert_eq!(other[named..], plain[named..]);
    // `--context-limit` still wins.
    assert!(
        limits(Some("opus[1m]"), Some(300_000))
            .iter()
            .all(|&l| l == 300_000)
    );

    // The table: a model that only comes with 1M has it from its first message, without
    // `[1m]` anywhere (the same records, another model id).
    let todo = std::fs::read_to_string(dir().join("todo.jsonl")).expect("todo.jsonl");
    let five = todo.replace("\"claude-opus-4-8\"", "\"claude-opus-5-5\"");
    assert_ne!(five, todo);
    let events = events_with(five.as_bytes(), &NormalizerConfig::default());
    let first_answer = events
        .iter()
        .position(|e| e.model.is_some())
        .expect("an assistant event");
    assert!(
        events[first_answer..]
            .iter()
            .all(|e| e.context_limit == 1_000_000)
    );
    assert!(
        read_events("todo.jsonl")
            .iter()
            .all(|e| e.context_limit == 200_000)
    );
}
