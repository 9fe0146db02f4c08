//! Qwen Code sessions found where the CLI keeps them, without the CLI: the session file the
//! real CLI 0.24.4 wrote (`fixtures/qwen-0.24.4/main.jsonl`) put in a Qwen dir the way the CLI
//! lays it out (`projects/<project dash-encoded>/chats/<session id>.jsonl`), its `cwd` the
//! test's project. Checked: `watch --session` by the short id `sessions` prints, the project
//! from the records' `cwd`, `QWEN_HOME` and `QWEN_RUNTIME_DIR` moving the dir as they move the
//! CLI's, and `--agent` selecting it.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::watch::Watch;
use serde_json::Value;

/// A Qwen dir `dir` holding the fixture session of `project`; the session id.
fn qwen_session(dir: &Path, project: &Path) -> String {
    let text = fs::read_to_string(common::fixture("qwen-0.24.4/main.jsonl")).expect("fixture");
    let text = text.replace(
        "/tmp/familiar-qwen/project",
        project.to_str().expect("UTF-8 temp dir"),
    );
    let first: Value =
        serde_json::from_str(text.lines().next().expect("a first line")).expect("JSON");
    let id = first["sessionId"].as_str().expect("sessionId").to_owned();
    let encoded: String = project
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let chats = dir.join("projects").join(encoded).join("chats");
    fs::create_dir_all(&chats).expect("mkdir");
    fs::write(chats.join(format!("{id}.jsonl")), text).expect("session file");
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
        .env_remove("QWEN_HOME")
        .env_remove("QWEN_RUNTIME_DIR")
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
fn watch_finds_a_qwen_session_by_the_short_id_and_places_it_in_its_project() {
    let (_tmp, home, project) = dirs();
    let id = qwen_session(&home.join(".qwen"), &project);
    let mut watch = Watch::start(&home, &project, &["--session", &id[..8]]);
    let snapshot: Value = serde_json::from_str(&watch.line_containing(&id)).expect("an event line");
    watch.interrupt();
    assert_eq!(snapshot["kind"], "snapshot");
    assert_eq!(snapshot["agent_kind"], "qwen");
    assert_eq!(snapshot["cwd"], project.to_string_lossy().as_ref());
    assert!(
        snapshot["status"] == "waiting_for_input" || snapshot["status"] == "idle",
        "{snapshot}"
    );
    assert_eq!(snapshot["context_limit"], 1_000_000);
    assert_eq!(snapshot["context_used"], 1_720);
}

#[test]
fn qwen_home_and_runtime_dir_move_the_dir_and_agent_selects_it() {
    let (_tmp, home, project) = dirs();
    let elsewhere = home.join("elsewhere");
    let id = qwen_session(&elsewhere, &project);
    // In HOME/.qwen there is nothing; QWEN_HOME (or QWEN_RUNTIME_DIR, which wins) is where the
    // CLI wrote.
    assert!(sessions(&home, &project, &[], "qwen").is_empty());
    for var in ["QWEN_HOME", "QWEN_RUNTIME_DIR"] {
        let found = sessions(&home, &project, &[(var, &elsewhere)], "qwen");
        assert_eq!(found.len(), 1, "{var}: {found:?}");
        assert_eq!(found[0]["session"], id.as_str());
        assert_eq!(found[0]["agent_kind"], "qwen");
        assert_eq!(found[0]["cwd"], project.to_string_lossy().as_ref());
    }
    let nowhere = home.join("nowhere");
    let runtime_wins = sessions(
        &home,
        &project,
        &[("QWEN_HOME", &elsewhere), ("QWEN_RUNTIME_DIR", &nowhere)],
        "qwen",
    );
    assert!(runtime_wins.is_empty(), "{runtime_wins:?}");
    // `--agent claude` leaves it out; `all` (the default) has it.
    assert!(sessions(&home, &project, &[("QWEN_HOME", &elsewhere)], "claude").is_empty());
    assert_eq!(
        sessions(&home, &project, &[("QWEN_HOME", &elsewhere)], "all").len(),
        1
    );
}

#[test]
fn a_qwen_session_of_another_project_is_not_this_ones() {
    let (_tmp, home, project) = dirs();
    let other = project.with_file_name("other");
    fs::create_dir_all(&other).expect("mkdir");
    qwen_session(&home.join(".qwen"), &other);
    assert!(sessions(&home, &project, &[], "qwen").is_empty());
    assert_eq!(sessions(&home, &other, &[], "qwen").len(), 1);
}
