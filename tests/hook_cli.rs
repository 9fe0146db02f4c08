//! `familiar hook` end to end: hook JSON on stdin reaches a listening Familiar over the
//! socket; with nobody listening it exits 0 and prints nothing; `hook install`/`uninstall`
//! show only the changed lines (values masked), ask (or need --yes), write through symlinks,
//! refuse read-only and unparsable files, keep a bounded number of backups, and give back the
//! user's exact bytes (or no file, when install created it).

mod common;
/// The hook at run time: the socket's life, a stopped or absent Familiar, an input left open.
#[path = "hook_cli/forward.rs"]
mod forward;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
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
    let socket = test.home().join("run/nobody.sock");
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
  "env": {"SECRET_TOKEN": "hunter2"},
  "cleanupPeriodDays": 12345678901234567890123,
  "hooks": {
    "Stop": [{"matcher": "", "hooks": [{"type": "command", "command": "notify-send done"}]}],
    "Notification": []
  }
}
"#;

fn backups(dir: &Path) -> Vec<PathBuf> {
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

/// A settings dir of the test's own (a `Test`'s home goes away after `run`).
fn claude_dir(settings: Option<&str>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let claude = dir.path().join("claude");
    std::fs::create_dir_all(&claude).expect("claude dir");
    if let Some(text) = settings {
        std::fs::write(claude.join("settings.json"), text).expect("settings");
    }
    (dir, claude)
}

fn hook(action: &str, settings: &Path) -> Test {
    Test::new()
        .args(["hook", action, "--settings"])
        .arg(settings)
}

#[test]
fn install_shows_only_the_changed_lines_asks_and_uninstall_gives_back_the_exact_file() {
    let (_dir, claude) = claude_dir(Some(USER_SETTINGS));
    let settings = claude.join("settings.json");
    let exe = env!("CARGO_BIN_EXE_familiar");

    // A dry run shows the change and writes nothing; the secret beside it is masked.
    let out = hook("install", &settings).arg("--dry-run").run();
    let shown = text(&out.stdout)
        .replace(exe, "[EXE]")
        .replace(&settings.display().to_string(), "[SETTINGS]");
    assert_eq!(
        shown,
        r#"--- [SETTINGS]
+++ [SETTINGS]
@@ -4,4 +4,146 @@
   "hooks": {
-    "Stop": [{"matcher": "", "hooks": [{"type": "…", "command": "…"}]}],
-    "Notification": []
+    "Stop": [{"matcher": "", "hooks": [{"type": "…", "command": "…"}]},{"matcher":"","hooks":[{"type":"…","command":"…"}]}],
+    "Notification": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "SessionStart": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "UserPromptSubmit": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "PreToolUse": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "PermissionRequest": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "PreCompact": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "SubagentStop": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "StopFailure": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "SessionEnd": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "PostToolUseFailure": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "PermissionDenied": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "SubagentStart": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ],
+    "PostCompact": [
+      {
+        "matcher": "",
+        "hooks": [
+          {
+            "type": "command",
+            "command": "[EXE] hook"
+          }
+        ]
+      }
+    ]
   }
# add hooks.SessionStart: [EXE] hook
# add hooks.UserPromptSubmit: [EXE] hook
# add hooks.PreToolUse: [EXE] hook
# add hooks.PermissionRequest: [EXE] hook
# add hooks.Notification: [EXE] hook
# add hooks.PreCompact: [EXE] hook
# add hooks.SubagentStop: [EXE] hook
# add hooks.Stop: [EXE] hook
# add hooks.StopFailure: [EXE] hook
# add hooks.SessionEnd: [EXE] hook
# add hooks.PostToolUseFailure: [EXE] hook
# add hooks.PermissionDenied: [EXE] hook
# add hooks.SubagentStart: [EXE] hook
# add hooks.PostCompact: [EXE] hook
dry run: [SETTINGS] not written
"#
    );
    assert!(!text(&out.stdout).contains("hunter2"));
    assert_eq!(
        std::fs::read_to_string(&settings).expect("read"),
        USER_SETTINGS
    );
    assert!(backups(&claude).is_empty());

    // No terminal to ask on and no --yes: refused, nothing written.
    let out = hook("install", &settings).status(1).run();
    assert!(
        text(&out.stderr)
            .ends_with("not written: no terminal to ask on; pass --yes to write without asking\n"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&settings).expect("read"),
        USER_SETTINGS
    );

    // Through CLAUDE_CONFIG_DIR (the test's default), with --yes.
    Test::new()
        .env("CLAUDE_CONFIG_DIR", &claude)
        .args(["hook", "install", "--yes"])
        .stdout_contains("undo with `familiar hook uninstall`")
        .run();
    let installed = std::fs::read_to_string(&settings).expect("read");
    assert!(installed.contains("\"cleanupPeriodDays\": 12345678901234567890123,"));
    let value: serde_json::Value = serde_json::from_str(&installed).expect("json");
    assert_eq!(
        value["hooks"]["Notification"][0]["hooks"][0]["command"],
        format!("{exe} hook")
    );
    let saved = backups(&claude);
    assert_eq!(saved.len(), 1);
    assert_eq!(
        std::fs::read_to_string(&saved[0]).expect("backup"),
        USER_SETTINGS
    );

    // Again: nothing to do, nothing written.
    hook("install", &settings)
        .arg("--yes")
        .stdout_contains("nothing to change")
        .run();
    assert_eq!(backups(&claude).len(), 1);

    // Uninstall: the exact bytes, the empty `Notification` list included.
    let out = hook("uninstall", &settings)
        .arg("-y")
        .stdout_contains("# remove hooks.SessionStart: ")
        .run();
    assert!(
        !text(&out.stdout).contains("undo with"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(&settings).expect("read"),
        USER_SETTINGS
    );
    assert_eq!(backups(&claude).len(), 2);
}

#[test]
fn uninstall_removes_the_file_install_created_and_backs_up_nothing() {
    let (_dir, claude) = claude_dir(None);
    let settings = claude.join("settings.json");
    hook("install", &settings)
        .args(["--yes", "--statusline"])
        .run();
    let created = std::fs::read_to_string(&settings).expect("created");
    assert!(created.contains("statusline\""), "{created}");
    assert!(
        backups(&claude).is_empty(),
        "no backup of a file that never existed"
    );
    hook("uninstall", &settings)
        .arg("--yes")
        .stdout_contains("# remove statusLine: ")
        .stdout_contains(format!("removed {}\n", settings.display()))
        .run();
    assert!(!settings.exists());
    assert!(backups(&claude).is_empty());
}

#[test]
fn a_symlinked_settings_file_is_written_through_to_its_target() {
    let (_dir, claude) = claude_dir(None);
    let target = claude.join("dotfiles-settings.json");
    std::fs::write(&target, "{}\n").expect("target");
    let link = claude.join("settings.json");
    std::os::unix::fs::symlink("dotfiles-settings.json", &link).expect("symlink");
    hook("install", &link).arg("--yes").run();
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink(),
        "still a link"
    );
    assert!(
        std::fs::read_to_string(&target)
            .expect("target")
            .contains(" hook\"")
    );
    hook("uninstall", &link).arg("--yes").run();
    assert_eq!(std::fs::read_to_string(&target).expect("target"), "{}\n");
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_read_only_settings_file_is_refused_with_the_reason() {
    let (_dir, claude) = claude_dir(Some("{}\n"));
    let settings = claude.join("settings.json");
    std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let out = hook("install", &settings).arg("--yes").status(1).run();
    assert!(
        text(&out.stderr).ends_with(&format!(
            "familiar: {} is read-only (mode 444); not written. Make it writable (chmod u+w) or \
             edit it by hand\n",
            settings.display()
        )),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), "{}\n");
    assert!(backups(&claude).is_empty());
}

