//! Rollouts that the real OpenAI Codex CLI wrote, driven by the end-to-end harness
//! `tests/real_codex.rs` against its mock Responses API (`fixtures/codex-<version>/`, written by
//! `FAMILIAR_UPDATE_FIXTURES=1 cargo test --test real_codex`). Each file matches its reviewed
//! snapshot, and each scripted fact of issue 16 is pinned by a test, on the pinned CLI's
//! rollouts (0.171.0) and on the previous pin's (0.169.0, which users still run).
//! `fixtures/codex-0.50.0/` is the same script written by Codex 0.50.0 (the older generation of
//! records), run with `FAMILIAR_CODEX_BIN` (see `tests/agents/codex/README.md`).
//!
//! - this file: the snapshots and the scripted facts of `main` and `ratelimit`;
//! - `codex_cli/failed_turns.rs`: issue 25 on 0.171's failed turns (the window before any
//!   `token_count`, `error_code` and the readable message of each API error).

mod common;
#[path = "codex_cli/failed_turns.rs"]
mod failed_turns;

use std::path::PathBuf;

use common::{events_of, render, spaced};
use familiar_transcript::{AgentKind, PriceTable, Tokens, usage};
use familiar_transcript::{
    ErrorKind, Event, EventKind, Normalizer, NormalizerConfig, Status, normalize_bytes,
};

/// The pinned CLI's rollouts.
const PINNED: &str = "codex-0.171.0";
/// The versions the scripted facts are checked on: the pin and the previous one.
const VERSIONS: [&str; 2] = ["codex-0.169.0", PINNED];

fn dir(version: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(version)
}

fn bytes_of(version: &str, name: &str) -> Vec<u8> {
    let path = dir(version).join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn events_in(version: &str, name: &str) -> Vec<Event> {
    let (events, diagnostics) = events_of(&bytes_of(version, name));
    assert!(diagnostics.is_empty(), "{version}/{name}: {diagnostics:?}");
    events
}

fn of_kind(events: &[Event], kind: EventKind) -> Vec<&Event> {
    events.iter().filter(|event| event.kind == kind).collect()
}

/// Every rollout of `version` (sorted names), after checking they are `expected`.
fn rollouts(version: &str, expected: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir(version))
        .unwrap_or_else(|err| panic!("fixtures/{version}: {err}"))
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert_eq!(names, expected, "{version}");
    names
}

fn parses_as_codex(version: &str, name: &str) -> Vec<Event> {
    let events = events_in(version, name);
    assert!(!events.is_empty(), "{version}/{name}");
    assert!(
        events.iter().all(|e| e.agent_kind == AgentKind::Codex),
        "{version}/{name}: every event says Codex wrote it"
    );
    events
}

#[test]
fn every_rollout_parses_and_matches_its_snapshot() {
    // 0.169.0's snapshots keep their names from when it was the pin.
    for name in rollouts("codex-0.169.0", &["main.jsonl", "ratelimit.jsonl"]) {
        let events = parses_as_codex("codex-0.169.0", &name);
        insta::assert_snapshot!(format!("codex-{name}"), render(&events));
    }
    let pinned = [
        "badrequest.jsonl",
        "main.jsonl",
        "ratelimit.jsonl",
        "servererror.jsonl",
        "unavailable.jsonl",
    ];
    for name in rollouts(PINNED, &pinned) {
        let events = parses_as_codex(PINNED, &name);
        insta::assert_snapshot!(format!("{PINNED}-{name}"), render(&events));
    }
}

