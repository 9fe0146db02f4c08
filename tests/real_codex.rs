//! The real OpenAI Codex CLI as a test partner: the pinned npm package in `tests/agents/codex/`
//! (`npm ci --prefix tests/agents/codex`) runs scripted `codex exec` sessions against the mock
//! Responses API in `tests/real_codex/mock.rs`, while `familiar watch --headless --events`
//! follows the project (the rollouts matched by their `session_meta.cwd`). Checked: every
//! scripted fact in the rollouts the CLI wrote, as records and through `familiar events`, and
//! live equal to offline.
//!
//! `FAMILIAR_CODEX_BIN=/path/to/codex` runs it against another CLI (the newest:
//! `npm install --prefix /tmp/cx @openai/codex@latest`, then
//! `FAMILIAR_CODEX_BIN=/tmp/cx/node_modules/.bin/codex cargo test --test real_codex`).
//! `FAMILIAR_UPDATE_FIXTURES=1` copies the rollouts to `fixtures/codex-<version>/`, where the
//! normalizer's snapshot tests read them (`crates/familiar-transcript/tests/codex_cli.rs`).

#[path = "real_codex/checks.rs"]
mod checks;
mod common;
#[path = "real_codex/mock.rs"]
mod mock;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use checks::{check_commands, check_events, check_records};
use common::Generation;
use common::facts::events;
use common::watch::{Watch, append, encoded_project_dir, sentinel, without_status};
use mock::{Answer, Mock, custom_tool_call, function_call, reasoning, text};
use serde_json::{Value, json};

/// Today's CLI (`tests/agents/codex`).
const CURRENT: Generation = Generation {
    dir: "codex",
    command: "codex",
    pinned: "0.171.0",
    override_var: "FAMILIAR_CODEX_BIN",
};

/// The one before (`tests/agents/codex-0.169.0`): the same record types, the window only
/// from `token_count` until 0.171 (the facts checked hold for both).
const PREVIOUS: Generation = Generation {
    dir: "codex-0.169.0",
    command: "codex",
    pinned: "0.169.0",
    override_var: "FAMILIAR_CODEX_PREVIOUS_BIN",
};

/// Past this many tokens Codex compacts (`model_auto_compact_token_limit`).
const COMPACT_LIMIT: u64 = 5_000;
/// The window the `servererror` run configures (`-c model_context_window=…`).
const SERVER_ERROR_WINDOW: u64 = 128_000;
/// The patch the script applies: one file updated, one added.
const PATCH: &str = "*** Begin Patch\n*** Update File: a.txt\n@@\n-hello\n+bye\n*** Add File: b.txt\n+new file\n*** End Patch\n";

fn scripts() -> HashMap<&'static str, Vec<Answer>> {
    let mut scripts = HashMap::new();
    scripts.insert(
        "main",
        vec![
            Answer::Items(
                vec![
                    reasoning("rs_1", "I should read the file first."),
                    function_call("call_read", "exec_command", json!({"cmd": "cat a.txt"})),
                ],
                1_200,
            ),
            Answer::Items(
                vec![
                    text("msg_2", "Now a command that fails."),
                    function_call("call_fail", "exec_command", json!({"cmd": "exit 3"})),
                ],
                1_400,
            ),
            Answer::Items(
                vec![function_call("call_unknown", "not_a_tool", json!({}))],
                1_500,
            ),
            // Past the compaction limit: Codex compacts before its next request.
            Answer::Items(
                vec![custom_tool_call("call_patch", "apply_patch", PATCH)],
                9_000,
            ),
            Answer::Items(vec![text("msg_5", "All done.")], 1_600),
        ],
    );
    scripts.insert(
        "after",
        vec![Answer::Items(vec![text("msg_after", "Back again.")], 900)],
    );
    scripts.insert(
        "ratelimit",
        vec![Answer::Error(
            429,
            "rate_limit_exceeded",
            "Rate limit reached for gpt-5.5 on tokens per min (TPM). Please try again in 20s.",
        )],
    );
    scripts.insert(
        "servererror",
        vec![Answer::Error(
            500,
            "server_error",
            "The server had an error while processing your request. Sorry about that!",
        )],
    );
    // Codex writes the body's JSON as the turn's error message for a 400.
    scripts.insert(
        "badrequest",
        vec![Answer::Error(
            400,
            "invalid_request_error",
            "Invalid value for 'input': expected a list.",
        )],
    );
    scripts.insert(
        "unavailable",
        vec![Answer::Error(
            503,
            "server_error",
            "The engine is currently overloaded, please try again later.",
        )],
    );
    scripts
}

