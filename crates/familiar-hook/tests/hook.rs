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
