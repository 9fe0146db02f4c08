//! The real Qwen Code CLI as a test partner: the pinned npm package in `tests/agents/qwen/`
//! (`npm ci --prefix tests/agents/qwen`) runs scripted `qwen -p` sessions against the mock
//! OpenAI-compatible API in `tests/real_qwen/mock.rs` (`OPENAI_BASE_URL`), while
//! `familiar watch --headless --events` follows the project (the sessions placed by the `cwd`
//! of their records). Checked: the records the CLI wrote, every scripted fact through
//! `familiar events`, live equal to offline, and `sessions`, `stats` (tokens equal to what the
//! mock sent) and `doctor` on them. `real_qwen/interactive.rs` runs an interactive session in a
//! pseudo-terminal.
//!
//! `FAMILIAR_QWEN_BIN=/path/to/qwen` runs it against another CLI (the newest:
//! `npm install --prefix /tmp/qw @qwen-code/qwen-code@latest`, then
//! `FAMILIAR_QWEN_BIN=/tmp/qw/node_modules/.bin/qwen cargo test --test real_qwen`).
//! `FAMILIAR_UPDATE_FIXTURES=1` copies the session files to `fixtures/qwen-<version>/`, where
//! the reader's tests read them (`crates/familiar-transcript/tests/qwen_code.rs`).

#[path = "real_qwen/checks.rs"]
mod checks;
mod common;
#[path = "real_qwen/interactive.rs"]
mod interactive;
#[path = "real_qwen/mock.rs"]
mod mock;
#[path = "real_qwen/statusline.rs"]
mod statusline;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::Generation;
use common::watch::{Watch, append, encoded_project_dir, sentinel, without_status};
use mock::{Answer, Mock, call, say};
use serde_json::{Value, json};

/// Today's CLI (`tests/agents/qwen`).
const CURRENT: Generation = Generation {
    dir: "qwen",
    command: "qwen",
    pinned: "0.24.4",
    override_var: "FAMILIAR_QWEN_BIN",
};

/// The model the runs ask for (`OPENAI_MODEL`; Qwen Code's window of it is 1,000,000 tokens).
const MODEL: &str = "qwen3-coder-plus";

fn scripts(project: &Path) -> HashMap<&'static str, Vec<Answer>> {
    let at = |name: &str| project.join(name).to_string_lossy().into_owned();
    let mut scripts = HashMap::new();
    scripts.insert(
        "main",
        vec![
            Answer::Reply {
                thought: Some("I should read the file first."),
                text: Some("Reading first."),
                call: Some(("read_file", json!({"file_path": at("a.txt")}))),
                prompt: 1_000,
            },
            call(
                "run_shell_command",
                json!({"command": "exit 3", "is_background": false, "description": "fail"}),
                1_100,
            ),
            call(
                "edit",
                json!({"file_path": at("a.txt"), "old_string": "hello", "new_string": "bye"}),
                1_200,
            ),
            call(
                "write_file",
                json!({"file_path": at("b.txt"), "content": "new file\n"}),
                1_300,
            ),
            call("read_file", json!({"file_path": at("missing.txt")}), 1_400),
            call("grep_search", json!({"pattern": "bye"}), 1_500),
            call("glob", json!({"pattern": "*.txt"}), 1_600),
            say("All done.", 1_700),
        ],
    );
    // Continued after `main` (`-c`): the API's rate limit on every attempt.
    scripts.insert("ratelimit", vec![Answer::Error(429, "Rate limit reached")]);
    // A subagent: the main agent starts one (in the background, as `-p` runs it), which
    // (script `subinner`) reads a file and reports; its parent is told in a notification.
    scripts.insert(
        "subagent",
        vec![
            call(
                "agent",
                json!({"subagent_type": "general-purpose", "description": "look at a.txt",
                    "prompt": "FAMILIAR-SCRIPT subinner Look at a.txt and report."}),
                800,
            ),
            say("The subagent is on it.", 850),
            say("The subagent reported.", 900),
        ],
    );
    scripts.insert(
        "subinner",
        vec![
            call("read_file", json!({"file_path": at("a.txt")}), 700),
            say("a.txt says bye", 750),
        ],
    );
    // A compaction: a reply that fills 90% of the window, so that the CLI compacts the history
    // before the next request (its summary carries the marker on), then a last reply.
    scripts.insert(
        "compact",
        vec![
            call("read_file", json!({"file_path": at("a.txt")}), 900_000),
            Answer::Summary("<state_snapshot>FAMILIAR-SCRIPT compact: a.txt read</state_snapshot>"),
            say("Done after the compaction.", 1_200),
        ],
    );
    // A tool's answer, then the API is unavailable on every attempt.
    scripts.insert(
        "midturn",
        vec![
            call("read_file", json!({"file_path": at("a.txt")}), 900),
            Answer::Error(503, "Service unavailable"),
        ],
    );
    scripts
}

