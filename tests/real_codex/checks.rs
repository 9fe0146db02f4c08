//! The checks of `real_codex.rs`, apart from the run that produces what they read: the
//! commands (`sessions`, `stats`, `doctor`) on the rollouts, the events `familiar` makes of
//! them, and the records the CLI wrote.

use super::*;

/// `familiar sessions`, `stats` and `doctor` on what the CLI wrote.
pub(super) fn check_commands(home: &Path, project: &Path, files: &BTreeMap<&str, PathBuf>) {
    let familiar = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_familiar"))
            .args(args)
            .env("HOME", home)
            .env("CLAUDE_CONFIG_DIR", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("CODEX_HOME")
            .env_remove("FAMILIAR_CONFIG")
            .env("NO_COLOR", "1")
            .current_dir(project)
            .stdin(Stdio::null())
            .output()
            .expect("run familiar");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    // The project's sessions: the five rollouts, as Codex's, finished.
    let sessions: Vec<Value> =
        serde_json::from_str(&familiar(&["sessions", "--json"])).expect("sessions JSON");
    assert_eq!(sessions.len(), 5, "{sessions:?}");
    for session in &sessions {
        assert_eq!(session["agent_kind"], "codex");
        assert_eq!(session["cwd"], project.to_string_lossy().as_ref());
        assert_eq!(session["status"], "waiting_for_input");
        assert_eq!(session["git_branch"], "main");
    }
    let claude_only: Vec<Value> =
        serde_json::from_str(&familiar(&["sessions", "--json", "--agent", "claude"]))
            .expect("sessions JSON");
    assert!(
        claude_only.iter().all(|s| s["agent_kind"].is_null()),
        "--agent claude: {claude_only:?}"
    );

    let main = files["main"].to_str().expect("UTF-8 path");
    let stats: Value =
        serde_json::from_str(&familiar(&["stats", "--json", main])).expect("stats JSON");
    // One file: one summary object.
    let row = &stats;
    assert_eq!(row["tool_calls"]["exec_command"], 2);
    assert_eq!(row["compactions"], 1);
    assert!(
        row["tokens"]["cache_read"].as_u64().unwrap_or(0) > 0,
        "{row}"
    );
    assert!(row["cost_usd"].as_f64().unwrap_or(0.0) > 0.0, "{row}");

    let doctor = familiar(&["doctor"]);
    assert!(
        doctor.contains("Codex dir") && doctor.contains("5 session(s)"),
        "{doctor}"
    );
}

pub(super) fn events(path: &Path) -> Vec<Value> {
    familiar_events(path)
        .iter()
        .map(|line| serde_json::from_str(line).expect("event JSON"))
        .collect()
}

fn of_kind<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["kind"] == kind).collect()
}

