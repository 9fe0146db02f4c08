//! The checks of `real_codex.rs`, apart from the run that produces what they read: the
//! commands (`sessions`, `stats`, `doctor`) on the rollouts, the events `familiar` makes of
//! them, and the records the CLI wrote.

use super::*;
use common::facts::{of_kind, tool_uses};

/// `familiar sessions`, `stats` and `doctor` on what the CLI wrote.
pub(super) fn check_commands(home: &Path, project: &Path, files: &BTreeMap<&str, PathBuf>) {
    let familiar = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_familiar"))
            .args(args)
            .env("HOME", home)
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("CLAUDE_CONFIG_DIR", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
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

    // A turn that failed before any token_count: the window of its task_started.
    let servererror = files["servererror"].to_str().expect("UTF-8 path");
    let stats: Value =
        serde_json::from_str(&familiar(&["stats", "--json", servererror])).expect("stats JSON");
    assert_eq!(stats["context_limit"], SERVER_ERROR_WINDOW * 95 / 100);
    let limits: Vec<&Value> = sessions.iter().map(|s| &s["context_limit"]).collect();
    assert!(
        limits.contains(&&json!(SERVER_ERROR_WINDOW * 95 / 100)),
        "{limits:?}"
    );

    let doctor = familiar(&["doctor"]);
    assert!(
        doctor.contains("Codex dir") && doctor.contains("5 session(s)"),
        "{doctor}"
    );
}

/// The scripted facts, on `familiar events` of each rollout.
pub(super) fn check_events(files: &BTreeMap<&str, Vec<Value>>) {
    let main = &files["main"];
    assert!(main.iter().all(|e| e["agent_kind"] == "codex"));
    let tools = tool_uses(main);
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
    let errors = common::facts::errors(main);
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

    // Each failed turn: one api error, its code, a readable line, the window task_started said.
    let failed = [
        ("ratelimit", "rate_limit", 258_400, "Exceeded retry limit"),
        (
            "servererror",
            "server_error",
            SERVER_ERROR_WINDOW * 95 / 100,
            "We’re currently experiencing high demand",
        ),
        ("badrequest", "other", 258_400, "Invalid value for 'input'"),
        (
            "unavailable",
            "server_error",
            258_400,
            "The engine is currently overloaded, please try again later (HTTP 503)",
        ),
    ];
    for (name, code, window, message) in failed {
        let events = &files[name];
        let errors = of_kind(events, "error");
        assert_eq!(errors.len(), 1, "{name}");
        assert_eq!(errors[0]["error"], "api", "{name}");
        assert_eq!(errors[0]["error_code"], code, "{name}");
        assert_eq!(errors[0]["context_limit"], window, "{name}");
        let readable = errors[0]["message"].as_str().unwrap_or_default();
        assert!(
            readable.starts_with(message) && !readable.contains('{'),
            "{name}: {readable}"
        );
        assert!(of_kind(events, "success").is_empty(), "{name}");
    }
}

fn payloads<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records
        .iter()
        .filter(|r| r["type"] == kind)
        .map(|r| &r["payload"])
        .collect()
}

/// The scripted facts, as the CLI wrote them (the shapes the normalizer reads).
pub(super) fn check_records(files: &BTreeMap<&str, Vec<Value>>, project: &Path) {
    let main = &files["main"];
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

    let info = |name: &str| &failed_turn(&files[name])["codex_error_info"];
    assert_eq!(
        info("ratelimit")["response_too_many_failed_attempts"]["http_status_code"],
        429
    );
    check_failed_turn_records(files);
}

/// The `error` of the one `task_complete` of a turn that failed, after a `task_started` that
/// says the window and no `token_count` (the turn made no request that answered).
fn failed_turn(records: &[Value]) -> &Value {
    let events = payloads(records, "event_msg");
    let complete: Vec<&&Value> = events
        .iter()
        .filter(|p| p["type"] == "task_complete")
        .collect();
    assert_eq!(complete.len(), 1);
    assert!(events.iter().all(|p| p["type"] != "token_count"));
    let started: Vec<&&Value> = events
        .iter()
        .filter(|p| p["type"] == "task_started")
        .collect();
    assert_eq!(started.len(), 1);
    assert!(started[0]["model_context_window"].as_u64().is_some());
    &complete[0]["error"]
}

/// Issue 25: what Codex 0.171 writes for the 500, 400 and 503 turns.
fn check_failed_turn_records(files: &BTreeMap<&str, Vec<Value>>) {
    let window = |name: &str| {
        payloads(&files[name], "event_msg")
            .into_iter()
            .find(|p| p["type"] == "task_started")
            .map(|p| p["model_context_window"].clone())
    };
    // 95% of the configured window, as for token_count.
    assert_eq!(
        window("servererror"),
        Some(json!(SERVER_ERROR_WINDOW * 95 / 100))
    );
    let server = failed_turn(&files["servererror"]);
    assert_eq!(server["codex_error_info"], "internal_server_error");
    let bad = failed_turn(&files["badrequest"]);
    assert_eq!(bad["codex_error_info"], "other");
    let body: Value = serde_json::from_str(bad["message"].as_str().unwrap_or_default())
        .expect("the 400's message is the body's JSON");
    assert_eq!(body["error"]["code"], "invalid_request_error");
    let unavailable = failed_turn(&files["unavailable"]);
    assert_eq!(
        unavailable["codex_error_info"]["http_connection_failed"]["http_status_code"],
        503
    );
    let message = unavailable["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("unexpected status 503 Service Unavailable: The engine")
            && message.contains(", url: http://127.0.0.1:"),
        "{message}"
    );
}
