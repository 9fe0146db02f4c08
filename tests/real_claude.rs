//! The real Claude Code CLI as a test partner: the pinned npm package in `tests/agents/claude/`
//! (`npm ci --prefix tests/agents/claude`) runs scripted sessions against the mock Messages API
//! in `tests/real_claude/mock.rs`, while `familiar watch --headless --events` follows its config
//! dir live. Checked: every scripted fact in the transcripts the CLI wrote (through
//! `familiar events`), and live equal to offline. `real_claude/interactive.rs` runs the same
//! script in an interactive session in a pseudo-terminal, with the hooks installed.
//!
//! `FAMILIAR_CLAUDE_BIN=/path/to/claude` runs it against another CLI (the newest:
//! `npm install --prefix /tmp/cc @anthropic-ai/claude-code@latest`, then
//! `FAMILIAR_CLAUDE_BIN=/tmp/cc/node_modules/.bin/claude cargo test --test real_claude`).
//! `FAMILIAR_UPDATE_FIXTURES=1` copies what the CLI wrote to `fixtures/claude-<version>/`, where
//! the normalizer's snapshot tests read it (`crates/familiar-transcript/tests/claude_cli.rs`).
//! `FAMILIAR_RECORD=DIR` keeps what the interactive session's hooks and status line were given
//! in `DIR` (see `real_claude/recorder.rs`; `fixtures/hooks/` and `fixtures/statusline/` hold
//! samples picked from such recordings).

#[path = "real_claude/checks.rs"]
mod checks;
mod common;
#[path = "real_claude/interactive.rs"]
mod interactive;
#[path = "real_claude/mock.rs"]
mod mock;
#[path = "real_claude/recorder.rs"]
mod recorder;

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::Generation;
use common::watch::{Watch, append, familiar_events, sentinel, without_status};
use mock::{Answer, Mock, text, thinking, tool};
use serde_json::{Value, json};

/// Today's CLI (`tests/agents/claude`): auto mode, background agents, retry notices in the
/// transcript, `api-request` records.
const CURRENT: Generation = Generation {
    dir: "claude",
    command: "claude",
    pinned: "2.1.332",
    override_var: "FAMILIAR_CLAUDE_BIN",
};

/// The generation before (`tests/agents/claude-2.1.197`).
const PREVIOUS: Generation = Generation {
    dir: "claude-2.1.197",
    command: "claude",
    pinned: "2.1.197",
    override_var: "FAMILIAR_CLAUDE_PREVIOUS_BIN",
};

fn message(blocks: Vec<Value>, stop: &'static str, usage: (u64, u64, u64)) -> Answer {
    Answer::Message {
        blocks,
        stop,
        usage,
    }
}

fn call(name: &str, input: Value, cache_read: u64) -> Answer {
    message(vec![tool(name, input)], "tool_use", (10, cache_read, 200))
}

fn scripts(project: &Path) -> HashMap<&'static str, Vec<Answer>> {
    let a = project.join("a.txt").display().to_string();
    let b = project.join("b.txt").display().to_string();
    let mut scripts = HashMap::new();
    scripts.insert(
        "main",
        vec![
            message(
                vec![
                    thinking("I should read the file first."),
                    text("Reading a.txt."),
                    tool("Read", json!({"file_path": a})),
                ],
                "tool_use",
                (1_200, 0, 3_000),
            ),
            call(
                "Bash",
                json!({"command": "exit 3", "description": "Fail on purpose"}),
                4_200,
            ),
            call(
                "Edit",
                json!({"file_path": a, "old_string": "hello", "new_string": "bye"}),
                4_400,
            ),
            call(
                "Write",
                json!({"file_path": b, "content": "new file\n"}),
                4_600,
            ),
            call(
                "TaskCreate",
                json!({"subject": "Ship the fix", "description": "Make the scripted change",
                    "activeForm": "Shipping the fix"}),
                4_800,
            ),
            call(
                "TaskUpdate",
                json!({"taskId": "1", "status": "completed"}),
                5_000,
            ),
            call(
                "Agent",
                json!({"description": "Look around", "prompt": "FAMILIAR-SCRIPT sub: read a.txt",
                    "subagent_type": "general-purpose"}),
                5_200,
            ),
            // Past 200k tokens: the window is larger than the default.
            message(vec![text("All done.")], "end_turn", (10, 250_000, 300)),
        ],
    );
    scripts.insert(
        "sub",
        vec![
            call("Read", json!({"file_path": a}), 2_000),
            message(
                vec![text("The file says bye.")],
                "end_turn",
                (10, 2_900, 100),
            ),
        ],
    );
    scripts.insert(
        "after",
        vec![message(
            vec![text("Back again.")],
            "end_turn",
            (10, 900, 50),
        )],
    );
    scripts.insert("ratelimit", vec![Answer::Error(429, "rate_limit_error")]);
    scripts.insert("overload", vec![Answer::Error(529, "overloaded_error")]);
    scripts.insert(
        "todo",
        vec![
            call(
                "TodoWrite",
                json!({"todos": [{"content": "Ship the fix", "status": "in_progress",
                    "activeForm": "Shipping the fix"}]}),
                1_000,
            ),
            message(vec![text("Planned.")], "end_turn", (10, 1_200, 50)),
        ],
    );
    scripts.insert(
        "denied",
        vec![
            call("Read", json!({"file_path": "/etc/hostname"}), 1_000),
            call(
                "Bash",
                json!({"command": "echo x > /etc/familiar-denied", "description": "Write outside"}),
                1_100,
            ),
            message(vec![text("Denied.")], "end_turn", (10, 1_200, 50)),
        ],
    );
    scripts
}

