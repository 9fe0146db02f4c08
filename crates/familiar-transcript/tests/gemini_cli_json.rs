//! Session files that an older Gemini CLI (0.28.2, `tests/agents/gemini-0.28.2/`) wrote for
//! the scripts of `tests/real_gemini.rs` (`fixtures/gemini-0.28.2/`): one JSON document per
//! session, pretty-printed and rewritten whole on every change (versions before 0.39; 0.39
//! switched to the append-only JSONL of `gemini_cli.rs`). Checked: the same scripted facts as
//! the JSONL generation where the file holds them, a rewrite telling only what is new, and the
//! tokens the file keeps.
//! - `main.json`: the `main` script, then `--resume latest` with `badrequest` (400) and with
//!   `ratelimit` (429): the failed prompts stay in the history, with no reply;
//! - `midturn.json`: a tool's answer, then a 400: nothing after the tool call;
//! - `subagent.json`: 0.28.2 has no `invoke_agent` tool: the call fails as a tool error.

mod common;

use std::path::PathBuf;

use common::events_of;
use familiar_transcript::{
    AgentKind, ErrorKind, Event, EventKind, Normalizer, NormalizerConfig, Status, Tokens, usage,
};

fn bytes_of(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/gemini-0.28.2")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn events_in(name: &str) -> Vec<Event> {
    let (events, diagnostics) = events_of(&bytes_of(name));
    assert!(diagnostics.is_empty(), "{name}: {diagnostics:?}");
    assert!(!events.is_empty(), "{name}: no events");
    assert!(
        events.iter().all(|e| e.agent_kind == AgentKind::Gemini),
        "{name}: every event says Gemini CLI wrote it"
    );
    events
}

fn of_kind(events: &[Event], kind: EventKind) -> Vec<&Event> {
    events.iter().filter(|event| event.kind == kind).collect()
}

#[test]
fn the_scripted_run_reads_as_the_jsonl_generations() {
    let events = events_in("main.json");
    let starts = of_kind(&events, EventKind::SessionStart);
    assert_eq!(starts.len(), 1);
    assert_eq!(
        starts[0].session.as_deref(),
        Some("91e7128d-74ad-4e1f-ac60-49b688fdfe8c")
    );
    let prompts: Vec<_> = of_kind(&events, EventKind::Prompt)
        .iter()
        .filter_map(|e| e.text.clone())
        .collect();
    assert_eq!(
        prompts,
        [
            "Work on a.txt. FAMILIAR-SCRIPT main",
            "FAMILIAR-SCRIPT badrequest",
            "FAMILIAR-SCRIPT ratelimit"
        ]
    );
    let thinking = of_kind(&events, EventKind::Thinking);
    assert_eq!(thinking.len(), 1);
    assert_eq!(
        thinking[0].text.as_deref(),
        Some("Reading\nI should read the file first.")
    );
    let texts: Vec<_> = of_kind(&events, EventKind::Text)
        .iter()
        .filter_map(|e| e.text.clone())
        .collect();
    assert_eq!(texts, ["Now a failing command.", "All done."]);
    let tools: Vec<(EventKind, &str, Option<&str>)> = events
        .iter()
        .filter(|e| e.tool.is_some() && e.kind != EventKind::Error)
        .map(|e| (e.kind, e.tool.as_deref().unwrap_or(""), e.target.as_deref()))
        .collect();
    assert_eq!(
        tools,
        [
            (EventKind::Reading, "read_file", Some("a.txt")),
            (EventKind::Bash, "run_shell_command", Some("exit 3")),
            // 0.28.2 writes the edit's `file_path` as it resolved it: absolute.
            (
                EventKind::Writing,
                "replace",
                Some("/tmp/familiar-gemini/project/a.txt"),
            ),
            (EventKind::Writing, "write_file", Some("b.txt")),
            (EventKind::Reading, "read_file", Some("missing.txt")),
            (EventKind::Reading, "grep_search", Some("bye")),
        ]
    );
    assert_eq!(of_kind(&events, EventKind::Success).len(), 1);
    let errors: Vec<(ErrorKind, Option<&str>)> = of_kind(&events, EventKind::Error)
        .iter()
        .map(|e| (e.error.expect("an error kind"), e.tool.as_deref()))
        .collect();
    // The shell's exit 3, the missing file; the 400's prompt followed by the next prompt with
    // no reply between (the 429's, the file's last message, cannot be told from one still
    // waiting for its reply).
    assert_eq!(
        errors,
        [
            (ErrorKind::Tool, Some("run_shell_command")),
            (ErrorKind::Tool, Some("read_file")),
            (ErrorKind::Api, None),
        ]
    );
    let api = of_kind(&events, EventKind::Error)[2];
    assert_eq!(api.status, Status::WaitingForInput);
    assert_eq!(
        api.message.as_deref(),
        Some("Gemini CLI: the request failed")
    );
    let last_text = of_kind(&events, EventKind::Text)[1];
    assert_eq!(last_text.context_used, Some(1_625));
    assert_eq!(last_text.context_limit, 1_048_576);
    assert_eq!(last_text.model.as_deref(), Some("gemini-2.5-pro"));
}

