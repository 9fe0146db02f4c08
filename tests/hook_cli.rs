//! `familiar hook` end to end: hook JSON on stdin reaches a listening Familiar over the
//! socket; with nobody listening it exits 0 and prints nothing; `hook install`/`uninstall`
//! show the diff, keep a backup, refuse an unparsable file and undo exactly.

mod common;

use std::time::Duration;

use common::Test;
use familiar_hook::HookListener;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn hook_input_reaches_a_running_familiar() {
    let test = Test::new();
    let socket = test.home().join("run/familiar/hook.sock");
    let listener = HookListener::bind(&socket).expect("listens");
    let (tx, rx) = crossbeam_channel::unbounded();
    let _thread = listener.spawn(tx).expect("thread");
    test.arg("hook")
        .env("FAMILIAR_SOCKET", &socket)
        .stdin(
            r#"{"session_id":"s1","transcript_path":"/p/s1.jsonl","hook_event_name":"Notification","notification_type":"idle_prompt","message":"Claude is waiting for your input"}"#,
        )
        .stdout("")
        .stderr("")
        .run();
    let got = rx.recv_timeout(Duration::from_secs(10)).expect("received");
    assert_eq!(got.notification_type.as_deref(), Some("idle_prompt"));
    assert_eq!(got.session_id.as_deref(), Some("s1"));
}

#[test]
fn with_nobody_listening_the_hook_is_silent_and_succeeds() {
    let test = Test::new();
    let socket = test.home().join("nobody.sock");
    test.arg("hook")
        .env("FAMILIAR_SOCKET", &socket)
        .stdin(r#"{"hook_event_name":"Stop"}"#)
        .stdout("")
        .stderr("")
        .run();
    // Nor without any runtime dir at all.
    Test::new()
        .arg("hook")
        .env_remove("FAMILIAR_SOCKET")
        .env_remove("XDG_RUNTIME_DIR")
        .stdin("not even json")
        .stdout("")
        .stderr("")
        .run();
}

const USER_SETTINGS: &str = r#"{
  "model": "opus",
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

fn backups(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(".familiar-backup-"))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn install_shows_the_diff_keeps_a_backup_and_uninstall_undoes_it() {
    // Files live in a dir of the test's own: a `Test`'s home goes away after `run`.
    let dir = tempfile::tempdir().expect("temp dir");
    let claude = dir.path().join("claude");
    std::fs::create_dir_all(&claude).expect("claude dir");
    let settings = claude.join("settings.json");
    std::fs::write(&settings, USER_SETTINGS).expect("settings");

    // A dry run shows the change and writes nothing.
    let out = Test::new()
        .args(["hook", "install", "--dry-run", "--settings"])
        .arg(&settings)
        .stdout_contains("+    \"SessionStart\": [")
        .stdout_contains("dry run:")
        .run();
    assert!(text(&out.stdout).contains(&format!("--- {}", settings.display())));
    assert_eq!(
        std::fs::read_to_string(&settings).expect("read"),
        USER_SETTINGS
    );
    assert!(backups(&claude).is_empty());

    // Through CLAUDE_CONFIG_DIR (the test's default), for real.
    let exe = env!("CARGO_BIN_EXE_familiar");
    Test::new()
        .env("CLAUDE_CONFIG_DIR", &claude)
        .args(["hook", "install"])
        .stdout_contains(format!("+            \"command\": \"{exe} hook\""))
        .stdout_contains("# add hooks.Notification:")
        .stdout_contains("undo with `familiar hook uninstall`")
        .run();
    let installed = std::fs::read_to_string(&settings).expect("read");
    let value: serde_json::Value = serde_json::from_str(&installed).expect("json");
    assert_eq!(
        value["hooks"]["Notification"][0]["hooks"][0]["command"],
        format!("{exe} hook")
    );
    assert_eq!(
        value["hooks"]["Stop"][0]["hooks"][0]["command"],
        "notify-send done"
    );
    let saved = backups(&claude);
    assert_eq!(saved.len(), 1);
    assert_eq!(
        std::fs::read_to_string(&saved[0]).expect("backup"),
        USER_SETTINGS
    );

    // Again: nothing to do, nothing written.
    Test::new()
        .args(["hook", "install", "--settings"])
        .arg(&settings)
        .stdout_contains("nothing to change")
        .run();
    assert_eq!(backups(&claude).len(), 1);

    Test::new()
        .args(["hook", "uninstall", "--settings"])
        .arg(&settings)
        .stdout_contains("# remove hooks.SessionStart: familiar hook")
        .run();
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&settings).expect("read")).expect("json");
    let before: serde_json::Value = serde_json::from_str(USER_SETTINGS).expect("json");
    assert_eq!(after, before);
    assert_eq!(backups(&claude).len(), 2);
}

#[test]
fn an_unparsable_settings_file_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = dir.path().join("settings.json");
    let broken = "{\n  \"model\": \"opus\",\n}\n";
    std::fs::write(&settings, broken).expect("settings");
    let out = Test::new()
        .args(["hook", "install", "--settings"])
        .arg(&settings)
        .status(1)
        .stdout("")
        .run();
    assert_eq!(
        text(&out.stderr),
        format!(
            "familiar: {}: settings.json does not parse (line 3, column 1: trailing comma); fix \
             it first, it was left as it is\n",
            settings.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), broken);
}