/// Everything each recorded Codex writes is known to Familiar (a record or item type a new
/// version adds is counted as unknown and shows here first), and its version is read.
#[test]
fn nothing_any_recorded_codex_wrote_is_unknown() {
    for version in ["codex-0.50.0", "codex-0.169.0", PINNED] {
        for entry in std::fs::read_dir(dir(version)).expect("fixtures").flatten() {
            let bytes = std::fs::read(entry.path()).expect("rollout");
            let mut normalizer = familiar_transcript::Normalizer::default();
            let mut events = Vec::new();
            for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
                normalizer
                    .push_line(line, index as u64 + 1, &mut events)
                    .expect("a line Codex wrote");
            }
            let metrics = normalizer.metrics();
            let name = entry.file_name();
            assert!(
                metrics.unknown.is_empty(),
                "{version}/{name:?}: {:?}",
                metrics.unknown
            );
            assert_eq!(
                metrics.cli_version.as_deref(),
                version.strip_prefix("codex-"),
                "{version}/{name:?}"
            );
        }
    }
    // A type never seen is counted and said once.
    let mut normalizer = familiar_transcript::Normalizer::default();
    let mut events = Vec::new();
    for line in [
        r#"{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"teleport"}}"#,
        r#"{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"teleport"}}"#,
    ] {
        normalizer
            .push_line(line.as_bytes(), 1, &mut events)
            .expect("line");
    }
    assert_eq!(normalizer.take_unknown_news(), ["codex/event_msg/teleport"]);
    assert_eq!(
        normalizer.metrics().unknown.get("codex/event_msg/teleport"),
        Some(2)
    );
}

#[test]
fn the_scripted_tools_become_reading_bash_tool_and_one_writing_per_file() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        let events = events_in(version, "main.jsonl");
        let tools: Vec<(EventKind, &str, Option<&str>)> = events
            .iter()
            .filter(|e| e.tool.is_some() && e.kind != EventKind::Error)
            .map(|e| (e.kind, e.tool.as_deref().unwrap_or(""), e.target.as_deref()))
            .collect();
        assert_eq!(
            tools,
            [
                (EventKind::Reading, "exec_command", Some("cat a.txt")),
                (EventKind::Bash, "exec_command", Some("exit 3")),
                (EventKind::Tool, "not_a_tool", None),
                (EventKind::Writing, "apply_patch", Some("a.txt")),
                (EventKind::Writing, "apply_patch", Some("b.txt")),
            ]
        );
        let errors: Vec<(Option<ErrorKind>, Option<&str>, Option<&str>)> =
            of_kind(&events, EventKind::Error)
                .iter()
                .map(|e| (e.error, e.tool.as_deref(), e.text.as_deref()))
                .collect();
        assert_eq!(
            errors,
            [
                (
                    Some(ErrorKind::Tool),
                    Some("exec_command"),
                    Some("exit code 3")
                ),
                (
                    Some(ErrorKind::Tool),
                    Some("not_a_tool"),
                    Some("unsupported call: not_a_tool")
                ),
            ]
        );
    }
}

#[test]
fn the_compaction_summary_is_not_a_reply() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        let events = events_in(version, "main.jsonl");
        let texts: Vec<&str> = of_kind(&events, EventKind::Text)
            .iter()
            .filter_map(|e| e.text.as_deref())
            .collect();
        assert_eq!(
            texts,
            ["Now a command that fails.", "All done.", "Back again."]
        );
        let prompts: Vec<&str> = of_kind(&events, EventKind::Prompt)
            .iter()
            .filter_map(|e| e.text.as_deref())
            .collect();
        assert_eq!(prompts, ["FAMILIAR-SCRIPT main", "FAMILIAR-SCRIPT after"]);
        let thinking = of_kind(&events, EventKind::Thinking);
        assert_eq!(thinking.len(), 1);
        assert_eq!(
            thinking[0].text.as_deref(),
            Some("I should read the file first.")
        );
        assert_eq!(thinking[0].model.as_deref(), Some("gpt-5.5"));
    }
}