/// One scripted CLI run.
struct Run<'a> {
    name: &'static str,
    args: Vec<String>,
    env: Vec<(&'a str, &'a str)>,
    bypass: bool,
}

struct Partner {
    bin: PathBuf,
    home: PathBuf,
    config: PathBuf,
    project: PathBuf,
    url: String,
    streams: PathBuf,
}

impl Partner {
    /// Run the CLI in `-p` mode with stream-json output; returns the stream's records.
    fn run(&self, run: &Run<'_>) -> Vec<Value> {
        let mut command = Command::new(&self.bin);
        command
            .args(&run.args)
            .args(["--output-format", "stream-json", "--verbose"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("CLAUDE_CONFIG_DIR", &self.config)
            .env("ANTHROPIC_BASE_URL", &self.url)
            .env("ANTHROPIC_API_KEY", "sk-ant-familiar-test-dummy")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            // Retries until they run out, quickly.
            .env("CLAUDE_CODE_MAX_RETRIES", "2")
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if run.bypass {
            // As root, --dangerously-skip-permissions needs IS_SANDBOX.
            command
                .arg("--dangerously-skip-permissions")
                .env("IS_SANDBOX", "1");
        }
        for (key, value) in &run.env {
            command.env(key, value);
        }
        let child = command.spawn().expect("start claude");
        let output = common::wait_bounded(
            child,
            Duration::from_secs(180),
            &format!("{}: claude", run.name),
        );
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        fs::write(
            self.streams.join(format!("{}.stream.jsonl", run.name)),
            &stdout,
        )
        .expect("save stream");
        let records: Vec<Value> = stdout
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| serde_json::from_str(line).expect("stream-json line"))
            .collect();
        assert!(
            records.iter().any(|r| r["type"] == "result"),
            "{}: no result record; stderr: {}",
            run.name,
            String::from_utf8_lossy(&output.stderr)
        );
        records
    }

    fn project_dir(&self) -> PathBuf {
        common::watch::encoded_project_dir(&self.config, &self.project)
    }
}

fn events(path: &Path) -> Vec<Value> {
    familiar_events(path)
        .iter()
        .map(|line| serde_json::from_str(line).expect("event JSON"))
        .collect()
}

fn session_of(records: &[Value]) -> String {
    records
        .iter()
        .find_map(|r| r["session_id"].as_str())
        .expect("a session id")
        .to_owned()
}

#[test]
fn the_real_cli_writes_what_familiar_reads_live_and_offline() {
    drive_p_runs(CURRENT);
}

#[test]
fn the_previous_cli_writes_what_familiar_reads_live_and_offline() {
    drive_p_runs(PREVIOUS);
}

/// The scripted `-p` runs of one CLI generation beside `familiar watch`, then every fact.
fn drive_p_runs(generation: Generation) {
    let bin = generation.bin();
    let version = generation.version();

    let tmp = tempfile::tempdir().expect("temp dir");
    let home = tmp.path().join("home");
    let config = home.join(".claude");
    let project = tmp.path().join("project");
    let streams = tmp.path().join("streams");
    for dir in [&config.join("projects"), &project, &streams] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    let mock = Mock::start(scripts(&project));
    let partner = Partner {
        bin,
        home: home.clone(),
        config: config.clone(),
        project: project.clone(),
        url: mock.url.clone(),
        streams: streams.clone(),
    };
    let mut watch = Watch::start(&config, &project, &["--all"]);

    let run = |name, args: &[&str], env: Vec<(&str, &str)>, bypass| {
        partner.run(&Run {
            name,
            args: args.iter().map(|arg| arg.to_string()).collect(),
            env,
            bypass,
        })
    };
    // 2.1.3xx leaves the planning tools out for this model unless asked for.
    let main = run(
        "main",
        &["-p", "FAMILIAR-SCRIPT main"],
        vec![("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1")],
        true,
    );
    let id = session_of(&main);
    let compact = run(
        "compact",
        &["--resume", &id, "-p", "/compact"],
        vec![],
        true,
    );
    let resume = run(
        "resume",
        &["--resume", &id, "-p", "FAMILIAR-SCRIPT after"],
        vec![],
        true,
    );
    let ratelimit = run(
        "ratelimit",
        &["-p", "FAMILIAR-SCRIPT ratelimit"],
        vec![],
        true,
    );
    let overload = run(
        "overload",
        &["-p", "FAMILIAR-SCRIPT overload"],
        vec![],
        true,
    );
    let todo = run(
        "todo",
        &["-p", "FAMILIAR-SCRIPT todo"],
        vec![
            ("CLAUDE_CODE_ENABLE_TASKS", "0"),
            ("CLAUDE_CODE_ENABLE_TODO_TOOLS", "1"),
        ],
        true,
    );
    let denied = run("denied", &["-p", "FAMILIAR-SCRIPT denied"], vec![], false);
    assert!(
        mock.requests.load(std::sync::atomic::Ordering::SeqCst) > 10,
        "the CLI did not talk to the mock"
    );

    // Name each file the CLI wrote after its script.
    let dir = partner.project_dir();
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (name, records) in [
        ("main", &main),
        ("ratelimit", &ratelimit),
        ("overload", &overload),
        ("todo", &todo),
        ("denied", &denied),
    ] {
        files.insert(
            name.to_owned(),
            dir.join(format!("{}.jsonl", session_of(records))),
        );
    }
    let subagents = dir.join(&id).join("subagents");
    let subagent = fs::read_dir(&subagents)
        .expect("subagents dir")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .expect("a subagent transcript");
    files.insert("main-subagent".to_owned(), subagent);
    assert_eq!(session_of(&compact), id);
    assert_eq!(session_of(&resume), id);

    // Saved before any check, so a failing run can be looked at.
    if let Some(out) = common::save_dir(&format!("claude-{version}")) {
        for (name, path) in &files {
            fs::copy(path, out.join(format!("{name}.jsonl"))).expect("copy transcript");
        }
        for entry in fs::read_dir(&streams)
            .expect("streams")
            .filter_map(Result::ok)
        {
            fs::copy(entry.path(), out.join(entry.file_name())).expect("copy stream");
        }
    }

    // Live: everything the watcher printed, up to a sentinel in a file of its own.
    let marker = dir.join("zz-sentinel.jsonl");
    append(&marker, sentinel("real-claude-end").as_bytes());
    let raw = watch.events_until("real-claude-end");
    // The session model puts the whole plan on the planning call that changed it (compared
    // below without it: `familiar events` prints the normalizer's events alone).
    assert!(
        raw.iter().any(
            |l| l.contains("\"tool\":\"TaskUpdate\"") && l.contains("\"status\":\"completed\"")
        ),
        "no live TaskUpdate with its completed plan item"
    );
    let live = without_status(raw);
    watch.interrupt();

    let offline: BTreeMap<&str, Vec<Value>> = files
        .iter()
        .map(|(name, path)| (name.as_str(), events(path)))
        .collect();
    checks::check_facts(generation, &offline);
    checks::check_stream_facts(&streams);
    checks::check_stats(generation, &files);

    // Live equals offline, file by file: the live lines of a file are those of its session
    // and agent, in order.
    let live: Vec<Value> = live
        .iter()
        .map(|line| serde_json::from_str(line).expect("live event JSON"))
        .collect();
    for (name, want) in &offline {
        let first = &want[0];
        let got: Vec<&Value> = live
            .iter()
            .filter(|event| {
                event["session"] == first["session"] && event["agent"] == first["agent"]
            })
            .collect();
        // `status` events are left out on both sides: live ones also come from timers.
        let want: Vec<&Value> = want.iter().filter(|e| e["kind"] != "status").collect();
        assert_eq!(got, want, "{name}: live differs from offline");
    }
}
