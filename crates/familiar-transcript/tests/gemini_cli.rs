//! Session files that the real Gemini CLI (0.61.0) wrote, driven by the end-to-end harness
//! `tests/real_gemini.rs` against its mock Gemini API (`fixtures/gemini-<version>/`, written
//! by `FAMILIAR_UPDATE_FIXTURES=1 cargo test --test real_gemini`). Each file matches its
//! reviewed snapshot, and each scripted fact is pinned by a test:
//! - `main.jsonl`: a `-p` run (a thought, a read, a failing shell command, an edit, a new file,
//!   a read of a missing file, a search, a reply), then the same session resumed (`--resume
//!   latest`) for a turn whose request the API refused (400), and again for one the API
//!   rate-limited on both attempts (429);
//! - `midturn.jsonl`: a run whose second request (after a tool's answer) the API refused;
//! - `subagent.jsonl`: a run that invoked the `codebase_investigator` subagent, whose own file
//!   (`chats/<session>/<its id>.jsonl`, `kind: subagent`) is `subagent-investigator.jsonl`.

mod common;

use std::path::PathBuf;

use common::{events_of, render};
use familiar_transcript::{
    AgentKind, ErrorKind, Event, EventKind, Normalizer, NormalizerConfig, PriceTable, Status,
    Tokens, usage,
};

const PINNED: &str = "gemini-0.61.0";

fn bytes_of(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(PINNED)
        .join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

fn events_in(name: &str) -> Vec<Event> {
    let (events, diagnostics) = events_of(&bytes_of(name));
    assert!(diagnostics.is_empty(), "{name}: {diagnostics:?}");
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
fn every_session_file_parses_and_matches_its_snapshot() {
    for name in [
        "main.jsonl",
        "midturn.jsonl",
        "subagent.jsonl",
        "subagent-investigator.jsonl",
    ] {
        let events = events_in(name);
        insta::assert_snapshot!(format!("gemini-{name}"), render(&events));
    }
}

#[test]
fn the_scripted_turn_is_told_once_each_though_messages_are_written_again() {
    let events = events_in("main.jsonl");
    let starts = of_kind(&events, EventKind::SessionStart);
    assert_eq!(
        starts.len(),
        1,
        "a resume writes the metadata again: one start"
    );
    let session = starts[0].session.as_deref().expect("the session id");
    assert!(events.iter().all(|e| e.session.as_deref() == Some(session)));

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
        ],
        "the session context in `$set.messages` is no prompt"
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
            (EventKind::Writing, "replace", Some("a.txt")),
            (EventKind::Writing, "write_file", Some("b.txt")),
            (EventKind::Reading, "read_file", Some("missing.txt")),
            (EventKind::Reading, "grep_search", Some("bye")),
        ]
    );
}

#[test]
fn failures_are_errors_of_their_kind() {
    let events = events_in("main.jsonl");
    let errors: Vec<(ErrorKind, Option<&str>, Option<&str>)> = of_kind(&events, EventKind::Error)
        .iter()
        .map(|e| {
            (
                e.error.expect("an error kind"),
                e.tool.as_deref(),
                e.text.as_deref(),
            )
        })
        .collect();
    assert_eq!(errors.len(), 4, "{errors:?}");
    // The shell command exited 3: a `success` for the CLI, its output says so.
    assert_eq!(
        errors[0],
        (
            ErrorKind::Tool,
            Some("run_shell_command"),
            Some("exit code 3")
        )
    );
    // The read of a missing file: `status: error`.
    assert_eq!(errors[1].0, ErrorKind::Tool);
    assert_eq!(errors[1].1, Some("read_file"));
    assert!(
        errors[1]
            .2
            .is_some_and(|text| text.starts_with("File not found: ")),
        "{:?}",
        errors[1]
    );
    // The refused requests (400, then 429 twice): each prompt rolled back out of the
    // history, the same record whatever the API said.
    for api in &of_kind(&events, EventKind::Error)[2..] {
        assert_eq!(api.error, Some(ErrorKind::Api));
        assert_eq!(api.status, Status::WaitingForInput);
        assert_eq!(
            api.message.as_deref(),
            Some("Gemini CLI: the request failed")
        );
    }
}