/// Settings for a throwaway home: the OpenAI-compatible auth (the mock is its base URL), no
/// folder trust prompt, nothing that reaches the internet (usage statistics, telemetry,
/// updates), and one retry per attempt (the CLI's own backoff still makes 7 attempts: the
/// mock's `retry-after: 0` keeps them within seconds).
const SETTINGS: &str = r#"{
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"enableAutoUpdate": false},
  "telemetry": {"enabled": false},
  "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": false}},
  "model": {"generationConfig": {"maxRetries": 1, "retryInitialDelayMs": 100,
    "retryMaxDelayMs": 200}}
}
"#;

struct Partner {
    bin: PathBuf,
    home: PathBuf,
    project: PathBuf,
    url: String,
}

impl Partner {
    /// `qwen -p PROMPT --yolo` and `extra`, stdin from /dev/null; its output.
    fn run(&self, name: &str, prompt: &str, extra: &[&str]) -> String {
        let child = Command::new(&self.bin)
            .args(["-p", prompt, "--yolo", "--auth-type", "openai"])
            .args(extra)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", self.home.join("tmp"))
            .env("OPENAI_API_KEY", "familiar-test-dummy")
            .env("OPENAI_BASE_URL", &self.url)
            .env("OPENAI_MODEL", MODEL)
            .env("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1")
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start qwen");
        let output =
            common::wait_bounded(child, Duration::from_secs(180), &format!("{}: qwen", name));
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }
}

/// Every session file under `<qwen dir>/projects/*/chats/`, and every subagent's under
/// `<qwen dir>/projects/*/subagents/<session>/`.
fn session_files(qwen_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let jsonl = |dir: PathBuf, out: &mut Vec<PathBuf>| {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|ext| ext == "jsonl") {
                out.push(path);
            }
        }
    };
    let projects = fs::read_dir(qwen_dir.join("projects"));
    for project in projects.into_iter().flatten().flatten() {
        jsonl(project.path().join("chats"), &mut out);
        let sessions = fs::read_dir(project.path().join("subagents"));
        for session in sessions.into_iter().flatten().flatten() {
            jsonl(session.path(), &mut out);
        }
    }
    out.sort();
    out
}

