//! The real GitHub Copilot CLI as a test partner: the pinned npm package in
//! `tests/agents/copilot/` runs scripted `copilot -p` sessions against the mock
//! OpenAI-compatible API of `tests/real_qwen/mock.rs`, through the CLI's own bring-your-own-key
//! provider (`COPILOT_OFFLINE=true`, `COPILOT_PROVIDER_BASE_URL`: no GitHub login, nothing
//! leaves the machine), while `familiar watch --headless --events` follows the project (the
//! sessions placed by their `session.start`'s `cwd`). Checked: every scripted fact through
//! `familiar events`, live equal to offline, and `sessions`, `stats` (tokens equal to what the
//! mock sent) and `doctor` on them. `real_copilot/interactive.rs` runs the CLI's interactive
//! session in a pseudo-terminal with `familiar statusline` as its status line.
//!
//! `FAMILIAR_COPILOT_BIN=/path/to/copilot` runs it against another CLI (the newest:
//! `npm install --prefix /tmp/cop @github/copilot@latest`, then
//! `FAMILIAR_COPILOT_BIN=/tmp/cop/node_modules/.bin/copilot cargo test --test real_copilot`).
//! `FAMILIAR_UPDATE_FIXTURES=1` copies the session files to `fixtures/copilot-<version>/` as
//! `real-<run>.jsonl` (the reader's unit tests read the hand-run files beside them).

mod common;
#[path = "real_copilot/interactive.rs"]
mod interactive;
#[path = "real_qwen/mock.rs"]
#[allow(dead_code)]
mod mock;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::facts::{events, of_kind};
use common::watch::{Watch, append, encoded_project_dir, sentinel, without_status};
use mock::{Answer, Mock, Usage, call, say};
use serde_json::{Value, json};

const DIR: &str = "copilot";
const PINNED: &str = "1.0.102";
const OVERRIDE: &str = "FAMILIAR_COPILOT_BIN";
/// The model the runs ask for (`COPILOT_MODEL`); the CLI's prompt limit for it, unknown to
/// its catalog offline, is 64,000 tokens (`maxPromptTokens`).
const MODEL: &str = "gpt-4.1";

fn scripts(project: &Path) -> HashMap<&'static str, Vec<Answer>> {
    let at = |name: &str| project.join(name).to_string_lossy().into_owned();
    let mut scripts = HashMap::new();
    scripts.insert(
        "main",
        vec![
            call("view", json!({"path": at("a.txt")}), 1_000),
            call(
                "bash",
                json!({"command": "exit 3", "description": "fail on purpose"}),
                1_100,
            ),
            call(
                "edit",
                json!({"path": at("a.txt"), "old_str": "hello", "new_str": "bye"}),
                1_200,
            ),
            call(
                "create",
                json!({"path": at("b.txt"), "file_text": "new file\n"}),
                1_300,
            ),
            call("view", json!({"path": at("missing.txt")}), 1_400),
            call("grep", json!({"pattern": "bye"}), 1_500),
            call("glob", json!({"pattern": "*.txt"}), 1_600),
            call(
                "task",
                json!({"description": "look at a.txt", "agent_type": "explore",
                    "name": "reader", "prompt": "FAMILIAR-SCRIPT subinner Look at a.txt."}),
                1_700,
            ),
            say("All done.", 1_800),
        ],
    );
    // The `explore` subagent `task` starts (it runs in the parent's session file).
    scripts.insert(
        "subinner",
        vec![
            call("view", json!({"path": at("a.txt")}), 700),
            say("a.txt says bye", 750),
        ],
    );
    // A compaction: a request at 94% of the prompt limit (64,000) starts one in the
    // background (its summary request answered by the mock as a `Summary`, whatever the
    // step); the shell command's 3 s let it end before the session does.
    scripts.insert(
        "compact",
        vec![
            call("view", json!({"path": at("a.txt")}), 60_000),
            call(
                "bash",
                json!({"command": "sleep 3", "description": "wait"}),
                20_000,
            ),
            say("Done after the compaction.", 21_000),
        ],
    );
    // Every attempt answered 500: the CLI retries 5 times, then gives up.
    scripts.insert("apierror", vec![Answer::Error(500, "mock error")]);
    // Without --allow-all-tools: a shell command that writes a file asks a permission, which
    // `-p` cannot ask anyone: refused.
    scripts.insert(
        "permission",
        vec![
            call(
                "bash",
                json!({"command": "echo hi > c.txt", "description": "write c.txt"}),
                900,
            ),
            say("Could not.", 950),
        ],
    );
    scripts
}

