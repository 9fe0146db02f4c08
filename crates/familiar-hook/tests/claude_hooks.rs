//! Every hook Claude Code 2.1.197 fired in an interactive session (driven in a pseudo-terminal
//! against a mock API, permission prompts answered), one sample per hook in
//! `fixtures/hooks/claude-2.1.197.jsonl`: each parses, and the ones that tell a status become
//! the right `status` event.

use familiar_hook::{HookInput, hook_event};
use familiar_model::Status;

fn samples() -> Vec<HookInput> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/hooks/claude-2.1.197.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("hook samples");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| HookInput::parse(line.as_bytes()).expect("a hook sample parses"))
        .collect()
}

#[test]
fn approval_was_invisible_without_hooks() {
    let samples = samples();
    assert!(
        samples
            .iter()
            .all(|s| s.session_id.is_some() && s.transcript_path.is_some())
    );
    let statuses: Vec<(String, bool, Option<Status>)> = samples
        .iter()
        .map(|s| {
            (
                s.hook_event_name.clone().unwrap_or_default(),
                s.agent_id.is_some(),
                hook_event(s).map(|e| e.status),
            )
        })
        .collect();
    let want = |name: &str, sub: bool| {
        statuses
            .iter()
            .find(|(n, s, _)| n == name && *s == sub)
            .unwrap_or_else(|| panic!("no {name} sample (subagent: {sub})"))
            .2
    };
    assert_eq!(
        want("PermissionRequest", false),
        Some(Status::WaitingForApproval)
    );
    assert_eq!(
        want("PermissionRequest", true),
        Some(Status::WaitingForApproval)
    );
    assert_eq!(want("UserPromptSubmit", false), Some(Status::Working));
    assert_eq!(want("PreToolUse", false), Some(Status::Working));
    assert_eq!(want("PreCompact", false), Some(Status::Working));
    assert_eq!(want("Stop", false), Some(Status::WaitingForInput));
    // Fired instead of Stop when an API error ended the turn (a 429 until retries ran out).
    assert_eq!(want("StopFailure", false), Some(Status::WaitingForInput));
    assert_eq!(want("SessionEnd", false), Some(Status::Idle));
    for quiet in [
        "SessionStart",
        "PostToolUse",
        "SubagentStart",
        "SubagentStop",
        "PostCompact",
    ] {
        assert_eq!(want(quiet, quiet.starts_with("Subagent")), None, "{quiet}");
    }

    // A subagent's hooks name it; the tool is named before any transcript record exists.
    let sub = samples
        .iter()
        .find(|s| s.hook_event_name.as_deref() == Some("PermissionRequest") && s.agent_id.is_some())
        .expect("a subagent permission request");
    let event = hook_event(sub).expect("an event");
    assert_eq!(event.agent, sub.agent_id);
    assert!(event.sidechain);
    assert_eq!(event.tool.as_deref(), Some("Read"));
}
