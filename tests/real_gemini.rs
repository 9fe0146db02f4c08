//! The real Gemini CLI as a test partner: the pinned npm package in `tests/agents/gemini/`
//! (`npm ci --prefix tests/agents/gemini`) runs scripted `gemini -p` sessions against the mock
//! Gemini API in `tests/real_gemini/mock.rs` (`GOOGLE_GEMINI_BASE_URL`), while
//! `familiar watch --headless --events` follows the project (the sessions placed by their
//! project folder's `.project_root`). Checked: the records the CLI wrote, every scripted fact
//! through `familiar events`, live equal to offline, and `sessions`, `stats` (tokens equal to
//! what the mock sent) and `doctor` on them. The previous generation (0.28.2, whole-JSON
//! sessions in a folder named after the project's SHA-256) runs too: `real_gemini/previous.rs`.
//!
//! `FAMILIAR_GEMINI_BIN=/path/to/gemini` runs it against another CLI (the newest:
//! `npm install --prefix /tmp/gm @google/gemini-cli@latest`, then
//! `FAMILIAR_GEMINI_BIN=/tmp/gm/node_modules/.bin/gemini cargo test --test real_gemini`).
//! `FAMILIAR_UPDATE_FIXTURES=1` copies the session files to `fixtures/gemini-<version>/`, where
//! the normalizer's snapshot tests read them (`crates/familiar-transcript/tests/gemini_cli.rs`).

#[path = "real_gemini/checks.rs"]
mod checks;
mod common;
#[path = "real_gemini/interactive.rs"]
mod interactive;
#[path = "real_gemini/mock.rs"]
mod mock;
#[path = "real_gemini/previous.rs"]
mod previous;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::Generation;
use common::watch::{Watch, append, encoded_project_dir, sentinel, without_status};
use mock::{Answer, Mock, call, text, thought};
use serde_json::{Value, json};

/// Today's CLI (`tests/agents/gemini`).
const CURRENT: Generation = Generation {
    dir: "gemini",
    command: "gemini",
    pinned: "0.61.0",
    override_var: "FAMILIAR_GEMINI_BIN",
};

/// The model the runs ask for (`-m`): with a model named, the CLI asks no routing classifier.
const MODEL: &str = "gemini-2.5-pro";

fn scripts() -> HashMap<&'static str, Vec<Answer>> {
    let mut scripts = HashMap::new();
    scripts.insert(
        "main",
        vec![
            Answer::Parts(
                vec![
                    thought("**Reading**\nI should read the file first."),
                    call("read_file", json!({"file_path": "a.txt"})),
                ],
                1_000,
            ),
            Answer::Parts(
                vec![
                    text("Now a failing command."),
                    call(
                        "run_shell_command",
                        json!({"command": "exit 3", "description": "fail"}),
                    ),
                ],
                1_100,
            ),
            Answer::Parts(
                vec![call(
                    "replace",
                    json!({"file_path": "a.txt", "old_string": "hello", "new_string": "bye",
                        "instruction": "change greeting"}),
                )],
                1_200,
            ),
            Answer::Parts(
                vec![call(
                    "write_file",
                    json!({"file_path": "b.txt", "content": "new file\n"}),
                )],
                1_300,
            ),
            Answer::Parts(
                vec![call("read_file", json!({"file_path": "missing.txt"}))],
                1_400,
            ),
            Answer::Parts(vec![call("grep_search", json!({"pattern": "bye"}))], 1_500),
            Answer::Parts(vec![text("All done.")], 1_600),
        ],
    );
    // Resumed after `main`: the API refuses the request (not retried).
    scripts.insert(
        "badrequest",
        vec![Answer::Error(
            400,
            "INVALID_ARGUMENT",
            "Request contains an invalid argument.",
        )],
    );
    // Resumed again: the API's rate limit, every attempt (the settings allow two).
    scripts.insert(
        "ratelimit",
        vec![Answer::Error(
            429,
            "RESOURCE_EXHAUSTED",
            "Resource has been exhausted (e.g. check quota).",
        )],
    );
    // A subagent: the main agent invokes the codebase investigator, which reads a file and
    // reports through `complete_task`.
    scripts.insert(
        "subagent",
        vec![
            Answer::Parts(
                vec![call(
                    "invoke_agent",
                    json!({"agent_name": "codebase_investigator",
                        "prompt": "FAMILIAR-SCRIPT subinner Look at a.txt and report."}),
                )],
                800,
            ),
            Answer::Parts(vec![text("The subagent reported.")], 850),
        ],
    );
    scripts.insert(
        "subinner",
        vec![
            Answer::Parts(
                vec![
                    thought("**Looking**\nReading a.txt."),
                    call("read_file", json!({"file_path": "a.txt"})),
                ],
                700,
            ),
            Answer::Parts(
                vec![call(
                    "complete_task",
                    json!({"report": {"SummaryOfFindings": "a.txt says bye",
                        "ExplorationTrace": ["read a.txt"], "RelevantLocations": []}}),
                )],
                750,
            ),
        ],
    );
    // A tool's answer, then the API refuses the next request.
    scripts.insert(
        "midturn",
        vec![
            Answer::Parts(vec![call("list_directory", json!({"dir_path": "."}))], 900),
            Answer::Error(
                400,
                "INVALID_ARGUMENT",
                "Request contains an invalid argument.",
            ),
        ],
    );
    scripts
}

