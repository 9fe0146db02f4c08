//! Session files that the real Qwen Code CLI (0.24.4) wrote, driven by the end-to-end harness
//! `tests/real_qwen.rs` against its mock OpenAI-compatible API (`fixtures/qwen-<version>/`,
//! written by `FAMILIAR_UPDATE_FIXTURES=1 cargo test --test real_qwen`):
//! - `main.jsonl`: a `-p` run (a thought, a read, a failing shell command, an edit, a new file,
//!   a read of a missing file, a grep, a glob, a reply), then the same session continued
//!   (`-c`) for a turn the API rate-limited (429) on every attempt;
//! - `midturn.jsonl`: a run whose second request (after a tool's answer) the API answered 503
//!   on every attempt;
//! - `subagent.jsonl`: a run that started a `general-purpose` subagent (in the background),
//!   whose own file (`subagents/<session>/agent-<id>.jsonl`) is `subagent-general.jsonl`;
//! - `compact.jsonl`: a run whose first reply filled 90% of the window, so that the CLI
//!   compacted the history before the next request.

use std::path::PathBuf;

use familiar_transcript::{
    AgentKind, ErrorKind, Event, EventKind, Normalizer, NormalizerConfig, PriceTable, Status,
    Tokens, usage,
};

const PINNED: &str = "qwen-0.24.4";

