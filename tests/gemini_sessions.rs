//! Gemini CLI sessions found where the CLI keeps them, without the CLI: the session file the
//! real CLI 0.61.0 wrote (`fixtures/gemini-0.61.0/main.jsonl`) put in a Gemini dir the way the
//! CLI lays it out (`.gemini/tmp/<project>/chats/session-<minute>-<id8>.jsonl`, the folder's
//! `.project_root`). Checked: `watch --session` by the short id `sessions` prints (the file's
//! name holds 8 characters of it; its first line the whole id), the project from the folder,
//! `GEMINI_CLI_HOME` moving the dir as it moves the CLI's, `--agent` selecting it, and a
//! session file the CLI rewrites whole (a temporary file renamed over it) telling only what is
//! new.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::watch::{Watch, append, encoded_project_dir, sentinel};
use serde_json::Value;

/// A Gemini dir under `home` holding the fixture session of `project`; the session id.
fn gemini_session(home: &Path, project: &Path) -> String {
    let text = fs::read_to_string(common::fixture("gemini-0.61.0/main.jsonl")).expect("fixture");
    gemini_session_of(home, project, &text)
}

/// The session file of [`gemini_session`] for `text`.
fn session_path(home: &Path, id: &str) -> PathBuf {
    home.join(format!(
        ".gemini/tmp/project/chats/session-2026-11-28T02-01-{}.jsonl",
        &id[..8]
    ))
}

fn gemini_session_of(home: &Path, project: &Path, text: &str) -> String {
    let first: Value =
        serde_json::from_str(text.lines().next().expect("a first line")).expect("JSON");
    let id = first["sessionId"].as_str().expect("sessionId").to_owned();
    let folder = home.join(".gemini/tmp/project");
    fs::create_dir_all(folder.join("chats")).expect("mkdir");
    fs::write(
        folder.join(".project_root"),
        project.to_str().expect("UTF-8 temp dir"),
    )
    .expect(".project_root");
    fs::write(session_path(home, &id), text).expect("session file");
    id
}

fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let home = root.join("home");
    let project = root.join("project");
    for dir in [&home, &project] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    (tmp, home, project)
}

fn sessions(home: &Path, project: &Path, env: &[(&str, &Path)], agent: &str) -> Vec<Value> {
    let mut command = Command::new(env!("CARGO_BIN_EXE_familiar"));
    command
        .args(["sessions", "--json", "--agent", agent])
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env_remove("CODEX_HOME")
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("FAMILIAR_CONFIG")
        .current_dir(project)
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().expect("run familiar sessions");
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("sessions JSON")
}

#[test]
fn watch_finds_a_gemini_session_by_the_short_id_and_places_it_in_its_project() {
    let (_tmp, home, project) = dirs();
    let id = gemini_session(&home, &project);
    let mut watch = Watch::start(&home, &project, &["--session", &id[..8]]);
    let snapshot: Value = serde_json::from_str(&watch.line_containing(&id)).expect("an event line");
    watch.interrupt();
    assert_eq!(snapshot["kind"], "snapshot");
    assert_eq!(snapshot["agent_kind"], "gemini");
    assert_eq!(snapshot["cwd"], project.to_string_lossy().as_ref());
    // Its turn ended (`idle` once its last record is older than the idle time).
    assert!(
        snapshot["status"] == "waiting_for_input" || snapshot["status"] == "idle",
        "{snapshot}"
    );
    assert_eq!(snapshot["context_limit"], 1_048_576);
}

#[test]
fn gemini_cli_home_moves_the_dir_and_agent_selects_it() {
    let (_tmp, home, project) = dirs();
    let elsewhere = home.join("elsewhere");
    let id = gemini_session(&elsewhere, &project);
    // In HOME/.gemini there is nothing; GEMINI_CLI_HOME is where the CLI wrote.
    assert!(sessions(&home, &project, &[], "gemini").is_empty());
    let found = sessions(
        &home,
        &project,
        &[("GEMINI_CLI_HOME", &elsewhere)],
        "gemini",
    );
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["session"], id.as_str());
    assert_eq!(found[0]["agent_kind"], "gemini");
    assert_eq!(found[0]["cwd"], project.to_string_lossy().as_ref());
    let all = sessions(&home, &project, &[("GEMINI_CLI_HOME", &elsewhere)], "all");
    assert_eq!(all.len(), 1, "{all:?}");
    for agent in ["claude", "codex"] {
        let none = sessions(&home, &project, &[("GEMINI_CLI_HOME", &elsewhere)], agent);
        assert!(none.is_empty(), "--agent {agent}: {none:?}");
    }
}