/// A directory as Qwen Code names its project folder: every character but ASCII letters and
/// digits made `-`.
fn encoded(dir: &str) -> String {
    dir.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The version of the CLI that runs, checked against the pin unless overridden.
fn version(bin: &Path, home: &Path) -> String {
    let output = Command::new(bin)
        .arg("--version")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .expect("qwen --version");
    let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if std::env::var_os(CURRENT.override_var).is_none() {
        assert_eq!(
            version, CURRENT.pinned,
            "tests/agents/{} is not at the pinned version",
            CURRENT.dir
        );
    }
    version
}

#[test]
fn the_real_qwen_code_cli_writes_the_sessions_familiar_reads() {
    let bin = CURRENT.bin();
    let tmp = tempfile::tempdir().expect("temp dir");
    let version = version(&bin, &tmp.path().join("version-home"));
    let home = tmp.path().join("home");
    let qwen_dir = home.join(".qwen");
    let project = tmp.path().join("project");
    for dir in [&qwen_dir, &project, &home.join("tmp")] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    fs::write(qwen_dir.join("settings.json"), SETTINGS).expect("settings.json");
    let mock = Mock::start(scripts(&project));
    let partner = Partner {
        bin,
        home: home.clone(),
        project: project.clone(),
        url: mock.url.clone(),
    };
    // The project's sessions, live: with HOME at `home`, Qwen Code's dir is `home/.qwen`.
    // The session `zz-sentinel` is a Claude Code file that says when to stop reading.
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
    let ratelimit = partner.run("ratelimit", "FAMILIAR-SCRIPT ratelimit", &["-c"]);
    let midturn = partner.run("midturn", "FAMILIAR-SCRIPT midturn", &[]);
    let subagent = partner.run("subagent", "FAMILIAR-SCRIPT subagent", &[]);
    let compact = partner.run("compact", "FAMILIAR-SCRIPT compact", &[]);

    // Name each session file after its first script.
    let mut files: BTreeMap<&str, PathBuf> = BTreeMap::new();
    for path in session_files(&qwen_dir) {
        let text = fs::read_to_string(&path).expect("session file");
        for name in ["main", "midturn", "subagent", "compact"] {
            if text.contains(&format!("FAMILIAR-SCRIPT {name}\"")) {
                files.insert(name, path.clone());
            }
        }
        if text.contains("\"isSidechain\":true") {
            files.insert("subagent-general", path.clone());
        }
    }
    // Saved before any check, so a failing run can be looked at.
    if let Some(out) = common::save_dir(&format!("qwen-{version}")) {
        let tmp_path = tmp.path().to_str().expect("UTF-8 temp dir");
        for (name, path) in &files {
            // The temporary directory changes on every run: it becomes /tmp/familiar-qwen.
            let text = fs::read_to_string(path).expect("session file");
            fs::write(
                out.join(format!("{name}.jsonl")),
                text.replace(tmp_path, "/tmp/familiar-qwen")
                    .replace(&encoded(tmp_path), "-tmp-familiar-qwen")
                    .replace(&mock.url, "http://127.0.0.1:9/v1"),
            )
            .expect("write fixture");
        }
    }
    assert_eq!(
        files.keys().copied().collect::<Vec<_>>(),
        ["compact", "main", "midturn", "subagent", "subagent-general"],
        "one session file each (the continued run appends to main's), the subagent's its own; \
         the CLI printed:\n{main}\n{ratelimit}\n{midturn}\n{subagent}\n{compact}"
    );
    assert!(
        mock.requests.load(std::sync::atomic::Ordering::SeqCst) >= 10,
        "the CLI did not talk to the mock"
    );
    assert!(
        ratelimit.contains("429") && midturn.contains("503"),
        "the API errors reached the CLI:\n{ratelimit}\n{midturn}"
    );
    assert_eq!(
        fs::read_to_string(project.join("a.txt")).expect("a.txt"),
        "bye\n"
    );
    assert_eq!(
        fs::read_to_string(project.join("b.txt")).expect("b.txt"),
        "new file\n"
    );
    checks::check_records(&files, &project, &qwen_dir, &mock);

    // Live: everything the watcher printed, up to the sentinel. A held API error goes out
    // when the file has been quiet for the quiet-turn time (5 s).
    std::thread::sleep(Duration::from_secs(6));
    let claude_dir = encoded_project_dir(&home, &project);
    fs::create_dir_all(&claude_dir).expect("claude project dir");
    append(
        &claude_dir.join("zz-sentinel.jsonl"),
        sentinel("real-qwen-end").as_bytes(),
    );
    let live_lines = watch.events_until("real-qwen-end");
    watch.interrupt();
    let offline: BTreeMap<&str, Vec<Value>> = files
        .iter()
        .map(|(name, path)| (*name, common::facts::events(path)))
        .collect();
    checks::check_events(&offline);
    checks::check_compaction(&offline["compact"], &files["compact"]);
    let first_live: Value = live_lines
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["session"] == offline["main"][0]["session"])
        .expect("a live event of the main session");
    assert_eq!(first_live["cwd"], project.to_string_lossy().as_ref());
    // Live equals offline, file by file (`status` events left out on both sides: live ones
    // also come from timers).
    let live: Vec<Value> = without_status(live_lines)
        .iter()
        .map(|line| serde_json::from_str(line).expect("live event JSON"))
        .collect();
    for (name, want) in &offline {
        let mut want: Vec<Value> = want
            .iter()
            .filter(|e| e["kind"] != "status")
            .cloned()
            .collect();
        // A subagent's file names no session: live, its events carry the parent's (its path's).
        let agent = want[0]["agent"].clone();
        if !agent.is_null() {
            for event in &mut want {
                event["session"] = offline["subagent"][0]["session"].clone();
            }
        }
        let got: Vec<&Value> = live
            .iter()
            .filter(|event| event["session"] == want[0]["session"] && event["agent"] == agent)
            .collect();
        let want: Vec<&Value> = want.iter().collect();
        assert_eq!(got, want, "{name}: live differs from offline");
    }

    checks::check_commands(&home, &project, &files, &mock);
}