#[test]
fn a_turn_ends_once_with_its_last_reply_and_holds_for_tool_calls() {
    let events = events_in("main.jsonl");
    let successes = of_kind(&events, EventKind::Success);
    assert_eq!(successes.len(), 1, "one turn ended well");
    // Dated by the reply that ended it ("All done."), let out by the next prompt.
    let done = of_kind(&events, EventKind::Text)[1];
    assert_eq!(successes[0].line, done.line);
    let at = events
        .iter()
        .position(|e| e.kind == EventKind::Success)
        .expect("success");
    assert_eq!(events[at + 1].kind, EventKind::Status);
    assert_eq!(events[at + 1].status, Status::WaitingForInput);

    // Mid-turn failure: nothing in the file says so; the turn is still working.
    let midturn = events_in("midturn.jsonl");
    assert!(of_kind(&midturn, EventKind::Success).is_empty());
    assert!(of_kind(&midturn, EventKind::Error).is_empty());
    assert_eq!(midturn.last().map(|e| e.status), Some(Status::Working));
}

#[test]
fn context_is_the_latest_requests_total_in_gemini_clis_window() {
    let events = events_in("main.jsonl");
    let last_text = of_kind(&events, EventKind::Text)[1];
    // The mock's seventh request: 1600 prompt tokens + 20 output + 5 thinking.
    assert_eq!(last_text.context_used, Some(1_625));
    assert_eq!(last_text.context_limit, 1_048_576);
    assert_eq!(last_text.model.as_deref(), Some("gemini-2.5-pro"));

    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    for (at, line) in bytes_of("main.jsonl").split(|&b| b == b'\n').enumerate() {
        normalizer
            .push_line(line, at as u64 + 1, &mut out)
            .expect("a line of the fixture");
    }
    normalizer.flush(&mut out);
    assert_eq!(normalizer.agent_kind(), AgentKind::Gemini);
    assert_eq!(normalizer.context_used(), Some(1_625));
    assert_eq!(normalizer.context_limit(), 1_048_576);
    assert!(
        normalizer.metrics().unknown.is_empty(),
        "{:?}",
        normalizer.metrics().unknown
    );
    assert_eq!(normalizer.metrics().prompts, 3);
    assert_eq!(
        normalizer
            .metrics()
            .files_modified
            .iter()
            .collect::<Vec<_>>(),
        ["a.txt", "b.txt"]
    );
}

#[test]
fn stats_count_each_request_once_and_price_it_as_google_does() {
    let ledger = usage::scan_bytes(&bytes_of("main.jsonl"));
    // Seven requests (each reply written twice or more): prompts 1000..1600 by 100, 400 of
    // each cached; 20 output and 5 thinking tokens each.
    let expected = Tokens {
        input: (1_000..=1_600).step_by(100).map(|n| n - 400).sum(),
        output: 7 * 25,
        cache_read: 7 * 400,
        cache_creation: 0,
        cache_creation_1h: 0,
    };
    assert_eq!(ledger.tokens(), expected);
    let cost = ledger.cost_usd(&PriceTable::default());
    let by_hand = (expected.input as f64 * 1.25
        + expected.output as f64 * 10.0
        + expected.cache_read as f64 * 0.125)
        / 1e6;
    assert!((cost - by_hand).abs() < 1e-12, "{cost} vs {by_hand}");
}