/// Settings for a throwaway home: the API key auth (the mock is its base URL), no folder
/// trust prompt (it would turn `--yolo` off), nothing that reaches the internet (usage
/// statistics, telemetry, updates), two attempts per request (not ten: a rate limit fails in
/// seconds), and no session cleanup at start-up: 0.61.0's (on by
/// default) deletes a session file it finds with nothing to resume, and it scans while the
/// same run resumes a session, whose file then ends with a history of the session context
/// alone for a moment: one `--resume` run in five lost the whole session file here.
const SETTINGS: &str = r#"{
  "privacy": {"usageStatisticsEnabled": false},
  "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false,
    "sessionRetention": {"enabled": false}, "maxAttempts": 2},
  "telemetry": {"enabled": false},
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}
}
"#;

struct Partner {
    bin: PathBuf,
    home: PathBuf,
    project: PathBuf,
    url: String,
}

impl Partner {
    /// `gemini -p PROMPT --yolo -m MODEL` and `extra`, stdin from /dev/null; its output.
    fn run(&self, name: &str, prompt: &str, extra: &[&str]) -> String {
        let child = Command::new(&self.bin)
            .args(["-p", prompt, "--yolo", "-m", MODEL])
            .args(extra)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            // Its error reports (`gemini-client-error-*.json`) go to the test's directory.
            .env("TMPDIR", self.home.join("tmp"))
            .env("GEMINI_API_KEY", "familiar-test-dummy")
            .env("GOOGLE_GEMINI_BASE_URL", &self.url)
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start gemini");
        let output = common::wait_bounded(
            child,
            Duration::from_secs(180),
            &format!("{}: gemini", name),
        );
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }
}