#[test]
fn compaction_has_pre_and_post_tokens() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        let events = events_in(version, "main.jsonl");
        let boundary = of_kind(&events, EventKind::CompactBoundary);
        assert_eq!(boundary.len(), 1);
        // The apply_patch request: 9000 in + 20 out; after it Codex estimates the new history.
        assert_eq!(boundary[0].pre_tokens, Some(9_020));
        let post = boundary[0].post_tokens.expect("post tokens");
        assert!(post > 0 && post < 9_020, "{post}");
        // Right after it the context is the estimate, until the next request's usage.
        let after = events
            .iter()
            .skip_while(|e| e.kind != EventKind::CompactBoundary)
            .nth(1)
            .expect("an event after the compaction");
        assert_eq!(after.context_used, Some(post));
    }
}

#[test]
fn context_is_the_last_request_against_the_window() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        let events = events_in(version, "main.jsonl");
        let reading = of_kind(&events, EventKind::Reading)[0];
        // Before the first token_count: no usage known; the window is task_started's.
        assert_eq!(reading.context_used, None);
        assert_eq!(reading.context_limit, 258_400);
        let error = of_kind(&events, EventKind::Error)[0];
        assert_eq!(error.context_used, Some(1_420));
        assert_eq!(error.context_limit, 258_400);
        // `total_token_usage` grows past every request; the meter does not.
        // The turn's end (then the status it leaves).
        let last = &events[events.len() - 2];
        assert_eq!(last.kind, EventKind::Success);
        assert_eq!(events[events.len() - 1].kind, EventKind::Status);
        assert_eq!(last.context_used, Some(920));
        assert_eq!(last.status, Status::WaitingForInput);
    }
}

#[test]
fn each_turn_ends_in_success_and_a_failed_turn_in_an_api_error() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        let events = events_in(version, "main.jsonl");
        let successes = of_kind(&events, EventKind::Success);
        assert_eq!(successes.len(), 2);
        assert!(successes.iter().all(|e| e.duration_ms.is_some()));
        let ratelimit = events_in(version, "ratelimit.jsonl");
        let errors = of_kind(&ratelimit, EventKind::Error);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].error, Some(ErrorKind::Api));
        assert_eq!(errors[0].error_code.as_deref(), Some("rate_limit"));
        assert_eq!(errors[0].status, Status::WaitingForInput);
        assert!(of_kind(&ratelimit, EventKind::Success).is_empty());
    }
}

#[test]
fn the_normalizer_reports_a_rollouts_session_state() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        let mut normalizer = Normalizer::new(NormalizerConfig::default());
        let mut events = Vec::new();
        for (number, line) in bytes_of(version, "main.jsonl")
            .split(|&b| b == b'\n')
            .enumerate()
        {
            normalizer
                .push_line(line, number as u64 + 1, &mut events)
                .expect("every line parses");
        }
        assert_eq!(
            normalizer.session(),
            events[0].session.as_deref(),
            "the session_meta id"
        );
        assert_eq!(events[0].kind, EventKind::SessionStart);
        assert_eq!(normalizer.context_used(), Some(920));
        assert_eq!(normalizer.context_limit(), 258_400);
        assert_eq!(normalizer.status(), Status::WaitingForInput);
        // An explicit limit wins over the CLI's window.
        let config = NormalizerConfig {
            context_limit: Some(50_000),
            ..NormalizerConfig::default()
        };
        let (events, _) = normalize_bytes(&bytes_of(version, "main.jsonl"), &config);
        assert!(events.iter().all(|e| e.context_limit == 50_000));
    }
}

#[test]
fn a_rollouts_metrics_count_its_tools_files_and_compactions() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        let mut normalizer = Normalizer::new(NormalizerConfig::default());
        let mut events = Vec::new();
        for (number, line) in bytes_of(version, "main.jsonl")
            .split(|&b| b == b'\n')
            .enumerate()
        {
            let _ = normalizer.push_line(line, number as u64 + 1, &mut events);
        }
        let metrics = normalizer.metrics();
        assert_eq!(metrics.prompts, 2);
        assert_eq!(metrics.compactions, 1);
        assert_eq!(metrics.tool_calls.get("exec_command"), Some(2));
        assert_eq!(metrics.tool_calls.get("apply_patch"), Some(1));
        let files: Vec<&str> = metrics.files_modified.iter().map(String::as_str).collect();
        assert_eq!(files, ["a.txt", "b.txt"]);
    }
}

