//! Qwen Code's status line, `ui.statusLine` (`StatusLineAt::Ui`): added into a `ui` object
//! that is there (beside the user's keys) or not, with the `refreshInterval` Qwen Code needs,
//! never over one the user set (a command, a preset, `null`), and taken out again to the very
//! bytes, comments, byte-order mark and CRLF kept.

use familiar_hook::settings::QWEN_REFRESH_SECONDS;
use familiar_hook::{Plan, SettingsError, StatusLineAt, install, installed, uninstall};

const STATUS: &str = "/usr/local/bin/familiar statusline";

fn qwen() -> Plan {
    Plan {
        hooks: None,
        status_line: Some(STATUS.to_owned()),
        status_line_at: StatusLineAt::Ui,
    }
}

/// A user's Qwen Code settings, with comments, and no `ui`.
const WITHOUT_UI: &str = r#"{
  // mine
  "security": {"auth": {"selectedType": "openai"}},
  "$version": 4
}
"#;

#[test]
fn without_a_ui_object_one_is_added_and_taken_out_again() {
    let edit = install(Some(WITHOUT_UI), &qwen()).expect("installs");
    assert_eq!(edit.changes, vec![format!("add ui.statusLine: {STATUS}")]);
    let after = edit.after.expect("a file");
    assert_eq!(
        after,
        r#"{
  // mine
  "security": {"auth": {"selectedType": "openai"}},
  "$version": 4,
  "ui": {
    "statusLine": {
      "type": "command",
      "command": "/usr/local/bin/familiar statusline",
      "refreshInterval": 2
    }
  }
}
"#
    );
    assert_eq!(QWEN_REFRESH_SECONDS, 2);
    let found = installed(&after).expect("parses");
    assert_eq!(found.status_line.as_deref(), Some(STATUS));
    assert_eq!(found.status_line_at, StatusLineAt::Ui);
    assert_eq!(found.plan(), qwen());
    // Twice is once.
    assert!(!install(Some(&after), &qwen()).expect("installs").changed());
    let undone = uninstall(&after, &[]).expect("uninstalls");
    assert_eq!(
        undone.changes,
        vec![format!("remove ui.statusLine: {STATUS}")]
    );
    assert_eq!(undone.after.as_deref(), Some(WITHOUT_UI));
}

#[test]
fn into_a_ui_object_with_other_keys_it_goes_last_and_they_stay() {
    let before = "{\n    \"ui\": {\n        \"theme\": \"Qwen Dark\", // dark\n        \"hideTips\": true\n    },\n    \"model\": {\"name\": \"qwen3-coder-plus\"}\n}";
    let after = install(Some(before), &qwen())
        .expect("installs")
        .after
        .expect("a file");
    assert_eq!(
        after,
        "{\n    \"ui\": {\n        \"theme\": \"Qwen Dark\", // dark\n        \"hideTips\": true,\n        \"statusLine\": {\n            \"type\": \"command\",\n            \"command\": \"/usr/local/bin/familiar statusline\",\n            \"refreshInterval\": 2\n        }\n    },\n    \"model\": {\"name\": \"qwen3-coder-plus\"}\n}"
    );
    // Without a backup, spliced out: the `ui` object keeps the user's keys.
    let undone = uninstall(&after, &[]).expect("uninstalls");
    assert_eq!(undone.after.as_deref(), Some(before));
    // Once the user changed another key, only Familiar's entry goes.
    let edited = after.replace("Qwen Dark", "Qwen Light");
    let undone = uninstall(&edited, &[before]).expect("uninstalls");
    assert_eq!(
        undone.after.as_deref(),
        Some(before.replace("Qwen Dark", "Qwen Light").as_str())
    );
}

