//! The settings.json edits: only the bytes that must change do, install then uninstall gives
//! back the user's exact file (property-tested over arbitrary layouts), a file Familiar
//! created is removed again, and odd files are refused.

use std::path::Path;

/// Install then uninstall (with no backup) is the identity on arbitrary layouts.
#[path = "settings/identity.rs"]
mod identity;

use familiar_hook::{
    Plan, SettingsError, StatusLineAt, hook_command, install, installed, status_line_command,
    uninstall,
};

const COMMAND: &str = "/usr/local/bin/familiar hook";
const STATUS: &str = "/usr/local/bin/familiar statusline";

fn hooks() -> Plan {
    Plan {
        hooks: Some(COMMAND.to_owned()),
        status_line: None,
        ..Plan::default()
    }
}

fn everything() -> Plan {
    Plan {
        hooks: Some(COMMAND.to_owned()),
        status_line: Some(STATUS.to_owned()),
        ..Plan::default()
    }
}

const USERS_FILE: &str = r#"{
  // Claude Code settings
  "model": "opus",
  "env": { "SECRET_TOKEN": "hunter2" },
  "cleanupPeriodDays": 12345678901234567890123,
  "limit": 1e3,
  "permissions": {
    "allow": ["Bash(ls:*)"]
  },
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [{ "type": "command", "command": "notify-send done" }]
      }
    ]
  }
}
"#;

