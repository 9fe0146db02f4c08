//! Issue 27: one progression. `familiar watch` (headless, the shipped scripts) counts the
//! user's XP in one place: the scripts' `xp` actions go to the profile the Stage owns, which
//! says "Level N!" itself, keeps the total in `progress.json` under the data directory, and
//! picks it up again on the next run (no second counter in `default.rhai`'s store).

mod common;

use std::fs;
use std::path::Path;

use common::watch::{Project, Watch, append, sentinel, with_cwd};
use serde_json::Value;

fn actions(lines: &[String]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|value| value.get("action").is_some())
        .collect()
}

fn xp_of(actions: &[Value]) -> i64 {
    actions
        .iter()
        .filter(|a| a["action"] == "xp")
        .filter_map(|a| a["amount"].as_i64())
        .sum()
}

fn saved_xp(config: &Path) -> i64 {
    let text =
        fs::read_to_string(config.join(".local/share/familiar/progress.json")).unwrap_or_default();
    let json: Value = serde_json::from_str(&text).unwrap_or_default();
    json["data"]["xp"].as_i64().unwrap_or(-1)
}

fn read_record(project: &Path) -> String {
    format!(
        "{{\"type\":\"assistant\",\"cwd\":\"{}\",\"sessionId\":\"00000001-0000-4000-8000-000000000000\",\"timestamp\":\"2026-02-11T10:05:00.000Z\",\"message\":{{\"model\":\"claude-opus-4-6\",\"id\":\"msg_again\",\"role\":\"assistant\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"toolu_again\",\"name\":\"Read\",\"input\":{{\"file_path\":\"/tmp/a.rs\"}}}}],\"usage\":{{\"input_tokens\":3,\"output_tokens\":5}}}}}}\n",
        project.display()
    )
}

#[test]
fn the_level_is_the_users_said_once_and_kept_between_runs() {
    let p = Project::new();
    let session = p.session(1, "");

    let mut first = Watch::start(&p.config, &p.project, &[]);
    first.wait_stderr("listening for Claude Code hooks");
    let demo = fs::read(common::fixture("demo.jsonl")).expect("demo");
    append(&session, &with_cwd(&demo, &p.project));
    append(&session, sentinel("first run done").as_bytes());
    let lines = first.lines_until("first run done");
    let acts = actions(&lines);
    let earned = xp_of(&acts);
    assert!(earned >= 10, "the demo earns {earned} XP, level 2 takes 10");
    let level_ups: Vec<&Value> = acts
        .iter()
        .filter(|a| a["action"] == "say" && a["text"] == "Level 2!")
        .collect();
    assert_eq!(level_ups.len(), 1, "{acts:#?}");
    assert_eq!(
        level_ups[0]["script"], "familiar",
        "said by Familiar itself"
    );
    assert!(
        acts.iter().any(|a| a["action"] == "sound"
            && a["name"] == "level_up"
            && a["script"] == "familiar")
    );
    assert!(first.interrupt().success());
    assert_eq!(saved_xp(&p.config), earned);
    // default.rhai keeps no counter of its own.
    let store = fs::read_to_string(
        p.config
            .join(".local/share/familiar/scripts/default.rhai.json"),
    )
    .unwrap_or_default();
    assert!(!store.contains("\"xp\""), "{store}");

    // The next run starts at the saved total: one more read is one more XP, and no level is
    // said again.
    let mut second = Watch::start(&p.config, &p.project, &[]);
    second.wait_stderr("listening for Claude Code hooks");
    append(&session, read_record(&p.project).as_bytes());
    append(&session, sentinel("second run done").as_bytes());
    let acts = actions(&second.lines_until("second run done"));
    assert_eq!(xp_of(&acts), 1, "{acts:#?}");
    assert!(!acts.iter().any(|a| a["action"] == "say"), "{acts:#?}");
    assert!(second.interrupt().success());
    assert_eq!(saved_xp(&p.config), earned + 1);
}