#[test]
fn backups_are_kept_in_a_bounded_number() {
    let original = "{\n  \"model\": \"opus\"\n}\n";
    let (_dir, claude) = claude_dir(Some(original));
    let settings = claude.join("settings.json");
    for _ in 0..4 {
        hook("install", &settings).arg("--yes").run();
        hook("uninstall", &settings).arg("--yes").run();
    }
    assert_eq!(backups(&claude).len(), 5);
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), original);
}

#[test]
fn an_unparsable_settings_file_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let settings = dir.path().join("settings.json");
    let broken = "{\n  \"model\": \"opus\",\n}\n";
    std::fs::write(&settings, broken).expect("settings");
    let out = hook("install", &settings).status(1).stdout("").run();
    assert_eq!(
        text(&out.stderr),
        format!(
            "familiar: {}: settings.json does not parse (line 2, column 18: Trailing commas are \
             not allowed); fix it first, it was left as it is\n",
            settings.display()
        )
    );
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), broken);
}

/// Run `familiar ARGS` on a pseudo-terminal (util-linux `script`), typing `answer`.
fn on_a_terminal(args: &str, answer: &str) -> String {
    use std::io::Write as _;
    let command = format!("{} {args}", env!("CARGO_BIN_EXE_familiar"));
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(answer.as_bytes())
        .expect("answer typed");
    let out = child.wait_with_output().expect("script ends");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn install_asks_on_a_terminal_and_writes_only_on_yes() {
    let (_dir, claude) = claude_dir(Some("{}\n"));
    let settings = claude.join("settings.json");
    let args = format!("hook install --settings '{}'", settings.display());
    let shown = on_a_terminal(&args, "n\n");
    assert!(shown.contains("? [y/N] "), "{shown}");
    assert!(shown.contains("is as it was"), "{shown}");
    assert_eq!(std::fs::read_to_string(&settings).expect("read"), "{}\n");
    let shown = on_a_terminal(&args, "y\n");
    assert!(
        shown.contains("undo with `familiar hook uninstall`"),
        "{shown}"
    );
    assert!(
        std::fs::read_to_string(&settings)
            .expect("read")
            .contains(" hook\"")
    );
}

/// Issue 28: `hook install` wrote over a change another program made to `settings.json`
/// while the user read the diff at the y/N prompt. It reads the file again after the answer
/// and refuses when it changed, leaving that change alone.
#[test]
fn install_refuses_when_the_file_changed_at_its_prompt() {
    use std::io::{Read as _, Write as _};
    let (_dir, claude) = claude_dir(Some("{}\n"));
    let settings = claude.join("settings.json");
    let command = format!(
        "{} hook install --settings '{}'",
        env!("CARGO_BIN_EXE_familiar"),
        settings.display()
    );
    let mut child = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("script (util-linux) runs");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut shown = Vec::new();
    let mut byte = [0u8; 1];
    // Up to the prompt: the diff was read against `{}`.
    while !text(&shown).contains("? [y/N] ") {
        match stdout.read(&mut byte) {
            Ok(1) => shown.push(byte[0]),
            _ => panic!("no prompt: {}", text(&shown)),
        }
    }
    std::fs::write(&settings, "{\"model\": \"opus\"}\n").expect("another program writes");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"y\n")
        .expect("answer typed");
    let mut rest = String::new();
    let _ = stdout.read_to_string(&mut rest);
    let status = child.wait().expect("script ends");
    assert!(!status.success() || rest.contains("changed"), "{rest}");
    assert!(
        rest.contains("changed while the change was shown; not written"),
        "{rest}"
    );
    assert_eq!(
        std::fs::read_to_string(&settings).expect("read"),
        "{\"model\": \"opus\"}\n",
        "the other program's change stays"
    );
    assert!(backups(&claude).is_empty(), "{:?}", backups(&claude));
}