#[test]
fn an_empty_ui_object_comes_back_from_the_backup() {
    for before in [
        "{\"ui\": {}}",
        "{\n  \"ui\": {\n  }\n}\n",
        "{\"ui\": {}, \"a\": 1}",
    ] {
        let after = install(Some(before), &qwen())
            .expect("installs")
            .after
            .expect("a file");
        assert_eq!(
            installed(&after).expect("parses").status_line_at,
            StatusLineAt::Ui
        );
        let undone = uninstall(&after, &["{}", before]).expect("uninstalls");
        assert_eq!(undone.after.as_deref(), Some(before), "from {before:?}");
    }
    // Without the backup, the `ui` Familiar's entry leaves empty goes with it.
    let after = install(Some("{\"ui\": {}, \"a\": 1}"), &qwen())
        .expect("installs")
        .after
        .expect("a file");
    let undone = uninstall(&after, &[]).expect("uninstalls");
    assert_eq!(undone.after.as_deref(), Some("{\"a\": 1}"));
}

#[test]
fn no_file_is_created_and_removed_again() {
    let created = install(None, &qwen())
        .expect("installs")
        .after
        .expect("a file");
    assert_eq!(
        created,
        "{\n  \"ui\": {\n    \"statusLine\": {\n      \"type\": \"command\",\n      \"command\": \"/usr/local/bin/familiar statusline\",\n      \"refreshInterval\": 2\n    }\n  }\n}\n"
    );
    assert_eq!(uninstall(&created, &[]).expect("uninstalls").after, None);
}

#[test]
fn a_status_line_the_user_set_is_never_replaced() {
    let cases = [
        (
            r#"{"ui": {"statusLine": {"type": "command", "command": "~/bin/mine"}}}"#,
            "~/bin/mine",
        ),
        (
            r#"{"ui": {"statusLine": {"type": "preset", "items": ["model"]}}}"#,
            "a status line of type preset",
        ),
        (
            r#"{"ui": {"statusLine": null}}"#,
            "null: the status line turned off",
        ),
        (r#"{"ui": {"statusLine": 3}}"#, "not a command"),
    ];
    for (theirs, existing) in cases {
        assert_eq!(
            install(Some(theirs), &qwen()),
            Err(SettingsError::StatusLineTaken {
                key: "ui.statusLine",
                existing: existing.to_owned()
            }),
            "{theirs}"
        );
        assert!(installed(theirs).expect("parses").is_empty(), "{theirs}");
        assert!(!uninstall(theirs, &[]).expect("uninstalls").changed());
    }
    let taken = install(Some(cases[0].0), &qwen()).expect_err("refused");
    assert_eq!(
        taken.to_string(),
        "settings.json already has a ui.statusLine that is not Familiar's (~/bin/mine); \
         remove it first if you want Familiar's, it was left as it is"
    );
    assert_eq!(
        install(Some(r#"{"ui": "dark"}"#), &qwen()),
        Err(SettingsError::NotObject("ui".to_owned()))
    );
    // Claude Code's top-level statusLine (its place, not Qwen Code's) is left alone.
    let claude = r#"{"statusLine": {"type": "command", "command": "~/bin/mine"}}"#;
    let after = install(Some(claude), &qwen())
        .expect("installs")
        .after
        .expect("a file");
    assert!(after.starts_with(claude.trim_end_matches('}')), "{after}");
    assert_eq!(
        uninstall(&after, &[]).expect("uninstalls").after.as_deref(),
        Some(claude)
    );
}

#[test]
fn a_byte_order_mark_and_crlf_line_ends_are_kept() {
    let crlf = WITHOUT_UI.replace('\n', "\r\n");
    for original in [
        format!("\u{feff}{WITHOUT_UI}"),
        format!("\u{feff}{crlf}"),
        crlf,
    ] {
        let after = install(Some(&original), &qwen())
            .expect("installs")
            .after
            .expect("a file");
        assert!(after.contains("\"refreshInterval\": 2"), "{after:?}");
        assert_eq!(
            after.starts_with('\u{feff}'),
            original.starts_with('\u{feff}')
        );
        if original.contains("\r\n") {
            assert!(!after.replace("\r\n", "").contains('\n'), "{after:?}");
        }
        assert_eq!(
            installed(&after).expect("reads").status_line_at,
            StatusLineAt::Ui
        );
        let undone = uninstall(&after, &[]).expect("uninstalls");
        assert_eq!(undone.after.as_deref(), Some(original.as_str()));
    }
}