#[test]
fn a_session_file_rewritten_whole_tells_only_what_is_new() {
    let (_tmp, home, project) = dirs();
    let text = fs::read_to_string(common::fixture("gemini-0.61.0/main.jsonl")).expect("fixture");
    let lines: Vec<&str> = text.lines().collect();
    // The first run, up to its last reply; then the CLI rewrites the file with the resumed
    // turn in it (a temporary file renamed over the session, as `rewriteConversationFile`).
    let first_run = lines
        .iter()
        .position(|line| line.contains("All done."))
        .expect("the last reply")
        + 2;
    let id = gemini_session_of(&home, &project, &(lines[..first_run].join("\n") + "\n"));
    let project_arg = project.to_str().expect("UTF-8 temp dir");
    let mut watch = Watch::start(
        &home,
        &project,
        &[
            "--project",
            project_arg,
            "--wait",
            "--session",
            "zz-sentinel",
        ],
    );
    let snapshot: Value = serde_json::from_str(&watch.line_containing(&id)).expect("event");
    assert_eq!(snapshot["kind"], "snapshot");
    let session = session_path(&home, &id);
    let temporary = session.with_extension("jsonl.tmp-1");
    fs::write(&temporary, &text).expect("rewritten file");
    fs::rename(&temporary, &session).expect("rename over the session");
    // Something new after the rewrite, then the sentinel.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let claude_dir = encoded_project_dir(&home, &project);
    fs::create_dir_all(&claude_dir).expect("claude project dir");
    append(
        &claude_dir.join("zz-sentinel.jsonl"),
        sentinel("gemini-rewrite-end").as_bytes(),
    );
    let events: Vec<Value> = watch
        .events_until("gemini-rewrite-end")
        .iter()
        .map(|line| serde_json::from_str(line).expect("event JSON"))
        .filter(|event: &Value| event["session"] == id.as_str() && event["kind"] != "status")
        .collect();
    watch.interrupt();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
    assert_eq!(kinds, ["prompt", "error", "prompt", "error"], "{events:#?}");
    assert_eq!(events[0]["text"], "FAMILIAR-SCRIPT badrequest");
    assert_eq!(events[1]["error"], "api");
    assert_eq!(events[2]["text"], "FAMILIAR-SCRIPT ratelimit");
}

/// Gemini CLI before 0.39 (the real 0.28.2's `fixtures/gemini-0.28.2/main.json`): one JSON
/// document per session under `tmp/<SHA-256 of the project>/chats/`, truncated and written
/// again whole at each change. Live, a rewrite tells only its new messages, the same events
/// `familiar events` reads from the whole document; `sessions` places it in its project.
#[test]
fn a_whole_json_session_of_an_older_cli_is_placed_and_told_once_per_rewrite() {
    let (_tmp, home, project) = dirs();
    let project_text = project.to_str().expect("UTF-8 temp dir");
    let mut doc: Value = serde_json::from_str(
        &fs::read_to_string(common::fixture("gemini-0.28.2/main.json"))
            .expect("fixture")
            .replace("/tmp/familiar-gemini/project", project_text),
    )
    .expect("a JSON document");
    let hash = {
        use sha2::Digest as _;
        format!("{:x}", sha2::Sha256::digest(project_text.as_bytes()))
    };
    doc["projectHash"] = Value::String(hash.clone());
    let id = doc["sessionId"].as_str().expect("sessionId").to_owned();
    let whole = serde_json::to_string_pretty(&doc).expect("JSON");
    let mut first = doc.clone();
    let messages = first["messages"].as_array_mut().expect("messages");
    let first_count = messages
        .iter()
        .position(|message| message.to_string().contains("All done."))
        .expect("the last reply");
    messages.truncate(first_count);
    let session = home.join(format!(
        ".gemini/tmp/{hash}/chats/session-2026-11-28T08-11-{}.json",
        &id[..8]
    ));
    fs::create_dir_all(session.parent().expect("chats")).expect("mkdir");
    fs::write(
        &session,
        serde_json::to_string_pretty(&first).expect("JSON"),
    )
    .expect("session file");

    let found = sessions(&home, &project, &[], "gemini");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["session"], id.as_str());
    assert_eq!(found[0]["cwd"], project_text);

    let mut watch = Watch::start(
        &home,
        &project,
        &[
            "--project",
            project_text,
            "--wait",
            "--session",
            "zz-sentinel",
        ],
    );
    let snapshot: Value = serde_json::from_str(&watch.line_containing(&id)).expect("event");
    assert_eq!(snapshot["kind"], "snapshot");
    // As the CLI writes it: truncated, then the whole document again.
    fs::write(&session, "").expect("truncate");
    std::thread::sleep(std::time::Duration::from_millis(300));
    fs::write(&session, &whole).expect("rewrite");
    std::thread::sleep(std::time::Duration::from_millis(500));
    let claude_dir = encoded_project_dir(&home, &project);
    fs::create_dir_all(&claude_dir).expect("claude project dir");
    append(
        &claude_dir.join("zz-sentinel.jsonl"),
        sentinel("gemini-json-end").as_bytes(),
    );
    let kinds_of = |events: Vec<Value>| -> Vec<String> {
        events
            .into_iter()
            .filter(|event| event["session"] == id.as_str() && event["kind"] != "status")
            .map(|event| event["kind"].as_str().unwrap_or("?").to_owned())
            .collect()
    };
    let live = kinds_of(
        watch
            .events_until("gemini-json-end")
            .iter()
            .map(|line| serde_json::from_str(line).expect("event JSON"))
            .collect(),
    );
    watch.interrupt();
    let offline = kinds_of(
        common::watch::familiar_events(&session)
            .iter()
            .map(|line| serde_json::from_str(line).expect("event JSON"))
            .collect(),
    );
    // What the rewrite added: the last reply on, as reading the whole document tells it.
    let from = offline
        .iter()
        .rposition(|kind| kind == "text")
        .expect("the last reply");
    assert_eq!(live, offline[from..], "offline: {offline:?}");
    assert_eq!(live.first().map(String::as_str), Some("text"));
    assert!(
        live.iter().filter(|kind| *kind == "prompt").count() == 2,
        "{live:?}"
    );
}
