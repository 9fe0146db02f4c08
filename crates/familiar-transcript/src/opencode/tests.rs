//! The reader on lines of Familiar's opencode source (`fixtures/opencode-1.18.33/`, the rows
//! the real CLI 1.18.33 wrote against the mock in `tests/real_opencode.rs`), and a mistake in
//! a row (its `data` not JSON, a part type Familiar does not know) as one unknown, the rest
//! going on.

use familiar_model::{AgentKind, EventKind};

use crate::{Normalizer, NormalizerConfig, normalize_bytes};

const MAIN: &str = include_str!("../../../../fixtures/opencode-1.18.33/main.jsonl");
const COMPACT: &str = include_str!("../../../../fixtures/opencode-1.18.33/compact.jsonl");
const API_ERROR: &str = include_str!("../../../../fixtures/opencode-1.18.33/apierror.jsonl");
const INTERACTIVE: &str = include_str!("../../../../fixtures/opencode-1.18.33/interactive.jsonl");

fn kinds(text: &str) -> Vec<(EventKind, Option<String>)> {
    let (events, diagnostics) = normalize_bytes(text.as_bytes(), &NormalizerConfig::default());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(events.iter().all(|e| e.agent_kind == AgentKind::Opencode));
    events
        .iter()
        .filter(|e| e.kind != EventKind::Status)
        .map(|e| (e.kind, e.tool.clone()))
        .collect()
}

#[test]
fn the_main_run_is_its_prompt_tools_subagent_and_success() {
    use EventKind::*;
    let tool = |kind, name: &str| (kind, Some(name.to_owned()));
    assert_eq!(
        kinds(MAIN),
        vec![
            (SessionStart, None),
            (Prompt, None),
            (Thinking, None),
            tool(Reading, "read"),
            tool(Bash, "bash"),
            tool(Error, "bash"),
            tool(Writing, "edit"),
            tool(Writing, "write"),
            tool(Reading, "read"),
            tool(Error, "read"),
            tool(Reading, "grep"),
            tool(Reading, "glob"),
            tool(SubagentStart, "task"),
            tool(Reading, "read"),
            (Text, None),
            tool(SubagentEnd, "task"),
            (Text, None),
            (Success, None),
        ]
    );
}

#[test]
fn the_tuis_session_is_its_prompt_read_reply_and_success() {
    use EventKind::*;
    assert_eq!(
        kinds(INTERACTIVE),
        vec![
            (SessionStart, None),
            (Prompt, None),
            (Reading, Some("read".to_owned())),
            (Text, None),
            (Success, None),
        ]
    );
}

#[test]
fn a_compaction_and_an_api_error_are_told() {
    assert!(kinds(COMPACT).contains(&(EventKind::CompactBoundary, None)));
    let (events, _) = normalize_bytes(API_ERROR.as_bytes(), &NormalizerConfig::default());
    let error = events
        .iter()
        .find(|e| e.kind == EventKind::Error)
        .expect("an API error");
    assert_eq!(
        error.message.as_deref(),
        Some("opencode: the API answered 500")
    );
    // The model whose request failed: the session's model though no reply came.
    assert_eq!(error.model.as_deref(), Some("gpt-4.1"));
}

#[test]
fn a_row_read_again_tells_only_what_is_new() {
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    let mut lines = MAIN.lines().collect::<Vec<_>>();
    // Every line twice, as the live source sends a row written again.
    lines = lines.into_iter().flat_map(|line| [line, line]).collect();
    for (n, line) in lines.iter().enumerate() {
        normalizer
            .push_line(line.as_bytes(), n as u64 + 1, &mut out)
            .expect("a record");
    }
    let once: Vec<EventKind> = kinds(MAIN).into_iter().map(|(kind, _)| kind).collect();
    let twice: Vec<EventKind> = out
        .iter()
        .filter(|e| e.kind != EventKind::Status)
        .map(|e| e.kind)
        .collect();
    assert_eq!(twice, once);
}

#[test]
fn a_row_that_is_not_json_and_an_unknown_part_are_counted_and_the_rest_go_on() {
    let session = MAIN.lines().next().expect("a session line");
    let text = format!(
        "{session}\n{}\n{}\n",
        r#"{"type":"opencode.part","sessionId":"ses_x","id":"prt_1","messageId":"msg_1","timestamp":"2026-11-28T07:00:00.000Z","data":"{not json"}"#,
        r#"{"type":"opencode.part","sessionId":"ses_x","id":"prt_2","messageId":"msg_1","timestamp":"2026-11-28T07:00:00.000Z","data":"{\"type\":\"hologram\"}"}"#,
    );
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        normalizer
            .push_line(line.as_bytes(), n as u64 + 1, &mut out)
            .expect("a record");
    }
    let unknown = &normalizer.metrics().unknown;
    assert!(
        unknown
            .get("opencode/part whose data is not a JSON object")
            .is_some(),
        "{unknown:?}"
    );
    assert!(
        unknown.get("opencode/part:hologram").is_some(),
        "{unknown:?}"
    );
    assert_eq!(out[0].kind, EventKind::SessionStart);
}
