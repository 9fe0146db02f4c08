//! Every real transcript in `shared/fixtures/real/` parses without a panic or an unexplained
//! skipped line, and its events and stats match the reviewed snapshots. A few facts checked by
//! hand against the raw files are asserted directly, so a snapshot update cannot hide them.

mod common;

use common::{events_of, real_fixture_dir, real_fixtures, render};
use familiar_transcript::{
    ErrorKind, EventKind, Normalizer, NormalizerConfig, PriceTable, Summary, normalize_read,
};

fn read(name: &str) -> Vec<u8> {
    std::fs::read(real_fixture_dir().join(name)).expect("real fixture")
}

#[test]
fn every_real_transcript_parses_without_diagnostics_and_matches_its_snapshot() {
    for path in real_fixtures() {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("name")
            .to_owned();
        let bytes = std::fs::read(&path).expect("read fixture");
        let (events, diagnostics) = events_of(&bytes);
        assert!(diagnostics.is_empty(), "{name}: {diagnostics:?}");
        assert!(!events.is_empty(), "{name}: no events");
        insta::assert_snapshot!(format!("events-{name}"), render(&events));

        let mut normalizer = Normalizer::new(NormalizerConfig::default());
        normalize_read(
            &bytes[..],
            &mut normalizer,
            |_| Ok(()),
            |d| panic!("{name}: {d}"),
        )
        .expect("in-memory read");
        let ledger = familiar_transcript::usage::scan_bytes(&bytes);
        let cost = ledger.cost_usd(&PriceTable::default());
        let summary = Summary::new(&name, &normalizer, ledger.tokens(), cost);
        insta::assert_json_snapshot!(format!("stats-{name}"), summary);
    }
}

#[test]
fn slopometry_api_errors_compaction_and_turn_ends() {
    let (events, _) = events_of(&read("v2.0.65-slopometry-api-error-compact-summary.jsonl"));
    let api: Vec<_> = events
        .iter()
        .filter(|e| e.error == Some(ErrorKind::Api))
        .map(|e| (e.line, e.cause.as_deref(), e.retry_attempt))
        .collect();
    assert_eq!(
        api,
        [
            (379, Some("ConnectionRefused"), Some(1)),
            (380, Some("ConnectionRefused"), Some(2))
        ]
    );
    let boundary = events
        .iter()
        .find(|e| e.kind == EventKind::CompactBoundary)
        .expect("boundary");
    assert_eq!(
        (boundary.line, boundary.pre_tokens, boundary.context_used),
        (398, Some(155_317), None)
    );
    // 13 stop_hook_summary records, one per turn; the compact summary at 399 is no prompt.
    assert_eq!(
        events
            .iter()
            .filter(|e| e.kind == EventKind::Success)
            .count(),
        13
    );
    assert!(
        !events
            .iter()
            .any(|e| e.kind == EventKind::Prompt && e.line == 399)
    );
}

#[test]
fn erk_synthetic_api_errors_end_their_turns_without_success() {
    let (events, _) = events_of(&read("v2.1.56-erk-api-error-turn-duration.jsonl"));
    let api_lines: Vec<u64> = events
        .iter()
        .filter(|e| e.error == Some(ErrorKind::Api))
        .map(|e| e.line)
        .collect();
    assert_eq!(api_lines, [163, 211, 242, 288, 311, 413, 433]);
    // turn_duration at 166 follows the API error at 163: no success for that turn.
    let successes: Vec<u64> = events
        .iter()
        .filter(|e| e.kind == EventKind::Success)
        .map(|e| e.line)
        .collect();
    assert_eq!(successes, [364, 375]);
    // The success waits at its `stop_hook_summary` for the `turn_duration` right after (the
    // one at 364 has one at 365; the one at 375 has none).
    let durations: Vec<Option<u64>> = events
        .iter()
        .filter(|e| e.kind == EventKind::Success)
        .map(|e| e.duration_ms)
        .collect();
    assert_eq!(durations, [Some(87_708), None]);
    let interrupts = events
        .iter()
        .filter(|e| e.error == Some(ErrorKind::Interrupted))
        .count();
    assert_eq!(interrupts, 1);
}

#[test]
fn rejections_are_not_tool_errors() {
    let (events, _) = events_of(&read("v1.0.31-claudestatus-tool-errors.jsonl"));
    let rejected = events
        .iter()
        .filter(|e| e.error == Some(ErrorKind::Rejected))
        .count();
    let interrupted = events
        .iter()
        .filter(|e| e.error == Some(ErrorKind::Interrupted))
        .count();
    let tool = events
        .iter()
        .filter(|e| e.error == Some(ErrorKind::Tool))
        .count();
    // 17 is_error results in the file (line 651 is the one rejection); 1 interrupt text (652).
    assert_eq!((tool, rejected, interrupted), (16, 1, 1));
}

#[test]
fn subagent_transcripts_carry_their_agent_and_own_context() {
    let (events, _) = events_of(&read("v2.1.39-spotter-subagent-agent-a881341.jsonl"));
    assert!(
        events
            .iter()
            .all(|e| e.agent.as_deref() == Some("a881341") && e.sidechain)
    );
    // The task prompt of a subagent is not a user prompt.
    assert!(!events.iter().any(|e| e.kind == EventKind::Prompt));
    assert_eq!(events[0].kind, EventKind::SessionStart);
    assert!(events.iter().skip(1).all(|e| e.context_used.is_some()));
}

#[test]
fn inline_sidechains_do_not_move_the_main_context() {
    let (events, _) = events_of(&read("v1.0.108-ccviewer-inline-sidechain.jsonl"));
    let main_after: Vec<_> = events
        .iter()
        .filter(|e| !e.sidechain && e.kind == EventKind::SubagentEnd)
        .map(|e| e.context_used)
        .collect();
    let main_before: Vec<_> = events
        .iter()
        .filter(|e| !e.sidechain && e.kind == EventKind::SubagentStart)
        .map(|e| e.context_used)
        .collect();
    assert_eq!(main_before.len(), 3);
    assert_eq!(main_before, main_after);
    assert!(
        events
            .iter()
            .any(|e| e.sidechain && e.kind == EventKind::Reading)
    );
}

#[test]
fn stream_json_runs_start_and_succeed() {
    let (events, _) = events_of(&read("stream-json-v2.1.3-gleam-init-tool-success.jsonl"));
    let kinds: Vec<_> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(kinds, ["session_start", "bash", "success", "status"]);
    assert_eq!(
        events[0].session.as_deref(),
        Some("40e7b02d-c0f9-4876-9010-f514d4eb0603")
    );
    assert_eq!(events[2].duration_ms, Some(8722));
}