/// The mock's requests: input (half of it cached) and 20 output tokens each.
const REQUEST_INPUTS: [u64; 7] = [1_200, 1_400, 1_500, 9_000, 300, 1_600, 900];

fn expected_tokens() -> Tokens {
    let input: u64 = REQUEST_INPUTS.iter().sum();
    Tokens {
        input: input - input / 2,
        output: 20 * REQUEST_INPUTS.len() as u64,
        cache_read: input / 2,
        cache_creation: 0,
        cache_creation_1h: 0,
    }
}

#[test]
fn stats_count_each_request_once_and_price_it_as_openai_does() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        let ledger = usage::scan_bytes(&bytes_of(version, "main.jsonl"));
        assert_eq!(ledger.tokens(), expected_tokens());
        let by_model = ledger.tokens_by_model();
        assert_eq!(by_model.len(), 1);
        assert_eq!(by_model[0].0, "gpt-5.5");
        // $5 per million uncached input, $0.50 cached, $30 output.
        let tokens = expected_tokens();
        let want = (tokens.input as f64 * 5.0
            + tokens.cache_read as f64 * 0.5
            + tokens.output as f64 * 30.0)
            / 1_000_000.0;
        let cost = ledger.cost_usd(&PriceTable::default());
        assert!((cost - want).abs() < 1e-12, "{cost} != {want}");
        // A failed turn made no request that counts.
        assert_eq!(
            usage::scan_bytes(&bytes_of(version, "ratelimit.jsonl")).tokens(),
            Tokens::default()
        );
    }
}

#[test]
fn a_rollout_without_usage_records_counts_the_same_from_its_token_counts() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        // Older Codex versions wrote no `token_usage_record`: the `token_count` events (written
        // twice for some requests) carry the same requests.
        let text = String::from_utf8(bytes_of(version, "main.jsonl")).expect("UTF-8");
        let older: String = text
            .lines()
            .filter(|line| !line.contains("\"type\":\"token_usage_record\""))
            .map(|line| format!("{line}\n"))
            .collect();
        assert!(older.len() < text.len());
        assert_eq!(
            usage::scan_bytes(older.as_bytes()).tokens(),
            expected_tokens()
        );
    }
}

/// The ledger of `inputs` as `familiar stats` reads them: each line parsed once for the
/// normalizer and the usage, each input its own source.
fn stats_ledger(inputs: &[&str]) -> usage::Ledger {
    let mut all = usage::Ledger::new();
    for (source, input) in inputs.iter().enumerate() {
        let mut normalizer = Normalizer::new(NormalizerConfig::default());
        let mut ledger = usage::Ledger::new();
        ledger.set_source(source as u32);
        let mut events = Vec::new();
        for (index, line) in input.lines().enumerate() {
            let _ = usage::push_line(
                &mut normalizer,
                &mut ledger,
                line.as_bytes(),
                index as u64 + 1,
                &mut events,
            );
        }
        all.merge(ledger);
    }
    all
}

