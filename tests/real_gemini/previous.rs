//! The previous generation of Gemini CLI's session files, written by the real CLI: 0.28.2
//! (`tests/agents/gemini-0.28.2`), the last before 0.29's project slugs, of the versions before
//! 0.39 that keep a session as one JSON document (`tmp/<SHA-256 of the project>/chats/
//! session-*.json`, truncated and written again whole at every change). The same mock and
//! scripts as today's CLI (`main`, then `--resume latest` with `badrequest` and `ratelimit`),
//! while `familiar watch` follows the project. Checked: the scripted facts where the file
//! holds them (0.28.2 keeps no reply's tokens that had no text, and no error record: a failed
//! prompt is one with no reply before the next), nothing unknown to the reader, `sessions`
//! placing the session in its project, and live equal to offline.
//! `FAMILIAR_UPDATE_FIXTURES=1` keeps the file in `fixtures/gemini-0.28.2/main.json`.
//! Part of `tests/real_gemini.rs`.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use super::common::Generation;
use super::common::facts::{events, of_kind, tool_uses};
use super::common::watch::{Watch, append, encoded_project_dir, sentinel, without_status};
use super::mock::Mock;
use super::{Partner, SETTINGS, scripts};

const PREVIOUS: Generation = Generation {
    dir: "gemini-0.28.2",
    command: "gemini",
    pinned: "0.28.2",
    override_var: "FAMILIAR_GEMINI_PREVIOUS_BIN",
};

/// The previous CLI's session documents under `<gemini dir>/tmp/*/chats/`.
fn documents(gemini_dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(gemini_dir.join("tmp"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|project| {
            fs::read_dir(project.path().join("chats"))
                .into_iter()
                .flatten()
        })
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    out.sort();
    out
}

#[test]
fn the_previous_cli_writes_whole_json_sessions_familiar_reads() {
    let bin = PREVIOUS.bin();
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let version_home = root.join("version-home");
    fs::create_dir_all(&version_home).expect("mkdir");
    let version = super::version_of(&bin, &version_home);
    if std::env::var_os(PREVIOUS.override_var).is_none() {
        assert_eq!(version, PREVIOUS.pinned, "tests/agents/{}", PREVIOUS.dir);
    }
    let home = root.join("home");
    let gemini_dir = home.join(".gemini");
    let project = root.join("project");
    for dir in [&gemini_dir, &project, &home.join("tmp")] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    fs::write(gemini_dir.join("settings.json"), SETTINGS).expect("settings.json");
    let mock = Mock::start(scripts());
    let partner = Partner {
        bin,
        home: home.clone(),
        project: project.clone(),
        url: mock.url.clone(),
    };
    fs::create_dir_all(home.join("projects")).expect("projects dir");
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
    let main = partner.run("main", "Work on a.txt. FAMILIAR-SCRIPT main", &[]);
    let badrequest = partner.run(
        "badrequest",
        "FAMILIAR-SCRIPT badrequest",
        &["--resume", "latest"],
    );
    let ratelimit = partner.run(
        "ratelimit",
        "FAMILIAR-SCRIPT ratelimit",
        &["--resume", "latest"],
    );
    let files = documents(&gemini_dir);
    assert_eq!(
        files.len(),
        1,
        "one document, resumed twice; the CLI printed:\n{main}\n{badrequest}\n{ratelimit}"
    );
    let file = &files[0];
    if let Some(out) = super::common::save_dir(&format!("gemini-{version}")) {
        let text = fs::read_to_string(file).expect("session file");
        fs::write(
            out.join("main.json"),
            text.replace(root.to_str().expect("UTF-8"), "/tmp/familiar-gemini"),
        )
        .expect("write fixture");
    }

    // Offline: the scripted facts the document holds.
    let offline = events(file);
    let a = project.join("a.txt").to_string_lossy().into_owned();
    assert_eq!(
        tool_uses(&offline),
        [
            ("reading", "read_file", "a.txt"),
            ("bash", "run_shell_command", "exit 3"),
            ("writing", "replace", a.as_str()),
            ("writing", "write_file", "b.txt"),
            ("reading", "read_file", "missing.txt"),
            ("reading", "grep_search", "bye"),
        ],
        "{offline:#?}"
    );
    let prompts: Vec<&str> = of_kind(&offline, "prompt")
        .iter()
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(
        prompts,
        [
            "Work on a.txt. FAMILIAR-SCRIPT main",
            "FAMILIAR-SCRIPT badrequest",
            "FAMILIAR-SCRIPT ratelimit"
        ]
    );
    // The refused request: its prompt had no reply before the next one.
    let errors: Vec<(&str, &str)> = of_kind(&offline, "error")
        .iter()
        .map(|e| {
            (
                e["error"].as_str().unwrap_or(""),
                e["tool"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        errors,
        [
            ("tool", "run_shell_command"),
            ("tool", "read_file"),
            ("api", "")
        ],
        "{offline:#?}"
    );
    assert!(
        offline
            .iter()
            .any(|e| e["kind"] == "text" && e["text"] == "All done."),
        "{offline:#?}"
    );

    // Nothing in it unknown to the reader; `sessions` places it in its project (its folder is
    // the project's SHA-256: no `.project_root`).
    let stats = Command::new(env!("CARGO_BIN_EXE_familiar"))
        // Run in the tester's home: nothing kept in its cache folder.
        .args(["stats", "--json", "--no-cache"])
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .expect("familiar stats");
    let stats: Value = serde_json::from_slice(&stats.stdout).expect("stats JSON");
    assert!(stats.get("unknown").is_none(), "{stats}");
    let sessions = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .args(["sessions", "--json", "--agent", "gemini"])
        .env("HOME", &home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env_remove("GEMINI_CLI_HOME")
        .env_remove("FAMILIAR_CONFIG")
        .current_dir(&project)
        .stdin(Stdio::null())
        .output()
        .expect("familiar sessions");
    let sessions: Vec<Value> = serde_json::from_slice(&sessions.stdout).expect("sessions JSON");
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["cwd"], project.to_string_lossy().as_ref());

    // Live, as the CLI wrote and rewrote it, equals offline.
    std::thread::sleep(Duration::from_secs(6));
    let claude_dir = encoded_project_dir(&home, &project);
    fs::create_dir_all(&claude_dir).expect("claude project dir");
    append(
        &claude_dir.join("zz-sentinel.jsonl"),
        sentinel("real-gemini-previous-end").as_bytes(),
    );
    let live: Vec<Value> = without_status(watch.events_until("real-gemini-previous-end"))
        .iter()
        .map(|line| serde_json::from_str(line).expect("live event JSON"))
        .filter(|event: &Value| event["session"] == offline[0]["session"])
        .collect();
    let stderr = watch.stderr();
    watch.interrupt();
    let want: Vec<Value> = offline
        .into_iter()
        .filter(|e| e["kind"] != "status")
        .collect();
    let brief = |events: &[Value]| -> Vec<String> {
        events
            .iter()
            .map(|e| format!("{} {} {}", e["kind"], e["tool"], e["text"]))
            .collect()
    };
    assert_eq!(
        brief(&live),
        brief(&want),
        "live differs from offline; the watcher said:\n{stderr}"
    );
    assert_eq!(live, want, "live differs from offline");
}