#[test]
fn a_document_rewritten_whole_tells_only_what_is_new() {
    let text = String::from_utf8(bytes_of("main.json")).expect("UTF-8");
    let document: serde_json::Value = serde_json::from_str(&text).expect("one JSON document");
    let messages = document["messages"].as_array().expect("messages").clone();
    // Each rewrite as the CLI makes it: the same document with one more message (and, to test
    // a long session, after 70 messages padded in front: more than the JSONL reader keeps).
    let mut padded: Vec<serde_json::Value> = (0..70)
        .map(|n| {
            serde_json::json!({"id": format!("old-{n}"), "timestamp": "2026-11-28T08:00:00.000Z",
                "type": "info", "content": "earlier"})
        })
        .collect();
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut rewrites = Vec::new();
    for message in messages {
        padded.push(message);
        let mut rewrite = document.clone();
        rewrite["messages"] = serde_json::Value::Array(padded.clone());
        let pretty = serde_json::to_string_pretty(&rewrite).expect("JSON");
        // Each generation read anew, going on from what was told of the one before.
        let mut next = Normalizer::new(NormalizerConfig::default());
        next.continue_from(&normalizer);
        normalizer = next;
        normalizer
            .push_line(pretty.as_bytes(), 1, &mut rewrites)
            .expect("a document");
    }
    // The last rewrite once more: nothing new.
    let again = rewrites.len();
    let pretty = serde_json::to_string_pretty(&document).expect("JSON");
    normalizer
        .push_line(pretty.as_bytes(), 1, &mut rewrites)
        .expect("a document");
    normalizer.flush(&mut rewrites);
    let kinds = |events: &[Event]| -> Vec<(EventKind, Option<String>)> {
        events
            .iter()
            .filter(|e| e.kind != EventKind::Status)
            .map(|e| (e.kind, e.text.clone().or(e.tool.clone())))
            .collect()
    };
    assert_eq!(
        kinds(&rewrites[again..]),
        [],
        "the document read again tells nothing"
    );
    assert_eq!(
        kinds(&rewrites),
        kinds(&events_in("main.json")),
        "read rewrite by rewrite, the session tells what it tells read once"
    );
}

#[test]
fn the_midturn_failure_and_the_missing_subagent_tool() {
    let midturn = events_in("midturn.json");
    assert!(of_kind(&midturn, EventKind::Success).is_empty());
    assert!(of_kind(&midturn, EventKind::Error).is_empty());
    assert_eq!(midturn.last().map(|e| e.status), Some(Status::Working));
    let subagent = events_in("subagent.json");
    let error = of_kind(&subagent, EventKind::Error);
    assert_eq!(error.len(), 1);
    assert_eq!(error[0].tool.as_deref(), Some("invoke_agent"));
    assert_eq!(of_kind(&subagent, EventKind::Success).len(), 1);
}

#[test]
fn stats_count_the_tokens_the_file_kept() {
    // 0.28.2 put the tool calls of the replies with neither text nor thoughts (the mock's
    // third to sixth requests) into the message before them: their tokens are in no file.
    let ledger = usage::scan_bytes(&bytes_of("main.json"));
    let expected = Tokens {
        input: [1_000, 1_100, 1_600].iter().map(|n| n - 400).sum(),
        output: 3 * 25,
        cache_read: 3 * 400,
        cache_creation: 0,
        cache_creation_1h: 0,
    };
    assert_eq!(ledger.tokens(), expected);
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut ledger = usage::Ledger::new();
    let bytes = bytes_of("main.json");
    familiar_transcript::read_lines(&bytes[..], 1 << 26, |line| {
        if let familiar_transcript::ReadLine::Line { number, bytes } = line {
            usage::push_line(&mut normalizer, &mut ledger, bytes, number, &mut Vec::new())
                .expect("the document");
        }
        Ok(())
    })
    .expect("read");
    assert_eq!(ledger.tokens(), expected, "as `familiar stats` reads it");
    assert!(
        normalizer.metrics().unknown.is_empty(),
        "{:?}",
        normalizer.metrics().unknown
    );
}
