//! Every hook Claude Code fired in an interactive session (driven in a pseudo-terminal against a
//! mock API, permission prompts answered), one sample per hook, as the CLI wrote them:
//! `fixtures/hooks/claude-2.1.197.jsonl` (recorded by hand, with a subagent asking) and
//! `fixtures/hooks/claude-2.1.332.jsonl` (recorded by `tests/real_claude/interactive.rs` with
//! `FAMILIAR_RECORD`, temp paths renamed `/tmp/rec`). Each parses, the ones that tell a status
//! become the right `status` event, and `hook install` registers every one that does.

use familiar_hook::settings::EVENTS;
use familiar_hook::{HookInput, hook_event};
use familiar_model::Status;

fn samples(version: &str) -> Vec<HookInput> {
    let path = format!(
        "{}/../../fixtures/hooks/claude-{version}.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("hook samples");
    let samples: Vec<HookInput> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| HookInput::parse(line.as_bytes()).expect("a hook sample parses"))
        .collect();
    assert!(
        samples
            .iter()
            .all(|s| s.session_id.is_some() && s.transcript_path.is_some()),
        "{path}"
    );
    samples
}

/// A sample's hook, notification type and whether a subagent fired it.
type Key = (String, Option<String>, bool);

/// Each sample's key and the status its event tells.
fn statuses(samples: &[HookInput]) -> Vec<(Key, Option<Status>)> {
    samples
        .iter()
        .map(|s| {
            (
                (
                    s.hook_event_name.clone().unwrap_or_default(),
                    s.notification_type.clone(),
                    s.agent_id.is_some(),
                ),
                hook_event(s).map(|e| e.status),
            )
        })
        .collect()
}

fn want(
    statuses: &[(Key, Option<Status>)],
    name: &str,
    notification: Option<&str>,
    sub: bool,
) -> Option<Status> {
    statuses
        .iter()
        .find(|((n, t, s), _)| n == name && t.as_deref() == notification && *s == sub)
        .unwrap_or_else(|| panic!("no {name} {notification:?} sample (subagent: {sub})"))
        .1
}

/// What both versions fired, and the status each tells.
fn common_hooks(version: &str) {
    let statuses = statuses(&samples(version));
    let want = |name: &str, sub: bool| want(&statuses, name, None, sub);
    assert_eq!(
        want("PermissionRequest", false),
        Some(Status::WaitingForApproval)
    );
    assert_eq!(want("UserPromptSubmit", false), Some(Status::Working));
    assert_eq!(want("PreToolUse", false), Some(Status::Working));
    assert_eq!(want("PreToolUse", true), Some(Status::Working));
    assert_eq!(want("PreCompact", false), Some(Status::Working));
    // A failed tool (`exit 3`): the model goes on.
    assert_eq!(want("PostToolUseFailure", false), Some(Status::Working));
    // The parent's Agent tool is running.
    assert_eq!(want("SubagentStart", true), Some(Status::Working));
    // `/compact` (trigger `manual`) is over: back at the prompt.
    assert_eq!(want("PostCompact", false), Some(Status::WaitingForInput));
    assert_eq!(want("Stop", false), Some(Status::WaitingForInput));
    // Fired instead of Stop when an API error ended the turn (a 429 until retries ran out).
    assert_eq!(want("StopFailure", false), Some(Status::WaitingForInput));
    assert_eq!(want("SessionEnd", false), Some(Status::Idle));
    for (quiet, sub) in [
        ("SessionStart", false),
        ("PostToolUse", false),
        ("PostToolUse", true),
        ("SubagentStop", true),
    ] {
        assert_eq!(want(quiet, sub), None, "{version} {quiet}");
    }
    // Every hook that tells a status is installed.
    for ((name, _, _), status) in &statuses {
        if status.is_some() {
            assert!(EVENTS.contains(&name.as_str()), "{version}: {name}");
        }
    }
}

#[test]
fn claude_2_1_197_hooks_tell_their_status() {
    common_hooks("2.1.197");
    let samples = samples("2.1.197");
    let statuses = statuses(&samples);
    assert_eq!(
        want(&statuses, "PermissionRequest", None, true),
        Some(Status::WaitingForApproval)
    );
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

#[test]
fn claude_2_1_332_hooks_tell_their_status() {
    common_hooks("2.1.332");
    let samples = samples("2.1.332");
    let statuses = statuses(&samples);
    // The notification types it fired: the permission dialog up 6 s, auto mode asking the
    // user to choose (recorded in auto mode, `FAMILIAR_RECORD_MODE=auto`), and the prompt idle
    // past `messageIdleNotifThresholdMs`.
    assert_eq!(
        want(&statuses, "Notification", Some("permission_prompt"), false),
        Some(Status::WaitingForApproval)
    );
    assert_eq!(
        want(&statuses, "Notification", Some("agent_needs_input"), false),
        Some(Status::WaitingForApproval)
    );
    assert_eq!(
        want(&statuses, "Notification", Some("idle_prompt"), false),
        Some(Status::WaitingForInput)
    );
    // New hooks that fire often and tell nothing a transcript does not.
    for quiet in ["PostToolBatch", "MessageDisplay"] {
        assert_eq!(want(&statuses, quiet, None, false), None, "{quiet}");
        assert!(!EVENTS.contains(&quiet));
    }
    // The failure's text is the CLI's: the tool's error, the API error's kind.
    let text = |name: &str| {
        samples
            .iter()
            .find(|s| s.hook_event_name.as_deref() == Some(name))
            .and_then(hook_event)
            .and_then(|e| e.text)
    };
    assert_eq!(text("PostToolUseFailure").as_deref(), Some("Exit code 3"));
    assert_eq!(text("StopFailure").as_deref(), Some("rate_limit"));
    // A subagent's start names it.
    let start = samples
        .iter()
        .find(|s| s.hook_event_name.as_deref() == Some("SubagentStart"))
        .and_then(hook_event)
        .expect("a SubagentStart event");
    assert!(start.agent.is_some() && start.sidechain);
}

/// Every hook either recorded CLI fired is known to Familiar; one from a newer CLI is named.
#[test]
fn every_recorded_hook_is_known_and_a_new_one_is_named() {
    for version in ["2.1.197", "2.1.332"] {
        for input in samples(version) {
            assert_eq!(
                familiar_hook::input::unknown_in(&input),
                None,
                "{version}: {input:?}"
            );
        }
    }
    let newer = HookInput::parse(br#"{"hook_event_name":"TeleportStart"}"#).expect("JSON");
    assert_eq!(
        familiar_hook::input::unknown_in(&newer).as_deref(),
        Some("hook/TeleportStart")
    );
    let notification =
        HookInput::parse(br#"{"hook_event_name":"Notification","notification_type":"owl"}"#)
            .expect("JSON");
    assert_eq!(
        familiar_hook::input::unknown_in(&notification).as_deref(),
        Some("hook/Notification/owl")
    );
}