/// Every session file under `<gemini dir>/tmp/*/chats/`, subagents' (`chats/<session>/`) too.
fn session_files(gemini_dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() && depth > 0 {
                walk(&path, depth - 1, out);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    let projects = fs::read_dir(gemini_dir.join("tmp"));
    for project in projects.into_iter().flatten().flatten() {
        walk(&project.path().join("chats"), 1, &mut out);
    }
    out.sort();
    out
}

/// The version of the CLI that runs, checked against the pin unless overridden. Asked with
/// `home` as HOME: even `--version` writes to the CLI's dir (`projects.json`).
fn version(bin: &Path, home: &Path) -> String {
    let version = version_of(bin, home);
    if std::env::var_os(CURRENT.override_var).is_none() {
        assert_eq!(
            version, CURRENT.pinned,
            "tests/agents/{} is not at the pinned version",
            CURRENT.dir
        );
    }
    version
}

/// The version `bin` says it is.
fn version_of(bin: &Path, home: &Path) -> String {
    let output = Command::new(bin)
        .arg("--version")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .stdin(Stdio::null())
        .output()
        .expect("gemini --version");
    String::from_utf8_lossy(&output.stdout).trim().to_owned()
}

#[test]
fn the_real_gemini_cli_writes_the_sessions_familiar_reads() {
    let bin = CURRENT.bin();
    let tmp = tempfile::tempdir().expect("temp dir");
    let version = version(&bin, &tmp.path().join("version-home"));
    let home = tmp.path().join("home");
    let gemini_dir = home.join(".gemini");
    let project = tmp.path().join("project");
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
    // The project's sessions, live: with HOME at `home`, Gemini CLI's dir is `home/.gemini`.
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
    let midturn = partner.run("midturn", "FAMILIAR-SCRIPT midturn", &[]);
    let subagent = partner.run("subagent", "FAMILIAR-SCRIPT subagent", &[]);

    // Name each session file after its first script.
    let mut files: BTreeMap<&str, PathBuf> = BTreeMap::new();
    for path in session_files(&gemini_dir) {
        let text = fs::read_to_string(&path).expect("session file");
        for name in ["main", "midturn", "subagent"] {
            if text.contains(&format!("FAMILIAR-SCRIPT {name}\"")) {
                files.insert(name, path.clone());
            }
        }
        if text.contains("\"kind\":\"subagent\"") {
            files.insert("subagent-investigator", path.clone());
        }
    }
    // Saved before any check, so a failing run can be looked at.
    if let Some(out) = common::save_dir(&format!("gemini-{version}")) {
        let tmp_path = tmp.path().to_str().expect("UTF-8 temp dir");
        for (name, path) in &files {
            // The temporary directory changes on every run: it becomes /tmp/familiar-gemini.
            let text = fs::read_to_string(path).expect("session file");
            fs::write(
                out.join(format!("{name}.jsonl")),
                text.replace(tmp_path, "/tmp/familiar-gemini"),
            )
            .expect("write fixture");
        }
        let projects = fs::read_to_string(gemini_dir.join("projects.json")).expect("projects");
        fs::write(
            out.join("projects.json"),
            projects.replace(tmp_path, "/tmp/familiar-gemini"),
        )
        .expect("write projects.json");
    }
    assert_eq!(
        files.keys().copied().collect::<Vec<_>>(),
        ["main", "midturn", "subagent", "subagent-investigator"],
        "one session file each (the resumed run appends to main's), the subagent's its own; the \
         CLI printed:\n{main}\n{badrequest}\n{midturn}\n{subagent}"
    );
    assert!(
        mock.requests.load(std::sync::atomic::Ordering::SeqCst) >= 10,
        "the CLI did not talk to the mock"
    );
    assert!(
        badrequest.contains("INVALID_ARGUMENT")
            && midturn.contains("INVALID_ARGUMENT")
            && ratelimit.contains("429"),
        "the API errors reached the CLI:\n{badrequest}\n{ratelimit}\n{midturn}"
    );
    assert_eq!(
        fs::read_to_string(project.join("a.txt")).expect("a.txt"),
        "bye\n"
    );
    assert_eq!(
        fs::read_to_string(project.join("b.txt")).expect("b.txt"),
        "new file\n"
    );
    checks::check_records(&files, &project, &gemini_dir, &mock);

    // Live: everything the watcher printed, up to the sentinel. The last run's reply holds its
    // `success` until the file has been quiet for the quiet-turn time (5 s): the CLI may still
    // write it again with tool calls.
    std::thread::sleep(Duration::from_secs(6));
    let claude_dir = encoded_project_dir(&home, &project);
    fs::create_dir_all(&claude_dir).expect("claude project dir");
    append(
        &claude_dir.join("zz-sentinel.jsonl"),
        sentinel("real-gemini-end").as_bytes(),
    );
    let live_lines = watch.events_until("real-gemini-end");
    watch.interrupt();
    let offline: BTreeMap<&str, Vec<Value>> = files
        .iter()
        .map(|(name, path)| (*name, common::facts::events(path)))
        .collect();
    checks::check_events(&offline);
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
