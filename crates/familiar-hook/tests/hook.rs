//! Hook input parsing and events, the socket between `familiar hook` and a running Familiar,
//! and the settings.json edits (order kept, other hooks untouched, refused when unparsable,
//! undone exactly).

use std::path::Path;
use std::time::Duration;

use familiar_hook::{
    HookError, HookInput, HookListener, SettingsError, hook_command, hook_event, install, send,
    uninstall,
};
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
fn messages_cross_the_socket_and_a_stale_socket_is_replaced() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("run/familiar/hook.sock");
    let listener = HookListener::bind(&path).expect("binds");
    assert!(matches!(
        HookListener::bind(&path),
        Err(HookError::InUse(_))
    ));
    let (tx, rx) = crossbeam_channel::unbounded();
    let _thread = listener.spawn(tx).expect("listener thread");
    send(
        &path,
        br#"{"hook_event_name":"Stop","session_id":"s1"}"#,
        Duration::from_secs(5),
    )
    .expect("sent");
    let got = rx.recv_timeout(Duration::from_secs(10)).expect("received");
    assert_eq!(got.hook_event_name.as_deref(), Some("Stop"));
    assert_eq!(got.session_id.as_deref(), Some("s1"));

    // A socket file left behind by a Familiar that died: nobody answers, so it is replaced.
    let stale = dir.path().join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).expect("bind"));
    assert!(stale.exists());
    let again = HookListener::bind(&stale).expect("replaces the stale socket");
    drop(again);
    assert!(!stale.exists(), "the socket file goes with the listener");

    let nobody = dir.path().join("nobody.sock");
    assert!(matches!(
        send(&nobody, b"{}", Duration::from_secs(1)),
        Err(HookError::NotListening { .. })
    ));
}

const COMMAND: &str = "/usr/local/bin/familiar hook";

#[test]
fn install_adds_our_hooks_keeps_everything_else_and_uninstall_undoes_it() {
    let before = r#"{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(ls:*)"]
  },
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      }
    ]
  }
}
"#;
    let edit = install(Some(before), COMMAND).expect("installs");
    assert_eq!(
        edit.changes,
        vec![
            "add hooks.SessionStart: /usr/local/bin/familiar hook",
            "add hooks.Notification: /usr/local/bin/familiar hook",
            "add hooks.Stop: /usr/local/bin/familiar hook",
        ]
    );
    assert_eq!(
        edit.after,
        r#"{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(ls:*)"
    ]
  },
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "notify-send done"
          }
        ]
      },
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/familiar hook"
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/familiar hook"
          }
        ]
      }
    ],
    "Notification": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/familiar hook"
          }
        ]
      }
    ]
  }
}
"#
    );

    // Installing twice changes nothing.
    let twice = install(Some(&edit.after), COMMAND).expect("installs");
    assert!(!twice.changed());
    assert_eq!(twice.after, edit.after);

    // Uninstall removes exactly ours; the user's Stop hook and the rest stay.
    let undone = uninstall(&edit.after).expect("uninstalls");
    assert_eq!(undone.changes.len(), 3);
    let back: serde_json::Value = serde_json::from_str(&undone.after).expect("json");
    let original: serde_json::Value = serde_json::from_str(before).expect("json");
    assert_eq!(back, original);
    let keys: Vec<&str> = undone
        .after
        .lines()
        .filter(|l| l.starts_with("  \""))
        .map(|l| l.trim().split('"').nth(1).unwrap_or_default())
        .collect();
    assert_eq!(keys, vec!["model", "permissions", "hooks"], "order kept");
}

#[test]
fn install_into_nothing_and_uninstall_back_to_nothing() {
    let edit = install(None, COMMAND).expect("installs");
    assert_eq!(edit.changes.len(), 3);
    let undone = uninstall(&edit.after).expect("uninstalls");
    assert_eq!(undone.after, "{}\n");
    assert!(!uninstall("{}").expect("nothing to do").changed());
}

#[test]
fn unparsable_or_odd_settings_are_refused() {
    assert_eq!(
        install(Some("{\n  \"model\": \"opus\",\n}\n"), COMMAND),
        Err(SettingsError::Parse {
            line: 3,
            column: 1,
            message: "trailing comma".to_owned()
        })
    );
    assert_eq!(
        install(Some("[]"), COMMAND),
        Err(SettingsError::NotObject("the top level".to_owned()))
    );
    assert_eq!(
        install(Some(r#"{"hooks": {"Stop": {}}}"#), COMMAND),
        Err(SettingsError::NotArray("Stop".to_owned()))
    );
    assert!(matches!(uninstall("{"), Err(SettingsError::Parse { .. })));
}

#[test]
fn hook_commands_are_quoted_for_the_shell_when_needed() {
    assert_eq!(
        hook_command(Path::new("/home/u/.cargo/bin/familiar")),
        "/home/u/.cargo/bin/familiar hook"
    );
    assert_eq!(
        hook_command(Path::new("/home/u/my tools/familiar")),
        "'/home/u/my tools/familiar' hook"
    );
    // A quoted command is still recognized as ours when uninstalling.
    let edit = install(None, &hook_command(Path::new("/opt/it's/familiar"))).expect("installs");
    assert_eq!(uninstall(&edit.after).expect("uninstalls").changes.len(), 3);
}
