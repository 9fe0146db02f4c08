//! The checks of `real_gemini.rs`, apart from the run that produces what they read: the
//! records the CLI wrote, the events `familiar` makes of them, and the commands (`sessions`,
//! `stats`, `doctor`) on them.

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

/// What the CLI wrote, as Familiar's reader expects it (`crates/familiar-transcript/src/
/// gemini/shapes.rs`): a failing fact here means the CLI changed, not Familiar.
pub(super) fn check_records(
    files: &BTreeMap<&str, PathBuf>,
    project: &Path,
    gemini_dir: &Path,
    mock: &Mock,
) {
    for (name, path) in files
        .iter()
        .filter(|(name, _)| **name != "subagent-investigator")
    {
        let lines = lines(path);
        let meta = &lines[0];
        assert!(meta["sessionId"].is_string(), "{name}: {meta}");
        assert!(meta["projectHash"].is_string(), "{name}: {meta}");
        assert_eq!(meta["kind"], "main", "{name}");
        // `tmp/<project>/chats/session-<minute>-<first 8 of the id>.jsonl`.
        let id = meta["sessionId"].as_str().unwrap_or("");
        let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert!(
            file_name.starts_with("session-")
                && file_name.ends_with(&format!("-{}.jsonl", &id[..8])),
            "{file_name}"
        );
        let folder = path
            .parent()
            .and_then(Path::parent)
            .expect("project folder");
        assert_eq!(folder.parent(), Some(gemini_dir.join("tmp").as_path()));
        assert_eq!(
            fs::read_to_string(folder.join(".project_root")).expect(".project_root"),
            project.to_string_lossy()
        );
    }
    let main = lines(&files["main"]);
    // Each reply is written again once its tool calls ran: the same id, now with them.
    let calls: Vec<(&str, &str)> = main
        .iter()
        .filter(|line| line["type"] == "gemini")
        .flat_map(|line| line["toolCalls"].as_array().into_iter().flatten())
        .map(|call| {
            (
                call["name"].as_str().unwrap_or(""),
                call["status"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("read_file", "success"),
            ("run_shell_command", "success"),
            ("replace", "success"),
            ("write_file", "success"),
            ("read_file", "error"),
            ("grep_search", "success"),
        ]
    );
    let shell = main
        .iter()
        .flat_map(|line| line["toolCalls"].as_array().into_iter().flatten())
        .find(|call| call["name"] == "run_shell_command")
        .expect("the shell call");
    let output = shell["result"][0]["functionResponse"]["response"]["output"]
        .as_str()
        .unwrap_or("");
    assert!(output.contains("\nExit Code: 3\n"), "{output}");
    // Each refused request (400; 429 on both attempts): the prompt, then the history
    // rewritten without it.
    for script in ["badrequest", "ratelimit"] {
        let text = format!("FAMILIAR-SCRIPT {script}");
        let at = main
            .iter()
            .position(|line| line["type"] == "user" && line["content"][0]["text"] == text.as_str())
            .unwrap_or_else(|| panic!("the {script} prompt"));
        let rewrite = main[at..]
            .iter()
            .find_map(|line| line["$set"]["messages"].as_array())
            .unwrap_or_else(|| panic!("a history after the {script} prompt"));
        assert!(
            rewrite
                .iter()
                .all(|message| message["id"] != main[at]["id"])
        );
    }
    assert!(
        mock.sent_for("ratelimit").is_empty(),
        "no answer but errors"
    );
    // The subagent: its own file, `chats/<parent session>/<its id>.jsonl`, `kind: subagent`;
    // the parent's `invoke_agent` call, written once it ended, names it (`agentId`).
    let parent = lines(&files["subagent"]);
    let inner_path = &files["subagent-investigator"];
    let inner = lines(inner_path);
    assert_eq!(inner[0]["kind"], "subagent");
    let inner_id = inner[0]["sessionId"].as_str().expect("its id");
    assert_eq!(
        inner_path.file_name().and_then(|n| n.to_str()),
        Some(format!("{inner_id}.jsonl").as_str())
    );
    assert_eq!(
        inner_path
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str()),
        parent[0]["sessionId"].as_str()
    );
    let invoke = parent
        .iter()
        .flat_map(|line| line["toolCalls"].as_array().into_iter().flatten())
        .find(|call| call["name"] == "invoke_agent")
        .expect("the invoke_agent call");
    assert_eq!(invoke["agentId"], inner_id);
    assert_eq!(invoke["status"], "success");
    // The mid-turn failure: the file ends with the tool's answer.
    let midturn = lines(&files["midturn"]);
    let answer = midturn
        .iter()
        .rfind(|line| line["id"].is_string())
        .expect("a message");
    assert_eq!(answer["type"], "user");
    assert!(
        answer["content"][0]["functionResponse"].is_object(),
        "{answer}"
    );
}

/// The scripted facts, on `familiar events` of each session file.
pub(super) fn check_events(files: &BTreeMap<&str, Vec<Value>>) {
    let main = &files["main"];
    assert!(main.iter().all(|e| e["agent_kind"] == "gemini"));
    let tools = tool_uses(main);
    assert_eq!(
        tools,
        [
            ("reading", "read_file", "a.txt"),
            ("bash", "run_shell_command", "exit 3"),
            ("writing", "replace", "a.txt"),
            ("writing", "write_file", "b.txt"),
            ("reading", "read_file", "missing.txt"),
            ("reading", "grep_search", "bye"),
        ]
    );
    let errors = common::facts::errors(main);
    assert_eq!(
        errors,
        [
            ("tool", "run_shell_command"),
            ("tool", "read_file"),
            ("api", ""),
            ("api", "")
        ]
    );
    assert_eq!(of_kind(main, "error")[0]["text"], "exit code 3");
    assert_eq!(
        of_kind(main, "thinking")[0]["text"],
        "Reading\nI should read the file first."
    );
    let texts: Vec<&Value> = of_kind(main, "text").iter().map(|e| &e["text"]).collect();
    assert_eq!(texts, ["Now a failing command.", "All done."]);
    let prompts: Vec<&Value> = of_kind(main, "prompt").iter().map(|e| &e["text"]).collect();
    assert_eq!(
        prompts,
        [
            "Work on a.txt. FAMILIAR-SCRIPT main",
            "FAMILIAR-SCRIPT badrequest",
            "FAMILIAR-SCRIPT ratelimit"
        ]
    );
    assert_eq!(of_kind(main, "success").len(), 1);
    let last = main.last().expect("events");
    assert_eq!(last["status"], "waiting_for_input");
    assert_eq!(last["context_limit"], 1_048_576);
    assert_eq!(last["context_used"], 1_625);

    let midturn = &files["midturn"];
    let tools: Vec<&Value> = midturn
        .iter()
        .filter(|e| e["tool"].is_string())
        .map(|e| &e["tool"])
        .collect();
    assert_eq!(tools, ["list_directory"]);
    assert!(of_kind(midturn, "error").is_empty() && of_kind(midturn, "success").is_empty());
    assert_eq!(midturn.last().expect("events")["status"], "working");

    // The subagent, from the parent's side: its start and end, written together.
    let parent = &files["subagent"];
    let runs: Vec<(&str, &str)> = parent
        .iter()
        .filter(|e| e["kind"] == "subagent_start" || e["kind"] == "subagent_end")
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
            ("subagent_start", "codebase_investigator"),
            ("subagent_end", "codebase_investigator")
        ]
    );
    assert_eq!(of_kind(parent, "success").len(), 1);
    // From its own file: its events are its agent's, on no session of their own.
    let inner = &files["subagent-investigator"];
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
    assert_eq!(tools, ["read_file", "complete_task"]);
    assert!(of_kind(inner, "prompt").is_empty() && of_kind(inner, "success").is_empty());
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
            .env_remove("FAMILIAR_CONFIG")
            .env("NO_COLOR", "1")
            .current_dir(project)
            .stdin(Stdio::null())
            .output()
            .expect("run familiar");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let sessions: Vec<Value> =
        serde_json::from_str(&familiar(&["sessions", "--json", "--agent", "gemini"]))
            .expect("sessions JSON");
    // main (resumed), midturn and the subagent's parent: the subagent is no session of its own.
    assert_eq!(sessions.len(), 3, "{sessions:?}");
    for session in &sessions {
        assert_eq!(session["agent_kind"], "gemini");
        assert_eq!(session["cwd"], project.to_string_lossy().as_ref());
        assert_eq!(session["context_limit"], 1_048_576);
    }
    let main_id = lines(&files["main"])[0]["sessionId"].clone();
    let main = sessions
        .iter()
        .find(|session| session["session"] == main_id)
        .expect("the main session is listed");
    assert_eq!(main["status"], "waiting_for_input");
    assert_eq!(main["context_used"], 1_625);
    let claude_only: Vec<Value> =
        serde_json::from_str(&familiar(&["sessions", "--json", "--agent", "claude"]))
            .expect("sessions JSON");
    assert!(
        claude_only.iter().all(|s| s["agent_kind"].is_null()),
        "--agent claude: {claude_only:?}"
    );

    // `familiar stats` in the project: every agent's files, Gemini's tokens as the mock sent.
    let rows: Vec<Value> = familiar(&["stats", "--json"])
        .lines()
        .map(|line| serde_json::from_str(line).expect("stats JSON line"))
        .collect();
    for (name, script) in [
        ("main", "main"),
        ("midturn", "midturn"),
        ("subagent", "subagent"),
        ("subagent-investigator", "subinner"),
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
            sum(|u| u.output + u.thoughts),
            "{name}: {row}"
        );
        assert_eq!(
            row["tokens"]["cache_read"],
            sum(|u| u.cached),
            "{name}: {row}"
        );
        assert!(
            row["cost_usd"].as_f64().unwrap_or(0.0) > 0.0,
            "{name}: {row}"
        );
        assert!(row.get("unknown").is_none(), "{name}: {row}");
    }
    let main_row = rows
        .iter()
        .find(|row| row["session"] == main_id)
        .expect("main's row");
    assert_eq!(main_row["tool_calls"]["read_file"], 2);
    assert_eq!(main_row["files_modified"], json!(["a.txt", "b.txt"]));

    // Four files, and a stray one when a resume starts in another minute than its session did
    // (0.61.0 writes the session's metadata and history to `session-<that minute>-<id8>.jsonl`
    // before it goes back to the session's file).
    let doctor = familiar(&["doctor"]);
    let count: usize = doctor
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix("[ok] Gemini dir: ")?;
            rest.rsplit(", ")
                .next()?
                .strip_suffix(" session(s)")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no Gemini dir line in {doctor}"));
    assert!((4..=5).contains(&count), "{doctor}");
}