#[test]
fn what_gemini_cli_writes_that_familiar_does_not_know_is_counted_and_said() {
    let mut text = String::from_utf8(bytes_of("midturn.jsonl")).expect("UTF-8");
    // 0.61.0 writes none of these; a newer CLI might.
    text.push_str(concat!(
        r#"{"id":"e1","timestamp":"2026-11-28T02:02:00.000Z","type":"error","content":"quota"}"#,
        "\n",
        r#"{"$set":{"lastUpdated":"2026-11-28T02:02:00.000Z","mood":"happy"}}"#,
        "\n",
        r#"{"checkpoint":3}"#,
        "\n",
    ));
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    for (at, line) in text.lines().enumerate() {
        normalizer
            .push_line(line.as_bytes(), at as u64 + 1, &mut out)
            .expect("a JSON line");
    }
    let unknown: Vec<&str> = normalizer
        .metrics()
        .unknown
        .iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(
        unknown,
        [
            "gemini/$set/mood",
            "gemini/(a line of another shape)",
            "gemini/type/error"
        ]
    );
    assert_eq!(normalizer.take_unknown_news().len(), 3, "each said once");
    // The session goes on: its state is as the known lines left it.
    assert_eq!(normalizer.agent_kind(), AgentKind::Gemini);
    assert_eq!(normalizer.status(), Status::Working);
}

#[test]
fn a_subagent_is_started_and_ended_by_its_parent_and_its_own_file_is_its_agents() {
    let parent = events_in("subagent.jsonl");
    let start = of_kind(&parent, EventKind::SubagentStart);
    let end = of_kind(&parent, EventKind::SubagentEnd);
    assert_eq!((start.len(), end.len()), (1, 1));
    assert_eq!(
        start[0].agent_type.as_deref(),
        Some("codebase_investigator")
    );
    assert_eq!(
        start[0].description.as_deref(),
        Some("FAMILIAR-SCRIPT subinner Look at a.txt and report.")
    );
    assert_eq!(start[0].tool_use_id, end[0].tool_use_id);
    assert!(start[0].agent.is_none() && !start[0].sidechain);
    assert_eq!(of_kind(&parent, EventKind::Success).len(), 1);

    let inner = events_in("subagent-investigator.jsonl");
    let first_line = String::from_utf8(bytes_of("subagent-investigator.jsonl")).expect("UTF-8");
    let meta: serde_json::Value =
        serde_json::from_str(first_line.lines().next().expect("a line")).expect("JSON");
    let id = meta["sessionId"].as_str().expect("its id");
    assert!(
        inner
            .iter()
            .all(|e| e.agent.as_deref() == Some(id) && e.sidechain)
    );
    assert!(
        inner.iter().all(|e| e.session.is_none()),
        "the parent's: only the path says"
    );
    assert!(of_kind(&inner, EventKind::Prompt).is_empty());
    assert!(of_kind(&inner, EventKind::Success).is_empty());
    let tools: Vec<_> = inner.iter().filter_map(|e| e.tool.as_deref()).collect();
    assert_eq!(tools, ["read_file", "complete_task"]);

    // The parent's call names the subagent's file: the session model links the two.
    let parent_text = String::from_utf8(bytes_of("subagent.jsonl")).expect("UTF-8");
    let link = parent_text
        .lines()
        .find_map(|line| familiar_transcript::subagent_link(line.as_bytes()))
        .expect("a link");
    assert_eq!(link.agent_id, id);
    assert_eq!(Some(link.tool_use_id), start[0].tool_use_id.clone());
}

#[test]
fn the_stray_file_a_resume_writes_in_another_minute_starts_nothing() {
    // What 0.61.0 left beside a session resumed a minute after it began (seen on the real
    // CLI: `session-<that minute>-<id8>.jsonl`): its first two lines, the metadata and the
    // history of the session context alone.
    let main = String::from_utf8(bytes_of("main.jsonl")).expect("UTF-8");
    let stray: String = main
        .lines()
        .take(2)
        .map(|line| format!("{line}\n"))
        .collect();
    let (events, diagnostics) = events_of(stray.as_bytes());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(events.is_empty(), "{events:#?}");
}
