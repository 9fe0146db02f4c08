//! The real opencode CLI as a test partner: the pinned npm package in `tests/agents/opencode/`
//! runs scripted one-shot `opencode run` sessions against the mock OpenAI-compatible API of
//! `tests/real_qwen/mock.rs` (a custom provider, `@ai-sdk/openai-compatible`, in its
//! `opencode.json`; models.dev, updates and sharing off: nothing leaves the machine), while
//! `familiar watch --headless --events` follows its SQLite database. Checked: every scripted
//! fact through `familiar events` on each session's address (`<db>#<session id>`), live equal
//! to offline, and `sessions`, `stats` (tokens equal to what the mock sent) and `doctor`.
//! `real_opencode/interactive.rs` runs its TUI in a pseudo-terminal.
//!
//! `FAMILIAR_OPENCODE_BIN=/path/to/opencode` runs it against another CLI (`tests/agents/drift.sh`).
//! `FAMILIAR_UPDATE_FIXTURES=1` writes each session's lines to `fixtures/opencode-<version>/`
//! (`<run>.jsonl`) and a copy of the database (`opencode.db`).

mod common;
#[path = "real_opencode/interactive.rs"]
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

const DIR: &str = "opencode";
const PINNED: &str = "1.18.33";
const OVERRIDE: &str = "FAMILIAR_OPENCODE_BIN";
/// The model of the mock provider. Its rows name it but not its window, and Familiar's model
/// table does not list it: the context limit Familiar gives the sessions is its default (200,000
/// tokens); opencode's own limit for it is
/// the config's, 128,000, which decides when it compacts).
const MODEL: &str = "gpt-4.1";

/// What keeps the CLI from reaching out: no models.dev fetch, no update, no default plugins
/// (installed from npm), no sharing, no LSP download.
const QUIET: [(&str, &str); 5] = [
    ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
    ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
    ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
    ("OPENCODE_DISABLE_SHARE", "1"),
    ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
];

fn scripts(project: &Path) -> HashMap<&'static str, Vec<Answer>> {
    let at = |name: &str| project.join(name).to_string_lossy().into_owned();
    let mut scripts = HashMap::new();
    scripts.insert(
        "main",
        vec![
            Answer::Reply {
                thought: Some("Let me read a.txt first."),
                text: None,
                call: Some(("read", json!({"filePath": at("a.txt")}))),
                prompt: 1_000,
            },
            call(
                "bash",
                json!({"command": "exit 3", "description": "fail on purpose"}),
                1_100,
            ),
            call(
                "edit",
                json!({"filePath": at("a.txt"), "oldString": "hello", "newString": "bye"}),
                1_200,
            ),
            call(
                "write",
                json!({"filePath": at("b.txt"), "content": "new file\n"}),
                1_300,
            ),
            call("read", json!({"filePath": at("missing.txt")}), 1_400),
            call("grep", json!({"pattern": "bye"}), 1_500),
            call("glob", json!({"pattern": "*.txt"}), 1_600),
            call(
                "task",
                json!({"description": "look at a.txt", "subagent_type": "general",
                    "prompt": "FAMILIAR-SCRIPT subinner Look at a.txt."}),
                1_700,
            ),
            say("All done.", 1_800),
        ],
    );
    scripts.insert(
        "subinner",
        vec![
            call("read", json!({"filePath": at("a.txt")}), 700),
            say("a.txt says bye", 750),
        ],
    );
    // A request past opencode's limit for the model (128,000 less its output) makes it
    // compact before the next step: its summary request is answered as a `Summary`.
    scripts.insert(
        "compact",
        vec![
            call("read", json!({"filePath": at("a.txt")}), 125_000),
            say("Done after the compaction.", 2_000),
        ],
    );
    // Every attempt answered 500: opencode retries, then gives up.
    scripts.insert("apierror", vec![Answer::Error(500, "mock error")]);
    scripts
}

struct Partner {
    bin: PathBuf,
    home: PathBuf,
    project: PathBuf,
}

