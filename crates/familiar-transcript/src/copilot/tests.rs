//! The reader on the files Copilot CLI 1.0.102 wrote against a mock OpenAI-compatible API
//! (`fixtures/copilot-1.0.102/`, see its README): the events each run's records become, and a
//! mistake in a file (a truncated line, an event type the schema does not know) as one clear
//! diagnostic or one unknown, the rest going on.

use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};

use crate::{DiagnosticKind, Normalizer, NormalizerConfig, normalize_bytes};

const MAIN: &str = include_str!("../../../../fixtures/copilot-1.0.102/main.jsonl");
const API_ERROR: &str = include_str!("../../../../fixtures/copilot-1.0.102/api-error.jsonl");
const COMPACT: &str = include_str!("../../../../fixtures/copilot-1.0.102/compact.jsonl");
const RESUMED: &str = include_str!("../../../../fixtures/copilot-1.0.102/resumed.jsonl");
const PERMISSION: &str = include_str!("../../../../fixtures/copilot-1.0.102/permission.jsonl");
const INTERACTIVE_COMPACT: &str =
    include_str!("../../../../fixtures/copilot-1.0.102/interactive-compact.jsonl");

fn read(text: &str) -> (Vec<Event>, Vec<crate::Diagnostic>) {
    normalize_bytes(text.as_bytes(), &NormalizerConfig::default())
}

fn kinds(events: &[Event]) -> Vec<(EventKind, Option<&str>, Option<&str>)> {
    events
        .iter()
        .filter(|e| e.kind != EventKind::Status)
        .map(|e| (e.kind, e.tool.as_deref(), e.target.as_deref()))
        .collect()
}

#[test]
fn the_main_run_is_its_prompt_tools_subagent_and_success() {
    let (events, diagnostics) = read(MAIN);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(events.iter().all(|e| e.agent_kind == AgentKind::Copilot));
    let session = Some("a59f8f81-7352-43fd-96e6-3e4569a13695");
    assert!(events.iter().all(|e| e.session.as_deref() == session));
    use EventKind::*;
    let notes = Some("/tmp/cp/proj/notes.txt");
    assert_eq!(
        kinds(&events),
        vec![
            (SessionStart, None, None),
            (Prompt, None, None),
            (Reading, Some("view"), notes),
            (Bash, Some("bash"), Some("exit 3")),
            (Error, Some("bash"), Some("exit 3")),
            (Writing, Some("edit"), notes),
            (Writing, Some("create"), Some("/tmp/cp/proj/new.txt")),
            (Reading, Some("grep"), Some("goodbye")),
            (Reading, Some("glob"), Some("*.txt")),
            (Reading, Some("view"), Some("/tmp/cp/proj/missing.txt")),
            (Error, Some("view"), Some("/tmp/cp/proj/missing.txt")),
            (SubagentStart, Some("task"), Some("explore")),
            (Reading, Some("view"), notes),
            (Text, None, None),
            (SubagentEnd, Some("task"), Some("explore")),
            (Text, None, None),
            (Success, None, None),
        ]
    );
    assert_eq!(events[1].text.as_deref(), Some("do the things"));
    let errors: Vec<_> = events.iter().filter(|e| e.kind == Error).collect();
    assert_eq!(errors[0].error, Some(ErrorKind::Tool));
    assert!(errors[0].text.as_deref().unwrap().contains("exit code 3"));
    assert_eq!(errors[1].text.as_deref(), Some("Path does not exist"));
    // The subagent's own records are its agent's; its start and end are the parent's.
    let agent = Some("ac28570b-ad8b-4149-b7cb-afd369046d3a");
    let start = events.iter().find(|e| e.kind == SubagentStart).unwrap();
    assert_eq!(start.agent, None);
    assert_eq!(start.tool_use_id.as_deref(), Some("call_7_0"));
    assert_eq!(start.description.as_deref(), Some("look at notes"));
    let inner: Vec<_> = events.iter().filter(|e| e.agent.is_some()).collect();
    assert_eq!(inner.len(), 2);
    // Its context is its own requests' (500 in and 10 out, then 600 and 11).
    assert_eq!(inner[0].context_used, Some(510));
    assert_eq!(inner[1].context_used, Some(611));
    assert!(
        inner
            .iter()
            .all(|e| e.agent.as_deref() == agent && e.sidechain)
    );
    let end = events.iter().find(|e| e.kind == SubagentEnd).unwrap();
    assert_eq!(end.agent, None);
    assert_eq!(end.description.as_deref(), Some("look at notes"));
    // The context: the main agent's last request (2000 in, 28 out) of the CLI's 64,000.
    let last = events.last().unwrap();
    assert_eq!(last.kind, Status);
    assert_eq!(last.status, familiar_model::Status::WaitingForInput);
    assert_eq!(last.context_used, Some(2_028));
    assert_eq!(last.context_limit, 64_000);
}

#[test]
fn the_normalizer_says_which_session_and_what_it_counted() {
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    for (at, line) in MAIN.lines().enumerate() {
        normalizer
            .push_line(line.as_bytes(), at as u64 + 1, &mut out)
            .unwrap();
    }
    assert_eq!(normalizer.agent_kind(), AgentKind::Copilot);
    assert_eq!(
        normalizer.session(),
        Some("a59f8f81-7352-43fd-96e6-3e4569a13695")
    );
    assert_eq!(normalizer.status(), Status::WaitingForInput);
    let metrics = normalizer.metrics();
    assert_eq!(metrics.prompts, 1);
    assert_eq!(metrics.cli_version.as_deref(), Some("1.0.102"));
    assert_eq!(metrics.tool_calls.get("view"), Some(3));
    assert_eq!(metrics.files_modified.len(), 2);
    assert!(metrics.unknown.is_empty(), "{:?}", metrics.unknown);
}

