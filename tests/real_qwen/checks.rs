//! The checks of `real_qwen.rs`, apart from the run that produces what they read: the records
//! the CLI wrote, the events `familiar` makes of them, and the commands (`sessions`, `stats`,
//! `doctor`) on them.

use super::*;
use common::facts::{of_kind, tool_uses};
use mock::Usage;

fn lines(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .expect("read session file")
        .lines()
        .map(|line| serde_json::from_str(line).expect("a session line is JSON"))
        .collect()
}

/// `ui_telemetry` events of a file: `(event.name, status_code)`.
fn telemetry(lines: &[Value]) -> Vec<(&str, u64)> {
    lines
        .iter()
        .filter(|line| line["subtype"] == "ui_telemetry")
        .map(|line| &line["systemPayload"]["uiEvent"])
        .map(|ui| {
            (
                ui["event.name"].as_str().unwrap_or(""),
                ui["status_code"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// What the CLI wrote, as Familiar's reader expects it (`crates/familiar-transcript/src/
/// qwen/shapes.rs`): a failing fact here means the CLI changed, not Familiar.
pub(super) fn check_records(
    files: &BTreeMap<&str, PathBuf>,
    project: &Path,
    qwen_dir: &Path,
    mock: &Mock,
) {
    for (name, path) in files
        .iter()
        .filter(|(name, _)| **name != "subagent-general")
    {
        let lines = lines(path);
        let id = lines[0]["sessionId"].as_str().expect("a session id");
        // `projects/<the project dash-encoded>/chats/<session id>.jsonl`.
        assert_eq!(
            path,
            &qwen_dir
                .join("projects")
                .join(encoded(&project.to_string_lossy()))
                .join("chats")
                .join(format!("{id}.jsonl")),
            "{name}"
        );
        for line in &lines {
            assert_eq!(line["sessionId"], id, "{name}: {line}");
            assert_eq!(line["cwd"], project.to_string_lossy().as_ref(), "{name}");
            assert!(line["uuid"].is_string(), "{name}: {line}");
            assert!(
                ["user", "assistant", "tool_result", "system"]
                    .contains(&line["type"].as_str().unwrap_or("")),
                "{name}: {line}"
            );
        }
        // Every reply: Gemini API contents, the usage as the API sent it, the CLI's window.
        for reply in lines.iter().filter(|line| line["type"] == "assistant") {
            assert_eq!(reply["message"]["role"], "model", "{reply}");
            assert_eq!(reply["model"], MODEL);
            assert_eq!(reply["contextWindowSize"], 1_000_000);
            let usage = &reply["usageMetadata"];
            assert_eq!(usage["candidatesTokenCount"], 20, "{usage}");
            assert_eq!(usage["thoughtsTokenCount"], 5, "{usage}");
            assert_eq!(usage["cachedContentTokenCount"], 400, "{usage}");
            assert_eq!(
                usage["totalTokenCount"].as_u64(),
                usage["promptTokenCount"].as_u64().map(|prompt| prompt + 20),
                "completion tokens include the reasoning: {usage}"
            );
        }
    }
    let main = lines(&files["main"]);
    // Each call's answer: a `tool_result` record with its status.
    let results: Vec<(&str, &str)> = main
        .iter()
        .filter(|line| line["type"] == "tool_result")
        .map(|line| {
            (
                line["message"]["parts"][0]["functionResponse"]["name"]
                    .as_str()
                    .unwrap_or(""),
                line["toolCallResult"]["status"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("read_file", "success"),
            ("run_shell_command", "error"),
            ("edit", "success"),
            ("write_file", "success"),
            ("read_file", "error"),
            ("grep_search", "success"),
            ("glob", "success"),
        ]
    );
    let shell = main
        .iter()
        .find(|line| line["toolCallResult"]["errorType"] == "shell_execute_error")
        .expect("the shell failure");
    assert_eq!(shell["toolCallResult"]["resultDisplay"]["exitCode"], 3);
    assert_eq!(
        main.iter()
            .find(|line| line["type"] == "assistant")
            .map(|line| &line["message"]["parts"][0]),
        Some(&json!({"text": "I should read the file first.", "thought": true}))
    );
    // The rate-limited turn (continued): its prompt, then one `api_error` per attempt, no
    // answer.
    let prompt = main
        .iter()
        .position(|line| line["message"]["parts"][0]["text"] == "FAMILIAR-SCRIPT ratelimit")
        .expect("the ratelimit prompt");
    let after = telemetry(&main[prompt..]);
    assert!(
        !after.is_empty()
            && after
                .iter()
                .all(|event| *event == ("qwen-code.api_error", 429)),
        "{after:?}"
    );
    assert!(
        mock.sent_for("ratelimit").is_empty(),
        "no answer but errors"
    );
    // The subagent: its own file, `subagents/<parent session>/agent-<type>-<call id>.jsonl`,
    // every record with `agentId` and `isSidechain`, the parent's session id; a meta file
    // beside it names its type and the call.
    let parent = lines(&files["subagent"]);
    let inner_path = &files["subagent-general"];
    let inner = lines(inner_path);
    let call = parent
        .iter()
        .flat_map(|line| line["message"]["parts"].as_array().into_iter().flatten())
        .find_map(|part| {
            part["functionCall"]
                .as_object()
                .filter(|c| c["name"] == "agent")
        })
        .expect("the agent call");
    let call_id = call["id"].as_str().expect("its id");
    let agent_id = format!("general-purpose-{call_id}");
    assert_eq!(
        inner_path,
        &qwen_dir
            .join("projects")
            .join(encoded(&project.to_string_lossy()))
            .join("subagents")
            .join(parent[0]["sessionId"].as_str().expect("the parent's id"))
            .join(format!("agent-{agent_id}.jsonl"))
    );
    for line in &inner {
        assert_eq!(line["agentId"], agent_id.as_str(), "{line}");
        assert_eq!(line["isSidechain"], true, "{line}");
        assert_eq!(line["sessionId"], parent[0]["sessionId"], "{line}");
    }
    let meta: Value = serde_json::from_str(
        &fs::read_to_string(inner_path.with_extension("meta.json")).expect("its meta file"),
    )
    .expect("meta JSON");
    assert_eq!(meta["agentType"], "general-purpose");
    assert_eq!(meta["toolUseId"], call_id);
    // Its parent is told of its end in a notification naming the call.
    let told = parent
        .iter()
        .find(|line| line["subtype"] == "notification")
        .and_then(|line| line["message"]["parts"][0]["text"].as_str())
        .expect("the notification");
    assert!(
        told.contains(&format!("<tool-use-id>{call_id}</tool-use-id>"))
            && told.contains("<status>completed</status>"),
        "{told}"
    );
    // The compaction: a `chat_compression` record (status 1: compressed, `token_limit`) after
    // the tool's answer, with the CLI's counts before and after.
    let compact = lines(&files["compact"]);
    let compression = compact
        .iter()
        .find(|line| line["subtype"] == "chat_compression")
        .map(|line| &line["systemPayload"]["info"])
        .expect("a chat_compression record");
    assert_eq!(compression["compressionStatus"], 1, "{compression}");
    assert_eq!(compression["triggerReason"], "token_limit", "{compression}");
    assert!(
        compression["originalTokenCount"].as_u64() > compression["newTokenCount"].as_u64(),
        "{compression}"
    );
    assert_eq!(
        mock.sent_for("compaction").len(),
        1,
        "one summary asked for"
    );
    // The mid-turn failure: the tool's answer, then the API's errors.
    let midturn = lines(&files["midturn"]);
    let last_record = midturn
        .iter()
        .rfind(|line| line["type"] != "system")
        .expect("a record");
    assert_eq!(last_record["type"], "tool_result");
    assert_eq!(
        telemetry(&midturn).last(),
        Some(&("qwen-code.api_error", 503))
    );
}

/// The scripted facts, on `familiar events` of each session file.
pub(super) fn check_events(files: &BTreeMap<&str, Vec<Value>>) {
    let main = &files["main"];
    assert!(main.iter().all(|e| e["agent_kind"] == "qwen"));
    let tools: Vec<(&str, &str, String)> = tool_uses(main)
        .into_iter()
        .map(|(kind, tool, target)| {
            let file = Path::new(target).file_name().and_then(|n| n.to_str());
            let target = match tool {
                "read_file" | "edit" | "write_file" => file.unwrap_or(target),
                _ => target,
            };
            (kind, tool, target.to_owned())
        })
        .collect();
    let want = [
        ("reading", "read_file", "a.txt"),
        ("bash", "run_shell_command", "exit 3"),
        ("writing", "edit", "a.txt"),
        ("writing", "write_file", "b.txt"),
        ("reading", "read_file", "missing.txt"),
        ("reading", "grep_search", "bye"),
        ("reading", "glob", "*.txt"),
    ]
    .map(|(kind, tool, target)| (kind, tool, target.to_owned()));
    assert_eq!(tools, want);
    let errors = common::facts::errors(main);
    assert_eq!(
        errors,
        [
            ("tool", "run_shell_command"),
            ("tool", "read_file"),
            ("api", "")
        ]
    );
    let error_texts: Vec<&Value> = of_kind(main, "error").iter().map(|e| &e["text"]).collect();
    assert_eq!(error_texts[0], "exit code 3");
    assert!(
        error_texts[1]
            .as_str()
            .is_some_and(|text| text.starts_with("File not found")),
        "{error_texts:?}"
    );
    assert!(
        error_texts[2]
            .as_str()
            .is_some_and(|text| text.contains("429")),
        "{error_texts:?}"
    );
    assert_eq!(
        of_kind(main, "thinking")[0]["text"],
        "I should read the file first."
    );
    let texts: Vec<&Value> = of_kind(main, "text").iter().map(|e| &e["text"]).collect();
    assert_eq!(texts, ["Reading first.", "All done."]);
    let prompts: Vec<&Value> = of_kind(main, "prompt").iter().map(|e| &e["text"]).collect();
    assert_eq!(
        prompts,
        [
            "Work on a.txt. FAMILIAR-SCRIPT main",
            "FAMILIAR-SCRIPT ratelimit"
        ]
    );
    assert_eq!(of_kind(main, "success").len(), 1);
    let last = main.last().expect("events");
    assert_eq!(last["status"], "waiting_for_input");
    assert_eq!(last["context_limit"], 1_000_000);
    // The last answer's total: its prompt (1,700) and its completion (20).
    assert_eq!(last["context_used"], 1_720);

    let midturn = &files["midturn"];
    let tools: Vec<&Value> = midturn
        .iter()
        .filter(|e| e["tool"].is_string() && e["kind"] != "error")
        .map(|e| &e["tool"])
        .collect();
    assert_eq!(tools, ["read_file"]);
    assert_eq!(common::facts::errors(midturn), [("api", "")]);
    assert!(of_kind(midturn, "success").is_empty());
    assert_eq!(
        midturn.last().expect("events")["status"],
        "waiting_for_input"
    );

    // The subagent, from the parent's side: its start at the call, its end at the
    // notification, between the parent's two turns.
    let parent = &files["subagent"];
    let runs: Vec<(&str, &str)> = parent
        .iter()
        .filter(|e| {
            ["subagent_start", "subagent_end", "success", "prompt"]
                .contains(&e["kind"].as_str().unwrap_or(""))
        })
        .map(|e| {
            (
                e["kind"].as_str().unwrap_or(""),
                e["agent_type"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        runs,
        [
            ("prompt", ""),
            ("subagent_start", "general-purpose"),
            ("success", ""),
            ("subagent_end", "general-purpose"),
            ("success", "")
        ]
    );
    // From its own file: its events are its agent's, on no session of their own.
    let inner = &files["subagent-general"];
    let agent = &inner[0]["agent"];
    assert!(agent.is_string(), "{:?}", inner[0]);
    assert!(
        inner
            .iter()
            .all(|e| e["agent"] == *agent && e["sidechain"] == true && e["session"].is_null())
    );
    let tools: Vec<&Value> = inner
        .iter()
        .filter(|e| e["tool"].is_string())
        .map(|e| &e["tool"])
        .collect();
    assert_eq!(tools, ["read_file"]);
    assert!(of_kind(inner, "prompt").is_empty() && of_kind(inner, "success").is_empty());
}

/// The compaction's events: its boundary with the CLI's counts, the context its estimate until
/// the next reply.
pub(super) fn check_compaction(events: &[Value], record: &Path) {
    let info = lines(record)
        .into_iter()
        .find(|line| line["subtype"] == "chat_compression")
        .map(|line| line["systemPayload"]["info"].clone())
        .expect("a chat_compression record");
    let boundaries = of_kind(events, "compact_boundary");
    assert_eq!(boundaries.len(), 1, "{events:?}");
    let boundary = boundaries[0];
    assert_eq!(boundary["trigger"], "auto");
    assert_eq!(boundary["pre_tokens"], info["originalTokenCount"]);
    assert_eq!(boundary["post_tokens"], info["newTokenCount"]);
    assert_eq!(boundary["context_used"], info["newTokenCount"]);
    let texts: Vec<&Value> = of_kind(events, "text").iter().map(|e| &e["text"]).collect();
    assert_eq!(texts, ["Done after the compaction."]);
    let last = events.last().expect("events");
    assert_eq!(last["context_used"], 1_220);
    assert_eq!(last["status"], "waiting_for_input");
}

/// `familiar sessions`, `stats` and `doctor` on what the CLI wrote.
pub(super) fn check_commands(
    home: &Path,
    project: &Path,
    files: &BTreeMap<&str, PathBuf>,
    mock: &Mock,
) {
    let familiar = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_familiar"))
            .args(args)
            .env("HOME", home)
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("CLAUDE_CONFIG_DIR", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("QWEN_HOME")
            .env_remove("QWEN_RUNTIME_DIR")
            .env_remove("FAMILIAR_CONFIG")
            .env("NO_COLOR", "1")
            .current_dir(project)
            .stdin(Stdio::null())
            .output()
            .expect("run familiar");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let sessions: Vec<Value> =
        serde_json::from_str(&familiar(&["sessions", "--json", "--agent", "qwen"]))
            .expect("sessions JSON");
    // main (continued), midturn, compact and the subagent's parent: the subagent is no
    // session.
    assert_eq!(sessions.len(), 4, "{sessions:?}");
    for session in &sessions {
        assert_eq!(session["agent_kind"], "qwen");
        assert_eq!(session["cwd"], project.to_string_lossy().as_ref());
        assert_eq!(session["context_limit"], 1_000_000);
        assert_eq!(session["status"], "waiting_for_input", "{session}");
    }
    let main_id = lines(&files["main"])[0]["sessionId"].clone();
    let main = sessions
        .iter()
        .find(|session| session["session"] == main_id)
        .expect("the main session is listed");
    assert_eq!(main["context_used"], 1_720);
    let claude_only: Vec<Value> =
        serde_json::from_str(&familiar(&["sessions", "--json", "--agent", "claude"]))
            .expect("sessions JSON");
    assert!(
        claude_only.iter().all(|s| s["agent_kind"].is_null()),
        "--agent claude: {claude_only:?}"
    );

    // `familiar stats` in the project: every agent's files, Qwen Code's tokens as the mock
    // sent them.
    let rows: Vec<Value> = familiar(&["stats", "--json"])
        .lines()
        .map(|line| serde_json::from_str(line).expect("stats JSON line"))
        .collect();
    for (name, script) in [
        ("main", "main"),
        ("midturn", "midturn"),
        ("subagent", "subagent"),
        ("subagent-general", "subinner"),
        ("compact", "compact"),
    ] {
        let file = files[name].to_string_lossy();
        let row = rows
            .iter()
            .find(|row| row["file"] == file.as_ref())
            .unwrap_or_else(|| panic!("{name}: no stats row in {rows:?}"));
        let sent = mock.sent_for(script);
        assert!(!sent.is_empty(), "{name}: the mock sent nothing");
        let sum = |part: fn(&Usage) -> u64| sent.iter().map(part).sum::<u64>();
        assert_eq!(
            row["tokens"]["input"],
            sum(|u| u.prompt - u.cached),
            "{name}: {row}"
        );
        assert_eq!(
            row["tokens"]["output"],
            sum(|u| u.completion),
            "{name}: {row}"
        );
        assert_eq!(
            row["tokens"]["cache_read"],
            sum(|u| u.cached),
            "{name}: {row}"
        );
        assert!(row.get("unknown").is_none(), "{name}: {row}");
    }
    let main_row = rows
        .iter()
        .find(|row| row["session"] == main_id)
        .expect("main's row");
    assert_eq!(main_row["tool_calls"]["read_file"], 2);
    let modified: Vec<String> = main_row["files_modified"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|path| {
            Path::new(path.as_str()?)
                .file_name()?
                .to_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(modified, ["a.txt", "b.txt"]);

    let doctor = familiar(&["doctor"]);
    let line = doctor
        .lines()
        .find(|line| line.starts_with("[ok] Qwen dir: "))
        .unwrap_or_else(|| panic!("no Qwen dir line in {doctor}"));
    // Its four sessions and the subagent's file.
    assert!(line.ends_with(", 5 session(s)"), "{doctor}");
}