impl Partner {
    fn command(&self) -> Command {
        let mut command = Command::new(&self.bin);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("TMPDIR", self.home.join("tmp"))
            .envs(QUIET)
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn run(&self, name: &str, prompt: &str) -> String {
        let mut child = self
            .command()
            .args(["run", prompt])
            .spawn()
            .expect("start opencode");
        common::wait_within(&mut child, Duration::from_secs(180), name);
        let output = child.wait_with_output().expect("opencode output");
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    }

    fn version(&self) -> String {
        let mut child = self.command().arg("--version").spawn().expect("--version");
        common::wait_within(&mut child, Duration::from_secs(60), "opencode --version");
        let output = child.wait_with_output().expect("--version output");
        let version = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if std::env::var_os(OVERRIDE).is_none() {
            assert_eq!(
                version, PINNED,
                "tests/agents/{DIR} is not at the pinned version"
            );
        }
        version
    }
}

fn write_config(home: &Path, url: &str) {
    let dir = home.join(".config/opencode");
    fs::create_dir_all(&dir).expect("config dir");
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": false,
        "share": "disabled",
        "model": format!("mock/{MODEL}"),
        "provider": {"mock": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Mock",
            "options": {"baseURL": url, "apiKey": "familiar-test-dummy"},
            "models": {MODEL: {"name": "Mock GPT-4.1",
                "limit": {"context": 128_000, "output": 8_192}}}
        }}
    });
    fs::write(dir.join("opencode.json"), config.to_string()).expect("opencode.json");
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
fn the_real_opencode_cli_writes_the_sessions_familiar_reads() {
    let bin = common::agent_cli(DIR, "opencode", OVERRIDE);
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let home = root.join("home");
    let project = root.join("project");
    for dir in [&home, &project, &home.join("tmp")] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    let mock = Mock::start(scripts(&project));
    write_config(&home, &mock.url);
    let partner = Partner {
        bin,
        home: home.clone(),
        project: project.clone(),
    };
    let version = partner.version();
    let db = home.join(".local/share/opencode/opencode.db");
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

    let mut printed = BTreeMap::new();
    for name in ["main", "apierror", "compact"] {
        printed.insert(
            name,
            partner.run(name, &format!("Work on a.txt. FAMILIAR-SCRIPT {name}")),
        );
    }
    assert!(db.is_file(), "no database; opencode printed {printed:?}");
    let sessions = familiar_tail::opencode::list_sessions(&db).expect("list sessions");
    let mut addresses: BTreeMap<&str, PathBuf> = BTreeMap::new();
    for session in &sessions {
        let address = familiar_tail::opencode::address(&db, &session.id);
        let lines = familiar_tail::opencode::read_session(&db, &session.id).expect("read");
        let text = String::from_utf8_lossy(&lines);
        for name in ["main", "apierror", "compact"] {
            if text.contains(&format!("FAMILIAR-SCRIPT {name}")) && !addresses.contains_key(name) {
                addresses.insert(name, address.clone());
                if let Some(out) = common::save_dir(&format!("opencode-{version}")) {
                    let tmp_path = root.to_str().expect("UTF-8 temp dir");
                    fs::write(
                        out.join(format!("{name}.jsonl")),
                        text.replace(tmp_path, "/tmp/familiar-opencode")
                            .replace(&mock.url, "http://127.0.0.1:9/v1"),
                    )
                    .expect("write fixture");
                }
            }
        }
    }
    if let Some(out) = common::save_dir(&format!("opencode-{version}")) {
        // The database itself, as opencode left it (its WAL beside it, if it kept one).
        for suffix in ["", "-wal"] {
            let from = PathBuf::from(format!("{}{suffix}", db.display()));
            if from.is_file() {
                fs::copy(&from, out.join(format!("opencode.db{suffix}"))).expect("copy db");
            }
        }
    }
    assert_eq!(
        addresses.keys().copied().collect::<Vec<_>>(),
        ["apierror", "compact", "main"],
        "one root session per run ({version}); opencode printed {printed:?}"
    );
    assert_eq!(
        fs::read_to_string(project.join("a.txt")).expect("a.txt"),
        "bye\n"
    );
    assert!(project.join("b.txt").exists());

    let offline: BTreeMap<&str, Vec<Value>> = addresses
        .iter()
        .map(|(name, path)| (*name, events(path)))
        .collect();
    for (name, events) in &offline {
        assert!(
            events.iter().all(|e| e["agent_kind"] == "opencode"),
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
            row("reading", "read", &at("a.txt")),
            row("bash", "bash", "exit 3"),
            row("error", "bash", "exit 3"),
            row("writing", "edit", &at("a.txt")),
            row("writing", "write", &at("b.txt")),
            row("reading", "read", &at("missing.txt")),
            row("error", "read", &at("missing.txt")),
            row("reading", "grep", "bye"),
            row("reading", "glob", "*.txt"),
            row("subagent_start", "task", "general"),
            row("reading", "read", &at("a.txt")),
            row("subagent_end", "task", "general"),
        ],
        "{main_events:#?}"
    );
    let prompts = of_kind(main_events, "prompt");
    assert_eq!(prompts.len(), 1, "{main_events:?}");
    assert!(
        prompts[0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("FAMILIAR-SCRIPT main")
    );
    assert_eq!(of_kind(main_events, "thinking").len(), 1);
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
    // The context: the main agent's last request (1,800 prompt, 20 out), of the default window.
    assert_eq!(success[0]["context_used"], 1_820);
    assert_eq!(success[0]["context_limit"], 200_000);
    let api = of_kind(&offline["apierror"], "error");
    assert_eq!(api.len(), 1, "{:?}", offline["apierror"]);
    assert_eq!(api[0]["error"], "api");
    assert_eq!(api[0]["message"], "opencode: the API answered 500");
    let compactions = of_kind(&offline["compact"], "compact_boundary");
    assert_eq!(compactions.len(), 1, "{:?}", offline["compact"]);
    assert_eq!(compactions[0]["trigger"], "auto");

    // Live: what the watcher printed from the database as opencode wrote it equals offline.
    let claude_dir = encoded_project_dir(&home, &project);
    fs::create_dir_all(&claude_dir).expect("claude project dir");
    append(
        &claude_dir.join("zz-sentinel.jsonl"),
        sentinel("real-opencode-end").as_bytes(),
    );
    let live_lines = watch.events_until("real-opencode-end");
    watch.interrupt();
    let live: Vec<Value> = without_status(live_lines)
        .iter()
        .map(|line| serde_json::from_str(line).expect("live event JSON"))
        .collect();
    for (name, want) in &offline {
        let want: Vec<Value> = want
            .iter()
            .filter(|e| e["kind"] != "status")
            .map(without_line)
            .collect();
        let got: Vec<Value> = live
            .iter()
            .filter(|e| e["session"] == want[0]["session"])
            .map(without_line)
            .collect();
        assert_eq!(got, want, "{name}: live differs from offline");
    }

    check_commands(&home, &project, &addresses, &mock);
}

/// An event without its `line` and `ts`: live, a row comes as often as it was written (a
/// tool running, then done), so its line number and the time of its state differ from a
/// read of the finished session.
fn without_line(event: &Value) -> Value {
    let mut event = event.clone();
    if let Some(object) = event.as_object_mut() {
        object.remove("line");
        object.remove("ts");
    }
    event
}

fn check_commands(home: &Path, project: &Path, addresses: &BTreeMap<&str, PathBuf>, mock: &Mock) {
    let familiar = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_familiar"))
            .args(args)
            .env("HOME", home)
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("CLAUDE_CONFIG_DIR", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env_remove("XDG_DATA_HOME")
            .env_remove("OPENCODE_DB")
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
        serde_json::from_str(&familiar(&["sessions", "--json", "--agent", "opencode"]))
            .expect("sessions JSON");
    assert_eq!(sessions.len(), 3, "{sessions:?}");
    for session in &sessions {
        assert_eq!(session["agent_kind"], "opencode");
        assert_eq!(session["cwd"], project.to_string_lossy().as_ref());
        assert_eq!(session["status"], "waiting_for_input", "{session}");
    }
    let main_id = events(&addresses["main"])[0]["session"].clone();
    let main = sessions
        .iter()
        .find(|session| session["session"] == main_id)
        .expect("the main session is listed");
    assert_eq!(main["context_used"], 1_820);
    assert_eq!(main["context_limit"], 200_000);

    let rows: Vec<Value> = familiar(&["stats", "--json"])
        .lines()
        .map(|line| serde_json::from_str(line).expect("stats JSON line"))
        .collect();
    for (name, scripts) in [
        ("main", &["main", "subinner"][..]),
        ("compact", &["compact", "compaction"]),
    ] {
        let file = addresses[name].to_string_lossy();
        let row = rows
            .iter()
            .find(|row| row["file"] == file.as_ref())
            .unwrap_or_else(|| panic!("{name}: no stats row in {rows:?}"));
        let mut sent: Vec<Usage> = scripts.iter().flat_map(|s| mock.sent_for(s)).collect();
        if name == "compact" {
            // The request after the compaction names no script (the prompt that did was
            // compacted away): the mock answers it `ok` (50 prompt tokens, none cached, 20
            // out) without keeping it. opencode keeps it, as it should.
            sent.push(Usage {
                prompt: 50,
                cached: 0,
                completion: 20,
                reasoning: 5,
            });
        }
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
        .find(|line| line.starts_with("[ok] opencode database: "))
        .unwrap_or_else(|| panic!("no opencode line in {doctor}"));
    assert!(line.ends_with(", 3 session(s)"), "{doctor}");
    assert!(
        doctor.contains("[ok] opencode records: everything in the newest sessions is known"),
        "{doctor}"
    );
}
