//! Hook input parsing and events (the socket is tested in `socket.rs`, the settings.json
//! edits in `settings.rs`).

use std::path::Path;

use familiar_hook::{HookInput, hook_event};
use familiar_model::{EventKind, Status};

#[test]
fn notification_hooks_become_status_events() {
    let permission = HookInput::parse(
        br#"{"session_id":"s1","transcript_path":"/p/s1.jsonl","cwd":"/p","hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash","extra":1}"#,
    )
    .expect("parses");
    let event = hook_event(&permission).expect("an event");
    assert_eq!(event.kind, EventKind::Status);
    assert_eq!(event.status, Status::WaitingForApproval);
    assert_eq!(event.session.as_deref(), Some("s1"));
    assert_eq!(
        event.text.as_deref(),
        Some("Claude needs your permission to use Bash")
    );

    let idle = HookInput {
        hook_event_name: Some("Notification".into()),
        notification_type: Some("idle_prompt".into()),
        ..HookInput::default()
    };
    assert_eq!(
        hook_event(&idle).map(|e| e.status),
        Some(Status::WaitingForInput)
    );

    let start = HookInput::parse(br#"{"hook_event_name":"SessionStart","session_id":"s2","transcript_path":"/p/s2.jsonl","source":"startup"}"#)
        .expect("parses");
    assert_eq!(hook_event(&start), None);
    assert_eq!(
        start.transcript_path.as_deref(),
        Some(Path::new("/p/s2.jsonl"))
    );
}

#[test]
fn a_turn_ended_by_an_api_error_fires_stop_failure_not_stop() {
    // Claude Code 2.1.197's hook table: "StopFailure: When the turn ends due to an API error
    // ... Fires instead of Stop". Same common fields as every hook.
    let failure = HookInput::parse(
        br#"{"session_id":"s1","transcript_path":"/p/s1.jsonl","hook_event_name":"StopFailure"}"#,
    )
    .expect("parses");
    assert_eq!(
        hook_event(&failure).map(|e| (e.status, e.session)),
        Some((Status::WaitingForInput, Some("s1".to_owned())))
    );
}

#[test]
fn a_refused_or_failed_tool_is_no_approval_wait() {
    // Auto mode refused a tool call (2.1.332: "After auto mode denies a tool call"): the model
    // is told and goes on; nobody is asked.
    let denied = HookInput {
        hook_event_name: Some("PermissionDenied".into()),
        tool_name: Some("Bash".into()),
        ..HookInput::default()
    };
    assert_eq!(
        hook_event(&denied).map(|e| (e.status, e.tool)),
        Some((Status::Working, Some("Bash".to_owned())))
    );
    // A tool the user interrupted ends the turn; one that failed does not.
    let mut failed = HookInput {
        hook_event_name: Some("PostToolUseFailure".into()),
        is_interrupt: Some(false),
        ..HookInput::default()
    };
    assert_eq!(hook_event(&failed).map(|e| e.status), Some(Status::Working));
    failed.is_interrupt = Some(true);
    assert_eq!(
        hook_event(&failed).map(|e| e.status),
        Some(Status::WaitingForInput)
    );
    // An automatic compaction happens mid-turn; `/compact` returns to the prompt.
    let mut compacted = HookInput {
        hook_event_name: Some("PostCompact".into()),
        trigger: Some("auto".into()),
        ..HookInput::default()
    };
    assert_eq!(
        hook_event(&compacted).map(|e| e.status),
        Some(Status::Working)
    );
    compacted.trigger = None;
    assert_eq!(hook_event(&compacted), None);
}

#[test]
fn a_field_of_another_shape_is_dropped_not_the_hook() {
    // A later CLI that made `error` an object or `is_interrupt` a string must still be heard.
    let input = HookInput::parse(
        br#"{"session_id":"s1","hook_event_name":"PostToolUseFailure","error":{"kind":"x"},"is_interrupt":"yes","trigger":7}"#,
    )
    .expect("parses");
    assert_eq!(input.error, None);
    assert_eq!(input.is_interrupt, None);
    assert_eq!(input.trigger, None);
    assert_eq!(
        hook_event(&input).map(|e| (e.status, e.session)),
        Some((Status::Working, Some("s1".to_owned())))
    );
}

/// The names Claude Code fires, and some it does not (a newer CLI's, or garbage).
const NAMES: &[&str] = &[
    "Notification",
    "PermissionRequest",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUseFailure",
    "Stop",
    "StopFailure",
    "SessionEnd",
    "PostCompact",
    "SubagentStart",
    "SomethingNew",
    "",
    "\u{1b}[31m",
];

proptest::proptest! {
    /// Hook input is untrusted (any process of the user's may connect): whatever bytes come,
    /// parsing gives a value or an error, and a parsed input gives an event or none, never a
    /// panic; fields of the wrong type are an error, not a crash.
    #[test]
    fn any_hook_input_parses_or_fails_without_a_panic(
        name in proptest::sample::select(NAMES),
        session in proptest::option::of("[ -~]{0,40}"),
        path in proptest::option::of("[ -~/]{0,60}"),
        notification in proptest::option::of(proptest::sample::select(&["permission_prompt", "idle_prompt", "agent_needs_input", "x"][..])),
        trigger in proptest::option::of(proptest::sample::select(&["manual", "auto", "?"][..])),
        odd in proptest::bool::ANY,
        noise in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
    ) {
        let mut object = serde_json::json!({ "hook_event_name": name });
        if let Some(session) = session {
            object["session_id"] = if odd { serde_json::json!(42) } else { session.into() };
        }
        if let Some(path) = path {
            object["transcript_path"] = path.into();
        }
        if let Some(kind) = notification {
            object["notification_type"] = kind.into();
        }
        if let Some(trigger) = trigger {
            object["trigger"] = if odd { serde_json::json!([trigger]) } else { trigger.into() };
        }
        let bytes = serde_json::to_vec(&object).unwrap_or_default();
        if let Ok(input) = HookInput::parse(&bytes) {
            let event = hook_event(&input);
            let _ = familiar_hook::input::unknown_in(&input);
            // A turn's end is always told, for the session the hook named.
            if name == "Stop" {
                let event = event.expect("Stop is an event");
                proptest::prop_assert_eq!(event.status, Status::WaitingForInput);
                proptest::prop_assert_eq!(event.session, input.session_id.clone());
            }
        }
        let _ = HookInput::parse(&noise);
    }
}