/// The scripted facts, on `familiar events` of each rollout.
pub(super) fn check_events(files: &BTreeMap<&str, Vec<Value>>) {
    let main = &files["main"];
    assert!(main.iter().all(|e| e["agent_kind"] == "codex"));
    let tools: Vec<(&str, &str, &str)> = main
        .iter()
        .filter(|e| e["tool"].is_string() && e["kind"] != "error")
        .map(|e| {
            (
                e["kind"].as_str().unwrap_or(""),
                e["tool"].as_str().unwrap_or(""),
                e["target"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [
            ("reading", "exec_command", "cat a.txt"),
            ("bash", "exec_command", "exit 3"),
            ("tool", "not_a_tool", ""),
            ("writing", "apply_patch", "a.txt"),
            ("writing", "apply_patch", "b.txt"),
        ]
    );
    let errors: Vec<(&str, &str)> = of_kind(main, "error")
        .iter()
        .map(|e| {
            (
                e["error"].as_str().unwrap_or(""),
                e["tool"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(errors, [("tool", "exec_command"), ("tool", "not_a_tool")]);
    assert_eq!(
        of_kind(main, "thinking")[0]["text"],
        "I should read the file first."
    );
    let texts: Vec<&Value> = of_kind(main, "text").iter().map(|e| &e["text"]).collect();
    assert_eq!(
        texts,
        ["Now a command that fails.", "All done.", "Back again."],
        "the compaction summary is no reply"
    );
    let prompts: Vec<&Value> = of_kind(main, "prompt").iter().map(|e| &e["text"]).collect();
    assert_eq!(prompts, ["FAMILIAR-SCRIPT main", "FAMILIAR-SCRIPT after"]);
    let boundary = of_kind(main, "compact_boundary");
    assert_eq!(boundary.len(), 1);
    // The apply_patch request put the context past the limit; the summary request's own
    // usage is not the conversation's.
    assert!(boundary[0]["pre_tokens"].as_u64().unwrap_or(0) > COMPACT_LIMIT);
    assert!(boundary[0]["post_tokens"].as_u64().unwrap_or(0) > 0);
    assert_eq!(of_kind(main, "success").len(), 2);
    let last = main.last().expect("events");
    assert_eq!(last["status"], "waiting_for_input");
    assert!(last["context_limit"].as_u64().unwrap_or(0) > 100_000);

    let ratelimit = &files["ratelimit"];
    let errors = of_kind(ratelimit, "error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["error"], "api");
    assert_eq!(errors[0]["error_code"], "rate_limit");
    assert!(of_kind(ratelimit, "success").is_empty());
}

fn payloads<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records
        .iter()
        .filter(|r| r["type"] == kind)
        .map(|r| &r["payload"])
        .collect()
}

/// The scripted facts, as the CLI wrote them (the shapes the normalizer reads).
pub(super) fn check_records(main: &[Value], ratelimit: &[Value], project: &Path) {
    let meta = payloads(main, "session_meta");
    assert_eq!(meta.len(), 1);
    assert_eq!(meta[0]["cwd"], project.to_string_lossy().as_ref());
    let items = payloads(main, "response_item");
    let calls: Vec<(&str, &str)> = items
        .iter()
        .filter(|p| p["type"] == "function_call" || p["type"] == "custom_tool_call")
        .map(|p| {
            (
                p["name"].as_str().unwrap_or(""),
                p["call_id"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("exec_command", "call_read"),
            ("exec_command", "call_fail"),
            ("not_a_tool", "call_unknown"),
            ("apply_patch", "call_patch"),
        ]
    );
    let unsupported = items
        .iter()
        .find(|p| p["type"] == "function_call_output" && p["call_id"] == "call_unknown")
        .expect("the unsupported call's output");
    assert_eq!(unsupported["output"], "unsupported call: not_a_tool");
    let events = payloads(main, "event_msg");
    let completed: Vec<&Value> = events
        .iter()
        .filter(|p| p["type"] == "item_completed")
        .map(|p| &p["item"])
        .collect();
    let failed = completed
        .iter()
        .find(|item| item["type"] == "CommandExecution" && item["id"] == "call_fail")
        .expect("the failing command");
    assert_eq!(failed["exit_code"], 3);
    let change = completed
        .iter()
        .find(|item| item["type"] == "FileChange")
        .expect("the patch");
    assert_eq!(change["changes"].as_object().map(|c| c.len()), Some(2));
    assert!(
        completed
            .iter()
            .any(|item| item["type"] == "ContextCompaction")
    );
    assert_eq!(payloads(main, "compacted").len(), 1);
    // The summary comes back as an assistant message with no AgentMessage of its own.
    let agent_messages: Vec<&str> = completed
        .iter()
        .filter(|item| item["type"] == "AgentMessage")
        .filter_map(|item| item["content"][0]["text"].as_str())
        .collect();
    assert_eq!(
        agent_messages,
        ["Now a command that fails.", "All done.", "Back again."]
    );
    let complete = payloads(main, "event_msg")
        .into_iter()
        .filter(|p| p["type"] == "task_complete")
        .count();
    assert_eq!(complete, 2, "two turns, each complete");
    let windows: Vec<&Value> = events
        .iter()
        .filter(|p| p["type"] == "token_count")
        .map(|p| &p["info"]["model_context_window"])
        .collect();
    assert!(
        windows
            .iter()
            .all(|w| w.as_u64().is_some_and(|w| w > 100_000))
    );

    let complete: Vec<&Value> = payloads(ratelimit, "event_msg")
        .into_iter()
        .filter(|p| p["type"] == "task_complete")
        .collect();
    assert_eq!(complete.len(), 1);
    assert_eq!(
        complete[0]["error"]["codex_error_info"]["response_too_many_failed_attempts"]["http_status_code"],
        429
    );
}