#[test]
fn an_api_error_after_the_retries_is_one_error_and_the_turn_over() {
    let (events, diagnostics) = read(API_ERROR);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let errors: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::Error)
        .collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].error, Some(ErrorKind::Api));
    assert_eq!(
        errors[0].message.as_deref(),
        Some("Copilot CLI: the API answered 500")
    );
    assert!(
        errors[0]
            .text
            .as_deref()
            .unwrap()
            .contains("500 mock error")
    );
    assert_eq!(events.last().unwrap().status, Status::WaitingForInput);
    assert!(!events.iter().any(|e| e.kind == EventKind::Success));
}

#[test]
fn a_permission_asked_is_waiting_for_approval_and_its_refusal_a_denied_error() {
    let (events, _) = read(PERMISSION);
    let at = events
        .iter()
        .position(|e| e.status == Status::WaitingForApproval)
        .expect("waiting for approval");
    assert_eq!(events[at].kind, EventKind::Status);
    assert_eq!(events[at].previous_status, Some(Status::Working));
    let denied = events
        .iter()
        .find(|e| e.kind == EventKind::Error)
        .expect("the refusal");
    assert_eq!(denied.error, Some(ErrorKind::Denied));
    assert_eq!(denied.tool.as_deref(), Some("bash"));
    assert_eq!(
        events.last().map(|e| e.status),
        Some(Status::WaitingForInput)
    );
}

#[test]
fn a_truncated_line_is_one_diagnostic_and_the_session_goes_on() {
    let lines: Vec<&str> = MAIN.lines().collect();
    let cut = &lines[1][..lines[1].len() / 2];
    let mut text = [lines[0], cut].join("\n");
    for line in &lines[2..] {
        text.push('\n');
        text.push_str(line);
    }
    text.push('\n');
    let (events, diagnostics) = read(&text);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0].line, 2);
    assert!(matches!(diagnostics[0].kind, DiagnosticKind::Malformed(_)));
    // The prompt is lost; the rest is read.
    assert!(!events.iter().any(|e| e.kind == EventKind::Prompt));
    assert_eq!(
        events
            .iter()
            .filter(|e| e.kind == EventKind::Success)
            .count(),
        1
    );
}

#[test]
fn an_event_type_the_schema_does_not_know_is_counted_and_said_once() {
    let new = r#"{"type":"session.something_new","data":{},"id":"n1","timestamp":"2026-11-28T05:53:55.000Z","parentId":null}"#;
    let text = format!("{MAIN}{new}\n{new}\n");
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    for (at, line) in text.lines().enumerate() {
        normalizer
            .push_line(line.as_bytes(), at as u64 + 1, &mut out)
            .unwrap();
    }
    assert_eq!(
        normalizer.take_unknown_news(),
        vec!["copilot/session.something_new".to_owned()]
    );
    assert_eq!(
        normalizer
            .metrics()
            .unknown
            .get("copilot/session.something_new"),
        Some(2)
    );
}

#[test]
fn a_compaction_is_a_compact_boundary_with_the_clis_estimates() {
    let (events, _) = read(COMPACT);
    let compactions: Vec<_> = events
        .iter()
        .filter(|e| e.kind == EventKind::CompactBoundary)
        .collect();
    assert_eq!(compactions.len(), 1, "{events:?}");
    let compaction = compactions[0];
    assert_eq!(compaction.trigger.as_deref(), Some("auto"));
    assert_eq!(compaction.pre_tokens, Some(10_560));
    assert_eq!(compaction.post_tokens, Some(10_565));
    assert_eq!(compaction.context_used, Some(10_565));
    // The next request says the context again.
    let last = events.last().unwrap();
    assert_eq!(last.context_used, Some(22_025));
}

/// An interactive session's `/compact`: its summary request's `model.*` records (outside the
/// schema) are known and no event; the compaction is `manual`.
#[test]
fn an_interactive_compact_is_a_manual_compaction_and_nothing_unknown() {
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut events = Vec::new();
    let mut diagnostics = Vec::new();
    crate::feed(
        &mut normalizer,
        INTERACTIVE_COMPACT.as_bytes(),
        &mut events,
        &mut diagnostics,
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(
        normalizer.metrics().unknown.is_empty(),
        "{:?}",
        normalizer.metrics().unknown
    );
    use EventKind::*;
    let a = Some("/tmp/familiar-copilot/project/a.txt");
    assert_eq!(
        kinds(&events),
        vec![
            (SessionStart, None, None),
            (Prompt, None, None),
            (Reading, Some("view"), a),
            (Text, None, None),
            (Success, None, None),
            (CompactBoundary, None, None),
            (Prompt, None, None),
            (Reading, Some("view"), a),
            (Text, None, None),
            (Success, None, None),
        ]
    );
    let compaction = events.iter().find(|e| e.kind == CompactBoundary).unwrap();
    assert_eq!(compaction.trigger.as_deref(), Some("manual"));
    assert_eq!(compaction.post_tokens, Some(12_463));
}

#[test]
fn a_resumed_session_goes_on_in_the_same_file_as_the_same_session() {
    let (events, diagnostics) = read(RESUMED);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let count = |kind: EventKind| events.iter().filter(|e| e.kind == kind).count();
    assert_eq!(count(EventKind::SessionStart), 1);
    assert_eq!(count(EventKind::Prompt), 2);
    assert_eq!(count(EventKind::Success), 2);
    assert!(
        events
            .iter()
            .all(|e| e.session.as_deref() == Some("e5bb721e-52a3-477c-bf35-773fcc5bdba6"))
    );
    assert_eq!(events.last().unwrap().context_used, Some(2_512));
}