struct Partner {
    bin: PathBuf,
    home: PathBuf,
    project: PathBuf,
    url: String,
}

impl Partner {
    fn command(&self) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", self.home.join("tmp"))
            .env("COPILOT_OFFLINE", "true")
            .env("COPILOT_AUTO_UPDATE", "false")
            .env("COPILOT_PROVIDER_BASE_URL", &self.url)
            .env("COPILOT_PROVIDER_API_KEY", "familiar-test-dummy")
            .env("COPILOT_MODEL", MODEL)
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// `copilot -p PROMPT` and `extra`; its output.
    fn run(&self, name: &str, prompt: &str, extra: &[&str]) -> String {
        let mut child = self
            .command()
            .args(["-p", prompt])
            .args(extra)
            .spawn()
            .expect("start copilot");
        common::wait_within(&mut child, Duration::from_secs(180), name);
        let output = child.wait_with_output().expect("copilot output");
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    /// The version of the CLI (`GitHub Copilot CLI 1.0.102.`), checked against the pin unless
    /// overridden.
    fn version(&self) -> String {
        let mut child = self.command().arg("--version").spawn().expect("--version");
        common::wait_within(&mut child, Duration::from_secs(60), "copilot --version");
        let output = child.wait_with_output().expect("--version output");
        let version = String::from_utf8_lossy(&output.stdout)
            .split_whitespace()
            .find(|word| word.starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or("")
            .trim_end_matches('.')
            .to_owned();
        if std::env::var_os(OVERRIDE).is_none() {
            assert_eq!(
                version, PINNED,
                "tests/agents/{DIR} is not at the pinned version"
            );
        }
        version
    }
}

/// Every session's `events.jsonl` under `<copilot dir>/session-state/`, named by the script
/// its prompt names.
fn session_files(copilot_dir: &Path) -> BTreeMap<&'static str, PathBuf> {
    let mut files = BTreeMap::new();
    let state = fs::read_dir(copilot_dir.join("session-state"));
    for entry in state.into_iter().flatten().flatten() {
        let path = entry.path().join("events.jsonl");
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        for name in ["main", "apierror", "permission", "compact"] {
            if text.contains(&format!("FAMILIAR-SCRIPT {name}\"")) {
                files.insert(name, path.clone());
            }
        }
    }
    files
}

/// `(kind, tool, target)` of the events that name a tool (errors and subagents included).
fn tool_events(events: &[Value]) -> Vec<(String, String, String)> {
    events
        .iter()
        .filter(|e| !e["tool"].is_null())
        .map(|e| {
            let field = |key: &str| e[key].as_str().unwrap_or("").to_owned();
            (field("kind"), field("tool"), field("target"))
        })
        .collect()
}

#[test]
fn the_real_copilot_cli_writes_the_sessions_familiar_reads() {
    let bin = common::agent_cli(DIR, "copilot", OVERRIDE);
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let home = root.join("home");
    let project = root.join("project");
    for dir in [&home, &project, &home.join("tmp")] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    let mock = Mock::start(scripts(&project));
    let partner = Partner {
        bin,
        home: home.clone(),
        project: project.clone(),
        url: mock.url.clone(),
    };
    let version = partner.version();
    // The project's sessions, live: with HOME at `home`, Copilot CLI's dir is `home/.copilot`.
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

    let all_tools = ["--allow-all-tools"];
    let main = partner.run("main", "Work on a.txt. FAMILIAR-SCRIPT main", &all_tools);
    let apierror = partner.run("apierror", "FAMILIAR-SCRIPT apierror", &all_tools);
    let permission = partner.run("permission", "FAMILIAR-SCRIPT permission", &[]);
    let compact = partner.run("compact", "FAMILIAR-SCRIPT compact", &all_tools);
    let files = session_files(&home.join(".copilot"));
    // Saved before any check, so a failing run can be looked at (the temporary directory
    // becomes /tmp/familiar-copilot, the mock's address a closed port).
    if let Some(out) = common::save_dir(&format!("copilot-{version}")) {
        let tmp_path = root.to_str().expect("UTF-8 temp dir");
        for (name, path) in &files {
            let text = fs::read_to_string(path).expect("session file");
            fs::write(
                out.join(format!("real-{name}.jsonl")),
                text.replace(tmp_path, "/tmp/familiar-copilot")
                    .replace(&mock.url, "http://127.0.0.1:9/v1"),
            )
            .expect("write fixture");
        }
    }
    assert_eq!(
        files.keys().copied().collect::<Vec<_>>(),
        ["apierror", "compact", "main", "permission"],
        "one session file per run ({version}); the CLI printed:\n{main}\n{apierror}\n{permission}\n{compact}"
    );
    assert!(apierror.contains("500"), "{apierror}");
    assert_eq!(
        fs::read_to_string(project.join("a.txt")).expect("a.txt"),
        "bye\n"
    );
    assert!(!project.join("c.txt").exists(), "the refused command ran");

    // Offline: what `familiar events` reads from each file.
    let offline: BTreeMap<&str, Vec<Value>> = files
        .iter()
        .map(|(name, path)| (*name, events(path)))
        .collect();
    for (name, events) in &offline {
        assert!(
            events.iter().all(|e| e["agent_kind"] == "copilot"),
            "{name}"
        );
    }
    let main_events = &offline["main"];
    let at = |name: &str| project.join(name).to_string_lossy().into_owned();
    let row = |kind: &str, tool: &str, target: &str| {
        (kind.to_owned(), tool.to_owned(), target.to_owned())
    };
    assert_eq!(
        tool_events(main_events),
        vec![
            row("reading", "view", &at("a.txt")),
            row("bash", "bash", "exit 3"),
            row("error", "bash", "exit 3"),
            row("writing", "edit", &at("a.txt")),
            row("writing", "create", &at("b.txt")),
            row("reading", "view", &at("missing.txt")),
            row("error", "view", &at("missing.txt")),
            row("reading", "grep", "bye"),
            row("reading", "glob", "*.txt"),
            row("subagent_start", "task", "explore"),
            row("reading", "view", &at("a.txt")),
            row("subagent_end", "task", "explore"),
        ]
    );
    let prompts = of_kind(main_events, "prompt");
    assert_eq!(prompts.len(), 1);
    assert_eq!(prompts[0]["text"], "Work on a.txt. FAMILIAR-SCRIPT main");
    let inner: Vec<&Value> = main_events
        .iter()
        .filter(|e| !e["agent"].is_null())
        .collect();
    assert!(inner.iter().all(|e| e["sidechain"] == true), "{inner:?}");
    assert!(
        inner.iter().any(|e| e["text"] == "a.txt says bye"),
        "{inner:?}"
    );
    let success = of_kind(main_events, "success");
    assert_eq!(success.len(), 1, "{main_events:?}");
    // The context: the main agent's last request (1,800 prompt, 20 out) of the CLI's 64,000.
    assert_eq!(success[0]["context_used"], 1_820);
    assert_eq!(success[0]["context_limit"], 64_000);
    let api = of_kind(&offline["apierror"], "error");
    assert_eq!(api.len(), 1, "{:?}", offline["apierror"]);
    assert_eq!(api[0]["error"], "api");
    assert_eq!(api[0]["message"], "Copilot CLI: the API answered 500");
    let asked = &offline["permission"];
    assert!(
        asked
            .iter()
            .any(|e| e["kind"] == "status" && e["status"] == "waiting_for_approval"),
        "{asked:?}"
    );
    let compactions = of_kind(&offline["compact"], "compact_boundary");
    assert_eq!(compactions.len(), 1, "{:?}", offline["compact"]);
    assert_eq!(compactions[0]["trigger"], "auto");
    assert!(compactions[0]["post_tokens"].as_u64().is_some());
    let denied = of_kind(asked, "error");
    assert_eq!(denied.len(), 1, "{asked:?}");
    assert_eq!(denied[0]["error"], "denied");

    // Live: everything the watcher printed, up to the sentinel, equals offline, file by file
    // (`status` events left out on both sides: live ones also come from timers).
    let claude_dir = encoded_project_dir(&home, &project);
    fs::create_dir_all(&claude_dir).expect("claude project dir");
    append(
        &claude_dir.join("zz-sentinel.jsonl"),
        sentinel("real-copilot-end").as_bytes(),
    );
    let live_lines = watch.events_until("real-copilot-end");
    watch.interrupt();
    let live: Vec<Value> = without_status(live_lines)
        .iter()
        .map(|line| serde_json::from_str(line).expect("live event JSON"))
        .collect();
    for (name, want) in &offline {
        let want: Vec<&Value> = want.iter().filter(|e| e["kind"] != "status").collect();
        let got: Vec<&Value> = live
            .iter()
            .filter(|e| e["session"] == want[0]["session"])
            .collect();
        assert_eq!(got, want, "{name}: live differs from offline");
    }

    check_commands(&home, &project, &files, &mock);
}

fn check_commands(home: &Path, project: &Path, files: &BTreeMap<&str, PathBuf>, mock: &Mock) {
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
            .env_remove("COPILOT_HOME")
            .env_remove("FAMILIAR_CONFIG")
            .env("NO_COLOR", "1")
            .current_dir(project)
            .stdin(Stdio::null())
            .output()
            .expect("run familiar");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let sessions: Vec<Value> =
        serde_json::from_str(&familiar(&["sessions", "--json", "--agent", "copilot"]))
            .expect("sessions JSON");
    assert_eq!(sessions.len(), 4, "{sessions:?}");
    for session in &sessions {
        assert_eq!(session["agent_kind"], "copilot");
        assert_eq!(session["cwd"], project.to_string_lossy().as_ref());
        assert_eq!(session["status"], "waiting_for_input", "{session}");
    }
    let main_id = events(&files["main"])[0]["session"].clone();
    let main = sessions
        .iter()
        .find(|session| session["session"] == main_id)
        .expect("the main session is listed");
    assert_eq!(main["context_used"], 1_820);
    assert_eq!(main["context_limit"], 64_000);

    // `familiar stats` in the project: Copilot CLI's tokens as the mock sent them (the
    // subagent's requests are in its parent's file).
    let rows: Vec<Value> = familiar(&["stats", "--json"])
        .lines()
        .map(|line| serde_json::from_str(line).expect("stats JSON line"))
        .collect();
    // A compaction's summary request is in its file too (`compactionTokensUsed`).
    for (name, scripts) in [
        ("main", &["main", "subinner"][..]),
        ("permission", &["permission"]),
        ("compact", &["compact", "compaction"]),
    ] {
        let file = files[name].to_string_lossy();
        let row = rows
            .iter()
            .find(|row| row["file"] == file.as_ref())
            .unwrap_or_else(|| panic!("{name}: no stats row in {rows:?}"));
        let sent: Vec<Usage> = scripts.iter().flat_map(|s| mock.sent_for(s)).collect();
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

    let doctor = familiar(&["doctor"]);
    let line = doctor
        .lines()
        .find(|line| line.starts_with("[ok] Copilot dir: "))
        .unwrap_or_else(|| panic!("no Copilot dir line in {doctor}"));
    assert!(line.ends_with(", 4 session(s)"), "{doctor}");
}