fn bytes_of(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(PINNED)
        .join(name);
    std::fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The events of a fixture, read line by line as a live reader would, then flushed; and its
/// normalizer.
fn read(name: &str) -> (Vec<Event>, Normalizer) {
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut events = Vec::new();
    for (at, line) in bytes_of(name)
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .enumerate()
    {
        normalizer
            .push_line(line, at as u64 + 1, &mut events)
            .unwrap_or_else(|err| panic!("{name}: line {}: {err:?}", at + 1));
    }
    normalizer.flush(&mut events);
    assert!(
        events.iter().all(|e| e.agent_kind == AgentKind::Qwen),
        "{name}: every event says Qwen Code wrote it"
    );
    assert!(
        normalizer.metrics().unknown.is_empty(),
        "{name}: {:?}",
        normalizer.metrics().unknown
    );
    (events, normalizer)
}

fn of_kind(events: &[Event], kind: EventKind) -> Vec<&Event> {
    events.iter().filter(|event| event.kind == kind).collect()
}

#[test]
fn the_scripted_turns_are_told_with_their_tools_and_failures() {
    let (events, normalizer) = read("main.jsonl");
    let tools: Vec<(EventKind, &str)> = events
        .iter()
        .filter(|e| e.kind != EventKind::Error)
        .filter_map(|e| Some((e.kind, e.tool.as_deref()?)))
        .collect();
    assert_eq!(
        tools,
        [
            (EventKind::Reading, "read_file"),
            (EventKind::Bash, "run_shell_command"),
            (EventKind::Writing, "edit"),
            (EventKind::Writing, "write_file"),
            (EventKind::Reading, "read_file"),
            (EventKind::Reading, "grep_search"),
            (EventKind::Reading, "glob"),
        ]
    );
    let errors: Vec<(Option<ErrorKind>, Option<&str>, Option<&str>)> =
        of_kind(&events, EventKind::Error)
            .iter()
            .map(|e| (e.error, e.tool.as_deref(), e.text.as_deref()))
            .collect();
    assert_eq!(
        errors[0],
        (
            Some(ErrorKind::Tool),
            Some("run_shell_command"),
            Some("exit code 3")
        )
    );
    assert_eq!(errors[1].1, Some("read_file"));
    assert_eq!(errors[2].0, Some(ErrorKind::Api));
    assert_eq!(errors.len(), 3);
    assert_eq!(of_kind(&events, EventKind::Success).len(), 1);
    assert_eq!(normalizer.metrics().prompts, 2);
    assert_eq!(normalizer.status(), Status::WaitingForInput);
    assert_eq!(normalizer.context_used(), Some(1_720));
    assert_eq!(normalizer.context_limit(), 1_000_000);
    assert_eq!(normalizer.metrics().cli_version.as_deref(), Some("0.24.4"));

    let (midturn, normalizer) = read("midturn.jsonl");
    let last = midturn.last().expect("events");
    assert_eq!(
        (last.kind, last.error),
        (EventKind::Error, Some(ErrorKind::Api))
    );
    assert_eq!(normalizer.status(), Status::WaitingForInput);
}

#[test]
fn stats_count_each_reply_once_from_its_usage() {
    let ledger = usage::scan_bytes(&bytes_of("main.jsonl"));
    // Eight replies: prompts 1000..1700 by 100, 400 of each cached; 20 completion tokens each
    // (5 of them reasoning, counted inside the 20).
    let expected = Tokens {
        input: (1_000..=1_700).step_by(100).map(|n| n - 400).sum(),
        output: 8 * 20,
        cache_read: 8 * 400,
        cache_creation: 0,
        cache_creation_1h: 0,
    };
    assert_eq!(ledger.tokens(), expected);
    // No price is known for Qwen's models (`crate::pricing`).
    assert_eq!(ledger.cost_usd(&PriceTable::default()), 0.0);
}

#[test]
fn a_subagent_starts_at_its_call_ends_at_its_notification_and_its_file_is_its_agents() {
    let (parent, normalizer) = read("subagent.jsonl");
    let runs: Vec<(EventKind, Option<&str>, Option<&str>)> = parent
        .iter()
        .filter(|e| matches!(e.kind, EventKind::SubagentStart | EventKind::SubagentEnd))
        .map(|e| (e.kind, e.agent_type.as_deref(), e.description.as_deref()))
        .collect();
    assert_eq!(
        runs,
        [
            (
                EventKind::SubagentStart,
                Some("general-purpose"),
                Some("look at a.txt")
            ),
            (
                EventKind::SubagentEnd,
                Some("general-purpose"),
                Some("look at a.txt")
            ),
        ]
    );
    // The notification is no prompt of the user's.
    assert_eq!(normalizer.metrics().prompts, 1);
    assert_eq!(of_kind(&parent, EventKind::Success).len(), 2);
    assert!(normalizer.session().is_some());

    let (inner, normalizer) = read("subagent-general.jsonl");
    let agent = inner[0].agent.clone();
    assert!(
        agent
            .as_deref()
            .is_some_and(|a| a.starts_with("general-purpose-"))
    );
    assert!(
        inner
            .iter()
            .all(|e| e.agent == agent && e.sidechain && e.session.is_none())
    );
    assert!(of_kind(&inner, EventKind::Prompt).is_empty());
    assert!(of_kind(&inner, EventKind::Success).is_empty());
    assert_eq!(of_kind(&inner, EventKind::Reading).len(), 1);
    assert_eq!(normalizer.session(), None);
    // Its tokens are its own: two replies (prompts 700 and 750, 400 cached each).
    let ledger = usage::scan_bytes(&bytes_of("subagent-general.jsonl"));
    assert_eq!(ledger.tokens().input, 300 + 350);
    // Its parent's tool result names it: the session model ties it to the call.
    let link = String::from_utf8(bytes_of("subagent.jsonl"))
        .expect("UTF-8")
        .lines()
        .find_map(|line| familiar_transcript::subagent_link(line.as_bytes()))
        .expect("a link");
    assert_eq!(Some(link.agent_id), agent);
    assert!(
        parent.iter().any(|e| e.kind == EventKind::SubagentStart
            && e.tool_use_id == Some(link.tool_use_id.clone()))
    );
}

#[test]
fn a_compaction_is_a_boundary_with_the_clis_counts() {
    let (events, normalizer) = read("compact.jsonl");
    let boundary = of_kind(&events, EventKind::CompactBoundary);
    assert_eq!(boundary.len(), 1);
    assert_eq!(boundary[0].trigger.as_deref(), Some("auto"));
    assert_eq!(boundary[0].pre_tokens, Some(900_037));
    assert_eq!(boundary[0].post_tokens, Some(897_795));
    assert_eq!(boundary[0].context_used, Some(897_795));
    assert_eq!(normalizer.metrics().compactions, 1);
    // The next reply's usage is the context again.
    assert_eq!(normalizer.context_used(), Some(1_220));
}