#[test]
fn install_keeps_formatting_comments_and_numbers_and_changes_only_the_lines_it_must() {
    let edit = install(Some(USERS_FILE), &hooks()).expect("installs");
    assert_eq!(
        edit.changes,
        vec![
            "add hooks.SessionStart: /usr/local/bin/familiar hook",
            "add hooks.UserPromptSubmit: /usr/local/bin/familiar hook",
            "add hooks.PreToolUse: /usr/local/bin/familiar hook",
            "add hooks.PermissionRequest: /usr/local/bin/familiar hook",
            "add hooks.Notification: /usr/local/bin/familiar hook",
            "add hooks.PreCompact: /usr/local/bin/familiar hook",
            "add hooks.SubagentStop: /usr/local/bin/familiar hook",
            "add hooks.Stop: /usr/local/bin/familiar hook",
            "add hooks.StopFailure: /usr/local/bin/familiar hook",
            "add hooks.SessionEnd: /usr/local/bin/familiar hook",
            "add hooks.PostToolUseFailure: /usr/local/bin/familiar hook",
            "add hooks.PermissionDenied: /usr/local/bin/familiar hook",
            "add hooks.SubagentStart: /usr/local/bin/familiar hook",
            "add hooks.PostCompact: /usr/local/bin/familiar hook",
        ]
    );
    let after = edit.after.expect("a file");
    assert_eq!(
        after,
        r#"{
  // Claude Code settings
  "model": "opus",
  "env": { "SECRET_TOKEN": "hunter2" },
  "cleanupPeriodDays": 12345678901234567890123,
  "limit": 1e3,
  "permissions": {
    "allow": ["Bash(ls:*)"]
  },
  "hooks": {
    "Stop": [
      {
        "matcher": "",
        "hooks": [{ "type": "command", "command": "notify-send done" }]
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
    "UserPromptSubmit": [
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
    "PreToolUse": [
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
    "PermissionRequest": [
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
    ],
    "PreCompact": [
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
    "SubagentStop": [
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
    "StopFailure": [
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
    "SessionEnd": [
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
    "PostToolUseFailure": [
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
    "PermissionDenied": [
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
    "SubagentStart": [
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
    "PostCompact": [
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
    // Every line of the original is still there, in order.
    let mut lines = after.lines();
    for line in USERS_FILE.lines() {
        assert!(lines.any(|l| l == line), "line kept: {line}");
    }

    let twice = install(Some(&after), &hooks()).expect("installs");
    assert!(!twice.changed());

    // Without any backup, the entries are spliced out: the exact original comes back.
    let undone = uninstall(&after, &[]).expect("uninstalls");
    assert_eq!(undone.changes.len(), familiar_hook::settings::EVENTS.len());
    assert_eq!(undone.after.as_deref(), Some(USERS_FILE));
}

#[test]
fn uninstall_keeps_a_pre_existing_empty_notification_list() {
    let before = "{\n  \"hooks\": {\n    \"Notification\": []\n  }\n}\n";
    let after = install(Some(before), &hooks())
        .expect("installs")
        .after
        .expect("a file");
    assert!(after.contains("\"Notification\": [\n      {"), "{after}");
    // With the backup of the original, its exact bytes come back.
    let undone = uninstall(&after, &[before]).expect("uninstalls");
    assert_eq!(undone.after.as_deref(), Some(before));
    // A backup that is not what install started from is not used.
    let other = "{\n  \"hooks\": {}\n}\n";
    let spliced = uninstall(&after, &[other]).expect("uninstalls");
    assert_eq!(spliced.after.as_deref(), Some("{}\n"));
}

#[test]
fn uninstall_keeps_a_pre_existing_empty_hooks_object_and_empty_file() {
    for before in ["{\n  \"hooks\": {}\n}\n", "{}", "{}\n", "", "{\n}\n"] {
        let after = install(Some(before), &everything())
            .expect("installs")
            .after
            .expect("a file");
        let undone = uninstall(&after, &["{\"unrelated\": 1}", before]).expect("uninstalls");
        assert_eq!(undone.after.as_deref(), Some(before), "from {before:?}");
    }
}

#[test]
fn uninstall_removes_the_file_install_created() {
    let edit = install(None, &everything()).expect("installs");
    assert_eq!(edit.before, None);
    let created = edit.after.expect("a file");
    assert!(created.starts_with("{\n  \"hooks\": {\n    \"SessionStart\": [\n"));
    let undone = uninstall(&created, &[]).expect("uninstalls");
    assert!(undone.changed());
    assert_eq!(undone.after, None, "no file, as before install");
    // Once the user added something, the file stays, without Familiar's entries.
    let edited = created.replacen('{', "{\n  \"model\": \"opus\",", 1);
    let undone = uninstall(&edited, &[]).expect("uninstalls");
    assert_eq!(
        undone.after.as_deref(),
        Some("{\n  \"model\": \"opus\"\n}\n")
    );
}

#[test]
fn the_status_line_is_installed_and_removed_like_the_hooks() {
    let before = "{\n    \"model\": \"opus\"\n}";
    let plan = Plan {
        hooks: None,
        status_line: Some(STATUS.to_owned()),
        ..Plan::default()
    };
    let edit = install(Some(before), &plan).expect("installs");
    assert_eq!(
        edit.changes,
        vec!["add statusLine: /usr/local/bin/familiar statusline"]
    );
    let after = edit.after.expect("a file");
    assert_eq!(
        after,
        "{\n    \"model\": \"opus\",\n    \"statusLine\": {\n        \"type\": \"command\",\n        \"command\": \"/usr/local/bin/familiar statusline\"\n    }\n}"
    );
    let found = installed(&after).expect("parses");
    assert_eq!(found.status_line.as_deref(), Some(STATUS));
    assert!(found.hooks.is_empty());
    assert_eq!(
        uninstall(&after, &[]).expect("uninstalls").after.as_deref(),
        Some(before)
    );

    // A status line the user set is never replaced.
    let theirs = r#"{"statusLine": {"type": "command", "command": "~/bin/mine"}}"#;
    assert_eq!(
        install(Some(theirs), &plan),
        Err(SettingsError::StatusLineTaken {
            key: "statusLine",
            existing: "~/bin/mine".to_owned()
        })
    );
    assert!(!uninstall(theirs, &[]).expect("nothing of ours").changed());
}

#[test]
fn installed_reports_what_is_there() {
    let after = install(Some(USERS_FILE), &everything())
        .expect("installs")
        .after
        .expect("a file");
    let found = installed(&after).expect("parses");
    assert!(found.all_hooks());
    assert_eq!(found.plan(), everything());
    let found = installed(USERS_FILE).expect("parses");
    assert!(found.is_empty());
    assert!(!found.all_hooks());
}

#[test]
fn unparsable_or_odd_settings_are_refused() {
    assert_eq!(
        install(Some("{\n  \"model\": \"opus\",\n}\n"), &hooks()),
        Err(SettingsError::Parse {
            line: 2,
            column: 18,
            message: "Trailing commas are not allowed".to_owned()
        })
    );
    assert_eq!(
        install(Some("[]"), &hooks()),
        Err(SettingsError::NotObject("the top level".to_owned()))
    );
    assert_eq!(
        install(Some(r#"{"hooks": {"Stop": {}}}"#), &hooks()),
        Err(SettingsError::NotArray("Stop".to_owned()))
    );
    assert_eq!(
        install(Some(r#"{"hooks": []}"#), &hooks()),
        Err(SettingsError::NotObject("hooks".to_owned()))
    );
    assert!(matches!(
        uninstall("{", &[]),
        Err(SettingsError::Parse { .. })
    ));
}

#[test]
fn commands_are_quoted_for_the_shell_when_needed() {
    assert_eq!(
        hook_command(Path::new("/home/u/.cargo/bin/familiar")),
        "/home/u/.cargo/bin/familiar hook"
    );
    assert_eq!(
        hook_command(Path::new("/home/u/my tools/familiar")),
        "'/home/u/my tools/familiar' hook"
    );
    assert_eq!(
        status_line_command(Path::new("/bin/familiar")),
        "/bin/familiar statusline"
    );
    // A quoted command is still recognized as ours when uninstalling.
    let plan = Plan {
        hooks: Some(hook_command(Path::new("/opt/it's/familiar"))),
        status_line: Some(status_line_command(Path::new("/opt/it's/familiar"))),
        ..Plan::default()
    };
    let after = install(None, &plan)
        .expect("installs")
        .after
        .expect("a file");
    // Every hook event, and the status line.
    assert_eq!(
        uninstall(&after, &[]).expect("uninstalls").changes.len(),
        familiar_hook::settings::EVENTS.len() + 1
    );
}

/// Issue 28: uninstall removed a user's own hook that merely ended in `familiar hook`. Only
/// the commands install writes (one path, plain or single-quoted, then the subcommand) are
/// Familiar's.
#[test]
fn uninstall_leaves_a_users_hook_that_only_ends_like_ours() {
    let users = r#"{
  "hooks": {
    "Stop": [
      { "matcher": "", "hooks": [{ "type": "command", "command": "notify-send done; ~/bin/familiar hook" }] },
      { "matcher": "", "hooks": [{ "type": "command", "command": "echo 'x' familiar hook" }] },
      { "matcher": "", "hooks": [{ "type": "command", "command": "'/a b/familiar' hook" }] }
    ]
  }
}
"#;
    let undone = uninstall(users, &[]).expect("uninstalls");
    let after = undone.after.expect("a file");
    assert!(
        after.contains("notify-send done; ~/bin/familiar hook"),
        "{after}"
    );
    assert!(after.contains("echo 'x' familiar hook"), "{after}");
    // The one install would have written (a quoted path) goes.
    assert!(!after.contains("'/a b/familiar' hook"), "{after}");
    assert_eq!(undone.changes.len(), 1, "{:?}", undone.changes);
}

/// Issue 28: a file with a byte-order mark was refused as a syntax error, and in a CRLF file
/// the inserted lines ended in LF. Both are kept, and uninstall gives the bytes back.
#[test]
fn a_byte_order_mark_and_crlf_line_ends_are_kept() {
    let crlf = USERS_FILE.replace('\n', "\r\n");
    for original in [
        format!("\u{feff}{USERS_FILE}"),
        crlf.clone(),
        format!("\u{feff}{crlf}"),
    ] {
        let after = install(Some(&original), &everything())
            .expect("installs")
            .after
            .expect("a file");
        assert_eq!(
            after.starts_with('\u{feff}'),
            original.starts_with('\u{feff}'),
            "{after:?}"
        );
        if original.contains("\r\n") {
            assert!(
                !after.replace("\r\n", "").contains('\n'),
                "a line ends in LF alone: {after:?}"
            );
        }
        assert!(installed(&after).expect("reads").all_hooks());
        let undone = uninstall(&after, &[]).expect("uninstalls");
        assert_eq!(undone.after.as_deref(), Some(original.as_str()));
    }
}