struct Partner {
    bin: PathBuf,
    home: PathBuf,
    codex_home: PathBuf,
    project: PathBuf,
}

impl Partner {
    /// `codex exec` with `args` and stdin from /dev/null; returns its stdout and stderr.
    fn exec(&self, name: &str, args: &[&str]) -> String {
        let child = Command::new(&self.bin)
            .arg("exec")
            .args([
                "--skip-git-repo-check",
                "--dangerously-bypass-approvals-and-sandbox",
            ])
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("CODEX_HOME", &self.codex_home)
            .env("OPENAI_API_KEY", "sk-familiar-test-dummy")
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start codex");
        let output =
            common::wait_bounded(child, Duration::from_secs(180), &format!("{}: codex", name));
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }
}

/// A throwaway config: the mock as a Responses provider, compaction early, and nothing that
/// reaches the internet (plugins, remote plugins, apps, analytics, OpenTelemetry, updates).
fn config(url: &str) -> String {
    format!(
        r#"model = "gpt-5.5"
model_provider = "mock"
model_auto_compact_token_limit = {COMPACT_LIMIT}
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{url}"
wire_api = "responses"
env_key = "OPENAI_API_KEY"
request_max_retries = 1
stream_max_retries = 1

[features]
plugins = false
remote_plugin = false
apps = false

[analytics]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"
"#
    )
}

/// Every rollout under `sessions/`.
fn rollouts(codex_home: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|ext| ext == "jsonl") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&codex_home.join("sessions"), &mut out);
    out.sort();
    out
}

fn records(path: &Path) -> Vec<Value> {
    fs::read_to_string(path)
        .expect("read rollout")
        .lines()
        .map(|line| serde_json::from_str(line).expect("rollout line is JSON"))
        .collect()
}

/// The `session id: …` line `codex exec` prints.
fn session_id(output: &str) -> String {
    output
        .lines()
        .find_map(|line| line.strip_prefix("session id: "))
        .unwrap_or_else(|| panic!("no session id in:\n{output}"))
        .trim()
        .to_owned()
}

#[test]
fn the_real_codex_cli_writes_the_rollouts_familiar_reads() {
    drive(CURRENT);
}

#[test]
fn the_previous_codex_cli_writes_the_rollouts_familiar_reads() {
    drive(PREVIOUS);
}

