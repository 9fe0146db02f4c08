//! Upgrading from the ten hooks an earlier Familiar installed (Claude Code 2.1.197's) to the
//! fourteen of now: `hook install` adds only the four new ones, and `uninstall` still gives
//! back the user's file byte for byte.

use familiar_hook::settings::EVENTS;
use familiar_hook::{Plan, install, installed, uninstall};

const COMMAND: &str = "/usr/local/bin/familiar hook";
const NEW: [&str; 4] = [
    "PostToolUseFailure",
    "PermissionDenied",
    "SubagentStart",
    "PostCompact",
];

const USERS_FILE: &str = r#"{
  "model": "opus",
  "hooks": {
    "Stop": [{ "matcher": "", "hooks": [{ "type": "command", "command": "notify-send done" }] }]
  }
}
"#;

/// What the earlier install made of `text`: today's, without the four new events' lists (the
/// last members of `hooks`, as install appends them in the order of `EVENTS`).
fn earlier_install(text: &str) -> String {
    let plan = Plan {
        hooks: Some(COMMAND.to_owned()),
        status_line: None,
        ..Plan::default()
    };
    let today = install(Some(text), &plan)
        .expect("installs")
        .after
        .expect("a file");
    let first_new = format!(",\n    \"{}\": [", NEW[0]);
    let cut = today.find(&first_new).expect("the new events come last");
    let end = today.rfind("\n  }\n}").expect("the end of hooks");
    format!("{}{}", &today[..cut], &today[end..])
}

#[test]
fn upgrading_adds_the_four_new_hooks_and_uninstall_still_gives_back_the_users_file() {
    assert_eq!(&EVENTS[10..], &NEW);
    let earlier = earlier_install(USERS_FILE);
    let mut had: Vec<String> = installed(&earlier)
        .expect("parses")
        .hooks
        .into_iter()
        .map(|(event, _)| event)
        .collect();
    had.sort();
    let mut ten = EVENTS[..10].to_vec();
    ten.sort_unstable();
    assert_eq!(had, ten);

    let plan = Plan {
        hooks: Some(COMMAND.to_owned()),
        status_line: None,
        ..Plan::default()
    };
    let upgrade = install(Some(&earlier), &plan).expect("installs");
    assert_eq!(
        upgrade.changes,
        NEW.iter()
            .map(|event| format!("add hooks.{event}: {COMMAND}"))
            .collect::<Vec<_>>()
    );
    let after = upgrade.after.expect("a file");
    assert!(installed(&after).expect("parses").all_hooks());
    // Every line of the earlier file is still there, in order.
    let mut lines = after.lines();
    for line in earlier.lines().filter(|line| !line.trim().is_empty()) {
        let line = line.trim_end_matches(',');
        assert!(
            lines.any(|l| l.trim_end_matches(',') == line),
            "kept: {line}"
        );
    }

    // The backups are the earlier file (newest) and the user's own: the user's comes back.
    let undone = uninstall(&after, &[&earlier, USERS_FILE]).expect("uninstalls");
    assert_eq!(undone.after.as_deref(), Some(USERS_FILE));
    assert_eq!(undone.changes.len(), EVENTS.len());
    // Without backups, all fourteen are spliced out: the user's file again.
    let spliced = uninstall(&after, &[]).expect("uninstalls");
    assert_eq!(spliced.after.as_deref(), Some(USERS_FILE));
}