#[test]
fn a_rollout_spelt_with_spaces_counts_as_written() {
    for version in VERSIONS {
        eprintln!("fixtures/{version}");
        let first = String::from_utf8(bytes_of(version, "main.jsonl")).expect("UTF-8");
        // Another session with the same requests' ids: its own requests, counted again.
        let session = first
            .lines()
            .next()
            .and_then(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .and_then(|meta| meta["payload"]["id"].as_str().map(str::to_owned))
            .expect("session_meta's id");
        let second = first.replace(&session, "01a20948-0000-7000-8000-000000000002");
        let spaced_rollout =
            |text: &str| -> String { text.lines().map(|line| spaced(line) + "\n").collect() };
        let (first_spaced, second_spaced) = (spaced_rollout(&first), spaced_rollout(&second));
        assert!(first_spaced.contains("\"type\": \"session_meta\""));
        let both = expected_tokens().total() * 2;
        for (inputs, what) in [
            ([&first[..], &second[..]], "as written"),
            ([&first_spaced[..], &second_spaced[..]], "with spaces"),
        ] {
            assert_eq!(stats_ledger(&inputs).tokens().total(), both, "{what}");
            // Each line's text read on its own gives the same.
            let mut scanned = usage::scan_bytes(inputs[0].as_bytes());
            scanned.merge(usage::scan_bytes(inputs[1].as_bytes()));
            assert_eq!(scanned.tokens().total(), both, "{what}, text scan");
        }
    }
}

/// The same script on Codex 0.50.0 (`fixtures/codex-0.50.0/`, written by that CLI through
/// `FAMILIAR_CODEX_BIN`): the older generation of records.
fn older(name: &str) -> Vec<u8> {
    bytes_of("codex-0.50.0", name)
}

#[test]
fn the_older_generation_becomes_the_same_events() {
    let (events, diagnostics) = events_of(&older("main.jsonl"));
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    insta::assert_snapshot!("codex-0.50.0-main.jsonl", render(&events));
    assert!(events.iter().all(|e| e.agent_kind == AgentKind::Codex));
    // `user_message`, `agent_reasoning`, `agent_message`; the `shell` tool, patches through it.
    let tools: Vec<(EventKind, &str, Option<&str>)> = events
        .iter()
        .filter(|e| e.tool.is_some() && e.kind != EventKind::Error)
        .map(|e| (e.kind, e.tool.as_deref().unwrap_or(""), e.target.as_deref()))
        .collect();
    assert_eq!(
        tools,
        [
            (EventKind::Reading, "shell", Some("cat a.txt")),
            (EventKind::Bash, "shell", Some("exit 3")),
            (EventKind::Tool, "not_a_tool", None),
            (EventKind::Writing, "shell", Some("a.txt")),
            (EventKind::Writing, "shell", Some("b.txt")),
        ]
    );
    // The exit code is in the shell tool's JSON output.
    let errors: Vec<(Option<&str>, Option<&str>)> = of_kind(&events, EventKind::Error)
        .iter()
        .map(|e| (e.tool.as_deref(), e.text.as_deref()))
        .collect();
    assert_eq!(
        errors,
        [
            (Some("shell"), Some("exit code 3")),
            (Some("not_a_tool"), Some("unsupported call: not_a_tool")),
        ]
    );
    // "Compact task completed" is the CLI's notice, not a reply.
    let texts: Vec<&str> = of_kind(&events, EventKind::Text)
        .iter()
        .filter_map(|e| e.text.as_deref())
        .collect();
    assert_eq!(
        texts,
        ["Now a command that fails.", "All done.", "Back again."]
    );
    let prompts = of_kind(&events, EventKind::Prompt);
    assert_eq!(prompts.len(), 2);
    assert_eq!(of_kind(&events, EventKind::Thinking).len(), 1);
    let boundary = of_kind(&events, EventKind::CompactBoundary);
    assert_eq!(boundary.len(), 1);
    // No estimate after it: the context is unknown until the next request.
    assert_eq!(boundary[0].post_tokens, None);
    assert_eq!(boundary[0].context_used, None);
    // 0.50 writes no task_complete: no success (live, the quiet timer ends the turn).
    assert!(of_kind(&events, EventKind::Success).is_empty());
    // Its tokens: the same requests, counted from token_count events.
    assert_eq!(
        usage::scan_bytes(&older("main.jsonl")).tokens(),
        expected_tokens()
    );
    // A 429 that outlived its retries left nothing but the prompt.
    let (ratelimit, _) = events_of(&older("ratelimit.jsonl"));
    let kinds: Vec<EventKind> = ratelimit.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [EventKind::SessionStart, EventKind::Prompt]);
}
