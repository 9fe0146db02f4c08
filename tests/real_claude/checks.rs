//! The facts `tests/real_claude.rs` checks on what a CLI generation wrote in its `-p` runs:
//! the events of each transcript (`familiar events`), of its stream-json output, and what
//! `familiar stats` says of them. Part of `tests/real_claude.rs`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::common::Generation;
use super::{CURRENT, events};

fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

/// The scripted facts, on `familiar events` of each file the CLI wrote.
pub(super) fn check_facts(generation: Generation, files: &BTreeMap<&str, Vec<Value>>) {
    let current = generation == CURRENT;
    let main = &files["main"];
    let tools: Vec<(&str, &str, &str)> = main
        .iter()
        .filter(|e| e["tool"].is_string() && e["kind"] != "error" && e["kind"] != "subagent_end")
        .map(|e| {
            (
                e["kind"].as_str().unwrap_or(""),
                e["tool"].as_str().unwrap_or(""),
                e["target"].as_str().unwrap_or(""),
            )
        })
        .collect();
    let names: Vec<(&str, &str)> = tools.iter().map(|(k, t, _)| (*k, *t)).collect();
    assert_eq!(
        names,
        [
            ("reading", "Read"),
            ("bash", "Bash"),
            ("writing", "Edit"),
            ("writing", "Write"),
            ("thinking", "TaskCreate"),
            ("thinking", "TaskUpdate"),
            ("subagent_start", "Agent"),
        ]
    );
    assert_eq!(
        tools[4].2, "Ship the fix",
        "TaskCreate's target is its subject"
    );
    let errors: Vec<(&str, &str)> = main
        .iter()
        .filter(|e| e["kind"] == "error")
        .map(|e| {
            (
                e["error"].as_str().unwrap_or(""),
                e["tool"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(errors, [("tool", "Bash")]);
    assert_eq!(
        of_kind(main, "thinking")[0]["text"],
        "I should read the file first."
    );
    let end = of_kind(main, "subagent_end");
    assert_eq!(end.len(), 1);
    assert_eq!(end[0]["context_limit"], 1_000_000);
    assert_eq!(end[0]["description"], "Look around");
    if current {
        // The window is known from the first record that names the model (a `model`
        // attachment right after the prompt, every `api-request`): 1M for Opus 5.
        let prompt = of_kind(main, "prompt")[0]["line"].as_u64().unwrap_or(0);
        assert!(
            main.iter()
                .filter(|e| e["line"].as_u64().unwrap_or(0) > prompt)
                .all(|e| e["context_limit"] == 1_000_000),
            "{main:#?}"
        );
        // A background agent: it ends at its `<task-notification>`, after the turn that
        // launched it, and the turn the CLI makes of that notification ends waiting for
        // the user again (no second `success`).
        let at = |kind: &str| main.iter().position(|e| e["kind"] == kind).unwrap_or(0);
        assert!(at("subagent_end") > at("success"), "{main:#?}");
        let after_end = &main[at("subagent_end")..];
        let status = after_end
            .iter()
            .find(|e| e["kind"] == "status")
            .expect("a status event after the background agent's turn");
        assert_eq!(status["status"], "waiting_for_input");
        assert!(
            after_end
                .iter()
                .take_while(|e| e["kind"] != "prompt")
                .all(|e| e["kind"] != "success"),
            "{main:#?}"
        );
        // In auto/bypass mode nobody is asked: no tool ever waits for approval.
        assert!(
            main.iter().all(|e| e["status"] != "waiting_for_approval"),
            "{main:#?}"
        );
    } else {
        // The window: 200k until the Agent result names the `[1m]` model, then 1M.
        assert_eq!(of_kind(main, "reading")[0]["context_limit"], 200_000);
    }
    // The compaction, and the turn it ends.
    let boundary = of_kind(main, "compact_boundary");
    assert_eq!(boundary.len(), 1);
    assert_eq!(boundary[0]["trigger"], "manual");
    // The context at the compaction: the last request's. 2.1.3xx's last request before it
    // is the background agent's notification turn (the mock answers it small).
    let pre_tokens = boundary[0]["pre_tokens"].as_u64().unwrap_or(0);
    assert!(
        pre_tokens > if current { 0 } else { 250_000 },
        "{pre_tokens}"
    );
    let compact_prompt = main
        .iter()
        .position(|e| e["command"] == "/compact")
        .expect("the /compact prompt");
    // Its `<local-command-stdout>` ends the turn.
    assert_eq!(main[compact_prompt + 1]["kind"], "status");
    assert_eq!(main[compact_prompt + 1]["status"], "waiting_for_input");
    // `--resume` writes "No response requested." from `<synthetic>`: not a text event.
    assert!(
        !main
            .iter()
            .any(|e| e["kind"] == "text" && e["text"] == "No response requested."),
        "synthetic resume text became a text event"
    );
    let texts: Vec<&Value> = of_kind(main, "text").iter().map(|e| &e["text"]).collect();
    if current {
        assert_eq!(
            texts,
            [
                "Reading a.txt.",
                "All done.",
                "The background agent is done.",
                "Back again."
            ]
        );
    } else {
        assert_eq!(texts, ["Reading a.txt.", "All done.", "Back again."]);
    }
    assert_eq!(of_kind(main, "success").len(), 2);
    assert_eq!(main.last().expect("events")["status"], "waiting_for_input");

    // A subagent is one companion: one `session_start`, every event its own, whatever
    // record lacks `isSidechain` (2.1.3xx's `api-request` records do).
    let sub = &files["main-subagent"];
    assert!(
        sub.iter()
            .all(|e| e["agent"].is_string() && e["sidechain"] == true)
    );
    assert_eq!(of_kind(sub, "session_start").len(), 1, "{sub:#?}");
    assert_eq!(of_kind(sub, "reading").len(), 1);

    for (name, code) in [("ratelimit", "rate_limit"), ("overload", "server_error")] {
        let errors = of_kind(&files[name], "error");
        // 2.1.3xx writes a notice per retry (CLAUDE_CODE_MAX_RETRIES=2) before the failure.
        let retries = if current { 2 } else { 0 };
        assert_eq!(errors.len(), retries + 1, "{name}: {errors:?}");
        for (attempt, retry) in errors[..retries].iter().enumerate() {
            assert_eq!(retry["error_code"], code, "{name}: {retry}");
            assert_eq!(
                retry["retry_attempt"],
                attempt as u64 + 1,
                "{name}: {retry}"
            );
            assert_eq!(
                retry["status"], "working",
                "{name}: the CLI retries: {retry}"
            );
            assert!(
                !retry["text"].as_str().unwrap_or("{").contains('{'),
                "{name}: raw JSON as the retry's text: {retry}"
            );
        }
        let last = errors[retries];
        assert_eq!(last["error"], "api");
        assert_eq!(last["error_code"], code);
        assert_eq!(last["status"], "waiting_for_input");
        assert!(of_kind(&files[name], "success").is_empty(), "{name}");
    }

    let todo = &files["todo"];
    let plan = of_kind(todo, "thinking");
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0]["tool"], "TodoWrite");

    let denied: Vec<&str> = of_kind(&files["denied"], "error")
        .iter()
        .map(|e| e["error"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(denied, ["denied", "denied"]);
}

/// The stream-json facts, on `familiar events` of what the CLI printed.
pub(super) fn check_stream_facts(streams: &Path) {
    let stream = |name: &str| events(&streams.join(format!("{name}.stream.jsonl")));
    // The `init` record names the `[1m]` model: the window is 1M from the start.
    let main = stream("main");
    assert!(main.iter().all(|e| e["context_limit"] == 1_000_000));
    assert!(
        of_kind(&main, "prompt").is_empty(),
        "subagent messages are not prompts"
    );
    for (name, code) in [("ratelimit", "rate_limit"), ("overload", "overloaded")] {
        let errors = of_kind(&stream(name), "error")
            .into_iter()
            .map(|e| {
                (
                    e["error_code"].as_str().unwrap_or("").to_owned(),
                    e["retry_attempt"].as_u64(),
                )
            })
            .collect::<Vec<_>>();
        // Retries until they run out (CLAUDE_CODE_MAX_RETRIES=2), then the failure, once.
        assert_eq!(errors.len(), 3, "{name}: {errors:?}");
        assert_eq!(errors[0], (code.to_owned(), Some(1)), "{name}");
        assert_eq!(errors[1], (code.to_owned(), Some(2)), "{name}");
        assert_eq!(errors[2].1, None, "{name}");
    }
}

/// `familiar stats` of what the CLI wrote: nothing unknown to Familiar in any file (a record
/// type the pinned CLI writes and the code does not know fails here first), the CLI's
/// version named, and a session totalled by the CLI's own cost figure where it keeps one.
pub(super) fn check_stats(generation: Generation, files: &BTreeMap<String, PathBuf>) {
    let stats = |paths: &[&PathBuf], json: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_familiar"));
        // Run in the tester's home: nothing kept in its cache folder.
        command.args(["stats", "--no-cache"]);
        if json {
            command.arg("--json");
        }
        let output = command.args(paths).output().expect("familiar stats");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    for (name, path) in files {
        let summary: Value = serde_json::from_str(stats(&[path], true).trim()).expect("stats");
        assert!(summary.get("unknown").is_none(), "{name}: {summary}");
        if std::env::var_os(generation.override_var).is_none() {
            assert_eq!(summary["cli_version"], generation.pinned, "{name}");
        }
    }
    if generation != CURRENT {
        return;
    }
    // The CLI's own total (its last `cost-state`) counts the subagent and the `/compact`
    // request, which no record shows: the session's total is that figure.
    let main = &files["main"];
    let cli_total = fs::read_to_string(main)
        .expect("main transcript")
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|record| record["type"] == "cost-state")
        .filter_map(|record| record["totalCostUSD"].as_f64())
        .next_back()
        .expect("a cost-state record");
    let summary: Value = serde_json::from_str(stats(&[main], true).trim()).expect("stats");
    let cli_cost = summary["cli_cost_usd"].as_f64().expect("cli_cost_usd");
    assert!(
        (cli_cost - cli_total).abs() < 0.000_05,
        "{cli_cost} vs {cli_total}"
    );
    let readable = stats(&[main, &files["main-subagent"]], false);
    let total = readable
        .split("total ")
        .nth(1)
        .and_then(|total| total.lines().find(|line| line.contains("cost (est.)")))
        .expect("a total cost line");
    assert!(
        total.ends_with(&format!("${cli_total:.2}")),
        "{total:?} for the CLI's {cli_total}"
    );
}
