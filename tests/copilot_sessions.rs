//! GitHub Copilot CLI sessions found where the CLI keeps them, without the CLI: the session
//! file the real CLI 1.0.102 wrote against a mock API (`fixtures/copilot-1.0.102/main.jsonl`)
//! put in a Copilot dir the way the CLI lays it out (`session-state/<session id>/
//! events.jsonl`), its `cwd` the test's project. Checked: `familiar sessions` lists it (project,
//! status, context), `COPILOT_HOME` moves the dir as it moves the CLI's, `--agent` selects it,
//! `watch --session` finds it by the short id, and what `watch` tells live, the file written
//! while it runs, equals what `familiar events` reads from the file.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::watch::{Watch, append, familiar_events, without_status};
use serde_json::Value;

const SESSION: &str = "a59f8f81-7352-43fd-96e6-3e4569a13695";

/// The fixture's text with its project (`/tmp/cp/proj`) made `project`.
fn fixture_of(project: &Path) -> String {
    let text = fs::read_to_string(common::fixture("copilot-1.0.102/main.jsonl")).expect("fixture");
    text.replace("/tmp/cp/proj", project.to_str().expect("UTF-8 temp dir"))
}

/// A Copilot dir `dir` holding the fixture session of `project`; its file.
fn copilot_session(dir: &Path, project: &Path) -> PathBuf {
    let folder = dir.join("session-state").join(SESSION);
    fs::create_dir_all(&folder).expect("mkdir");
    let file = folder.join("events.jsonl");
    fs::write(&file, fixture_of(project)).expect("session file");
    file
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
        .env_remove("QWEN_HOME")
        .env_remove("QWEN_RUNTIME_DIR")
        .env_remove("COPILOT_HOME")
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
fn sessions_lists_a_copilot_session_with_its_project_status_and_context() {
    let (_tmp, home, project) = dirs();
    copilot_session(&home.join(".copilot"), &project);
    let found = sessions(&home, &project, &[], "copilot");
    assert_eq!(found.len(), 1, "{found:?}");
    let session = &found[0];
    assert_eq!(session["session"], SESSION);
    assert_eq!(session["agent_kind"], "copilot");
    assert_eq!(session["cwd"], project.to_string_lossy().as_ref());
    assert!(
        session["status"] == "waiting_for_input" || session["status"] == "idle",
        "{session}"
    );
    // The main agent's last request: 2,000 in and 28 out, of the CLI's 64,000.
    assert_eq!(session["context_used"], 2_028);
    assert_eq!(session["context_limit"], 64_000);
}

#[test]
fn copilot_home_moves_the_dir_and_agent_selects_it() {
    let (_tmp, home, project) = dirs();
    let elsewhere = home.join("elsewhere");
    copilot_session(&elsewhere, &project);
    // In HOME/.copilot there is nothing; COPILOT_HOME is where the CLI wrote.
    assert!(sessions(&home, &project, &[], "copilot").is_empty());
    let moved = [("COPILOT_HOME", elsewhere.as_path())];
    let found = sessions(&home, &project, &moved, "copilot");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["session"], SESSION);
    // `--agent claude` leaves it out; `all` (the default) has it.
    assert!(sessions(&home, &project, &moved, "claude").is_empty());
    assert_eq!(sessions(&home, &project, &moved, "all").len(), 1);
    // Another project's session is not this one's.
    let other = project.with_file_name("other");
    fs::create_dir_all(&other).expect("mkdir");
    assert!(sessions(&home, &other, &moved, "copilot").is_empty());
}

#[test]
fn watch_finds_a_copilot_session_by_the_short_id() {
    let (_tmp, home, project) = dirs();
    copilot_session(&home.join(".copilot"), &project);
    let mut watch = Watch::start(&home, &project, &["--session", &SESSION[..8]]);
    let snapshot: Value =
        serde_json::from_str(&watch.line_containing(SESSION)).expect("an event line");
    watch.interrupt();
    assert_eq!(snapshot["kind"], "snapshot");
    assert_eq!(snapshot["agent_kind"], "copilot");
    assert_eq!(snapshot["cwd"], project.to_string_lossy().as_ref());
    assert_eq!(snapshot["context_limit"], 64_000);
}

#[test]
fn live_equals_offline() {
    let (_tmp, home, project) = dirs();
    // The session's file, not there yet when `watch` starts: written while it runs.
    let folder = home.join(".copilot").join("session-state").join(SESSION);
    fs::create_dir_all(&folder).expect("mkdir");
    let file = folder.join("events.jsonl");
    let file_arg = file.to_str().expect("UTF-8 path");
    let mut watch = Watch::start(&home, &project, &["--wait", "--file", file_arg]);
    let text = fixture_of(&project);
    let lines: Vec<&str> = text.lines().collect();
    let half = lines.len() / 2;
    for part in [&lines[..half], &lines[half..]] {
        let mut chunk = part.join("\n");
        chunk.push('\n');
        append(&file, chunk.as_bytes());
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    // The session's last event is its `success` (then only a `status`).
    let live = watch.events_until("\"kind\":\"success\"");
    watch.interrupt();
    let live: Vec<Value> = without_status(live)
        .iter()
        .map(|line| serde_json::from_str(line).expect("live event JSON"))
        .filter(|event: &Value| event["session"] == SESSION)
        .collect();
    let offline: Vec<Value> = familiar_events(&file)
        .iter()
        .map(|line| serde_json::from_str(line).expect("offline event JSON"))
        .filter(|event: &Value| event["kind"] != "status" && event["kind"] != "success")
        .collect();
    assert!(offline.len() > 10, "{offline:?}");
    assert_eq!(live, offline, "live differs from offline");
}