/// The scripted runs of one generation beside `familiar watch`, then every fact.
fn drive(generation: Generation) {
    let bin = generation.bin();
    let version = generation.version();

    let tmp = tempfile::tempdir().expect("temp dir");
    let home = tmp.path().join("home");
    let codex_home = home.join(".codex");
    let project = tmp.path().join("project");
    for dir in [&codex_home, &project] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    // A git repository with a branch, for the session's `git` record.
    let git = |args: &[&str]| {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=familiar",
                "-c",
                "user.email=familiar@localhost",
            ])
            .args(args)
            .current_dir(&project)
            .env("HOME", &home)
            .stdout(Stdio::null())
            .status()
            .expect("run git");
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    git(&["commit", "-q", "--allow-empty", "-m", "init"]);
    let mock = Mock::start(scripts());
    fs::write(codex_home.join("config.toml"), config(&mock.url)).expect("config.toml");
    let partner = Partner {
        bin,
        home: home.clone(),
        codex_home: codex_home.clone(),
        project: project.clone(),
    };
    // The project's sessions, live: with HOME at `home`, Codex's home is `home/.codex`. The
    // session `zz-sentinel` is a Claude Code file that says when to stop reading.
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

    let main = partner.exec("main", &["FAMILIAR-SCRIPT main"]);
    let id = session_id(&main);
    let after = partner.exec("after", &["resume", &id, "FAMILIAR-SCRIPT after"]);
    let ratelimit = partner.exec("ratelimit", &["FAMILIAR-SCRIPT ratelimit"]);
    // A 5xx that outlives its retry, with a configured window: the turn fails before any
    // `token_count`, so only `task_started` says the window.
    let window = format!("model_context_window={SERVER_ERROR_WINDOW}");
    let servererror = partner.exec(
        "servererror",
        &["-c", &window, "FAMILIAR-SCRIPT servererror"],
    );

    let badrequest = partner.exec("badrequest", &["FAMILIAR-SCRIPT badrequest"]);
    let unavailable = partner.exec("unavailable", &["FAMILIAR-SCRIPT unavailable"]);

    // Name each rollout after its script.
    let files: BTreeMap<&str, PathBuf> = [
        ("main", &id),
        ("ratelimit", &session_id(&ratelimit)),
        ("servererror", &session_id(&servererror)),
        ("badrequest", &session_id(&badrequest)),
        ("unavailable", &session_id(&unavailable)),
    ]
    .into_iter()
    .map(|(name, id)| {
        let path = rollouts(&codex_home)
            .into_iter()
            .find(|path| path.to_string_lossy().ends_with(&format!("{id}.jsonl")))
            .unwrap_or_else(|| panic!("{name}: no rollout for session {id}"));
        (name, path)
    })
    .collect();
    for path in files.values() {
        let relative = path
            .strip_prefix(codex_home.join("sessions"))
            .expect("under sessions");
        // sessions/YYYY/MM/DD/rollout-<timestamp>-<uuid>.jsonl
        assert_eq!(relative.components().count(), 4, "{}", relative.display());
    }

    // Saved before any check, so a failing run can be looked at.
    if let Some(out) = common::save_dir(&format!("codex-{version}")) {
        for (name, path) in &files {
            // The temporary directory changes on every run: it becomes /tmp/familiar-codex.
            let text = fs::read_to_string(path).expect("rollout");
            let tmp_path = tmp.path().to_str().expect("UTF-8 temp dir");
            fs::write(
                out.join(format!("{name}.jsonl")),
                text.replace(tmp_path, "/tmp/familiar-codex"),
            )
            .expect("write fixture");
        }
    }

    assert_eq!(session_id(&after), id, "resume continues the session");
    assert!(
        mock.requests.load(std::sync::atomic::Ordering::SeqCst) >= 8,
        "the CLI did not talk to the mock"
    );
    assert!(
        mock.compactions.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "the CLI did not compact; it printed:\n{main}"
    );
    assert_eq!(
        fs::read_to_string(project.join("a.txt")).expect("a.txt"),
        "bye\n"
    );
    let written: BTreeMap<&str, Vec<Value>> = files
        .iter()
        .map(|(name, path)| (*name, records(path)))
        .collect();
    check_records(&written, &project);

    // Live: everything the watcher printed, up to the sentinel (both agents are followed).
    let claude_dir = encoded_project_dir(&home, &project);
    fs::create_dir_all(&claude_dir).expect("claude project dir");
    append(
        &claude_dir.join("zz-sentinel.jsonl"),
        sentinel("real-codex-end").as_bytes(),
    );
    let live_lines = watch.events_until("real-codex-end");
    watch.interrupt();
    let first_live: Value = live_lines
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|event| event["session"] == id.as_str() && event["kind"] != "snapshot")
        .expect("a live event of the main session");
    assert_eq!(first_live["cwd"], project.to_string_lossy().as_ref());
    assert_eq!(first_live["git_branch"], "main");

    let offline: BTreeMap<&str, Vec<Value>> = files
        .iter()
        .map(|(name, path)| (*name, events(path)))
        .collect();
    check_events(&offline);

    // Live equals offline, file by file (`status` events left out on both sides: live ones
    // also come from timers).
    let live: Vec<Value> = without_status(live_lines)
        .iter()
        .map(|line| serde_json::from_str(line).expect("live event JSON"))
        .collect();
    for (name, want) in &offline {
        let got: Vec<&Value> = live
            .iter()
            .filter(|event| event["session"] == want[0]["session"])
            .collect();
        let want: Vec<&Value> = want.iter().filter(|e| e["kind"] != "status").collect();
        assert_eq!(got, want, "{name}: live differs from offline");
    }

    check_commands(&home, &project, &files);
}
