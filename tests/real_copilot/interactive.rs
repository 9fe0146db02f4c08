//! The real Copilot CLI in an interactive session, in a pseudo-terminal, with `familiar
//! statusline` as its status-line command (`statusLine.command` in `$COPILOT_HOME/
//! settings.json`, behind a recorder that keeps each input and the line Familiar printed):
//! a prompt typed into the TUI (a `view`, then a reply), `/compact`, `/exit`. Checked: the CLI
//! shows Familiar's line, every input is Copilot CLI's and known, the line after the turn is
//! the mock's last request of the CLI's window (the CLI's own figures), and after the
//! compaction the session file's (the CLI's figures stay the last request's until the next).
//! Beside it `familiar watch --headless --events` follows the project: what it printed live
//! equals `familiar events` of the file the interactive session wrote, which holds the scripted
//! facts and nothing the reader does not know (`familiar stats --json` counts no unknown).
//! `FAMILIAR_UPDATE_FIXTURES=1` keeps the inputs in `fixtures/copilot-<version>/statusline/`.
//! Part of `tests/real_copilot.rs` (its mock API and CLI).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use familiar_hook::statusline_input::{Caller, caller, unknown_keys};
use serde_json::{Value, json};

use super::common::facts::of_kind;
use super::common::interactive::checked;
use super::common::statusline::Recorder;
use super::common::terminal::Terminal;
use super::common::watch::Watch;
use super::mock::{Answer, Mock, call, say};

/// How long one step may take (the CLI starting, a turn, a compaction).
const STEP: Duration = Duration::from_secs(90);
/// The reply's prompt: with its 20 tokens out, 3,200 of the 64,000 window, 5% exactly.
const LAST_PROMPT: u64 = 3_180;

fn scripts(project: &Path) -> HashMap<&'static str, Vec<Answer>> {
    let a = project.join("a.txt").to_string_lossy().into_owned();
    HashMap::from([(
        "statusline",
        vec![
            call("view", json!({"path": a}), 1_000),
            say("a.txt says hello.", LAST_PROMPT),
        ],
    )])
}

#[test]
fn familiar_statusline_is_the_real_copilot_clis_status_line() {
    let bin = super::common::agent_cli(super::DIR, "copilot", super::OVERRIDE);
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let home = root.join("home");
    let copilot_dir = home.join(".copilot");
    let project = root.join("project");
    for dir in [&copilot_dir, &project, &home.join("tmp")] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    let recorder = Recorder::new(&root);
    let settings = json!({
        "banner": "never",
        "statusLine": {"type": "command", "command": recorder.script},
    });
    fs::write(copilot_dir.join("settings.json"), settings.to_string()).expect("settings.json");

    let mock = Mock::start(scripts(&project));
    let tmpdir = home.join("tmp");
    let env: [(&str, &OsStr); 7] = [
        ("HOME", home.as_os_str()),
        ("TMPDIR", tmpdir.as_os_str()),
        ("COPILOT_OFFLINE", OsStr::new("true")),
        ("COPILOT_AUTO_UPDATE", OsStr::new("false")),
        ("COPILOT_PROVIDER_BASE_URL", OsStr::new(mock.url.as_str())),
        (
            "COPILOT_PROVIDER_API_KEY",
            OsStr::new("familiar-test-dummy"),
        ),
        ("COPILOT_MODEL", OsStr::new(super::MODEL)),
    ];
    // The project's sessions, live (Copilot CLI's dir is `home/.copilot`); the Claude Code
    // session `zz-sentinel` says when to stop reading.
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
    let mut terminal = Terminal::start(&bin, &[], &project, &env);
    // Its first question: trust the folder ("1. Yes" chosen).
    terminal.wait("the folder trust dialog", STEP, |t| {
        t.shows("Do you trust the files in this folder?")
    });
    std::thread::sleep(Duration::from_secs(1));
    terminal.enter();
    terminal.wait("the status line", STEP, |t| t.shows("mana ? left of 64k"));
    std::thread::sleep(Duration::from_secs(2));
    terminal.type_line("Read a.txt. FAMILIAR-SCRIPT statusline");
    let after_turn = format!(
        "mana {} left of 64k (95%) · your turn · view 1",
        familiar_model::words::tokens(64_000 - LAST_PROMPT - 20)
    );
    terminal.wait("the turn's status line", STEP, |_| {
        recorder.runs().iter().any(|run| run.line == after_turn)
    });
    // The CLI shows it. Ink redraws only the characters that changed, so what stays from the
    // line before (`mana `, and a leading digit the figures share: `63k` then `60.8k`) may
    // not be where a plain screen read puts it: the figure is checked in the recorder's runs
    // above, the rest of the line on screen.
    let shown = &after_turn[after_turn.find(" left of").unwrap_or(0)..];
    terminal.wait("the turn's status line on screen", STEP, |t| t.shows(shown));

    terminal.type_line("/compact");
    let session_file = || {
        let state = copilot_dir.join("session-state");
        fs::read_dir(state)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path().join("events.jsonl"))
            .find(|path| path.exists())
    };
    let mut post = None;
    terminal.wait("the compaction", STEP, |_| {
        post = session_file()
            .and_then(|path| fs::read_to_string(path).ok())
            .into_iter()
            .flat_map(|text| {
                text.lines()
                    .filter_map(|line| serde_json::from_str::<Value>(line).ok())
                    .collect::<Vec<_>>()
            })
            .filter(|record| record["type"] == "session.compaction_complete")
            .find_map(|record| record["data"]["postCompactionTokens"].as_u64());
        post.is_some()
    });
    let post = post.expect("postCompactionTokens");
    let after_compaction = format!(
        "mana {} left of 64k ({}%)",
        familiar_model::words::tokens(64_000 - post),
        (64_000 - post) * 100 / 64_000
    );
    terminal.wait("the compaction's status line", STEP, |_| {
        recorder
            .runs()
            .iter()
            .any(|run| run.line.starts_with(&after_compaction))
    });
    terminal.type_line("/exit");
    terminal.wait("the CLI's end", STEP, |t| {
        t.shows("Resume copilot --resume=")
    });

    let session = session_file().expect("the session file");
    check_session(&session, &project, &home, &mut watch, post);

    let runs = recorder.runs();
    let version = runs
        .first()
        .and_then(|run| run.input["version"].as_str())
        .unwrap_or("unknown")
        .to_owned();
    if let Some(out) = super::common::save_dir(&format!("copilot-{version}")) {
        let out = out.join("statusline");
        fs::create_dir_all(&out).expect("statusline fixtures dir");
        let tmp_path = root.to_str().expect("UTF-8 temp dir");
        for run in &runs {
            let name = run.file.file_name().expect("file name");
            // As the CLI wrote it.
            let text = fs::read_to_string(&run.file).expect("recorded input");
            fs::write(
                out.join(name),
                text.replace(tmp_path, "/tmp/familiar-copilot"),
            )
            .expect("write fixture");
        }
    }
    assert!(runs.len() >= 3, "{runs:?}");
    for run in &runs {
        assert_eq!(caller(&run.input), Caller::CopilotCli, "{run:?}");
        assert!(unknown_keys(&run.input).is_empty(), "{run:?}");
        assert!(run.err.is_empty(), "{run:?}");
        assert!(run.line.starts_with("mana "), "{run:?}");
        // The session's folder, whose `events.jsonl` Familiar read.
        assert_eq!(
            run.input["transcript_path"].as_str().map(PathBuf::from),
            session.parent().map(Path::to_owned),
            "{run:?}"
        );
    }
    // The turn's line: the CLI's own figures of the mock's last request.
    let turn = runs
        .iter()
        .find(|run| run.line == after_turn)
        .unwrap_or_else(|| panic!("no line {after_turn:?} in {runs:#?}"));
    let window = &turn.input["context_window"];
    assert_eq!(window["last_call_input_tokens"], LAST_PROMPT);
    assert_eq!(window["last_call_output_tokens"], 20);
    assert_eq!(window["context_window_size"], 64_000);
    // After the compaction the CLI's figures are still the last request's: the line is the
    // session file's.
    let compacted = runs
        .iter()
        .find(|run| run.line.starts_with(&after_compaction))
        .unwrap_or_else(|| panic!("no line {after_compaction:?} in {runs:#?}"));
    assert_eq!(
        compacted.input["context_window"]["last_call_input_tokens"], LAST_PROMPT,
        "{compacted:?}"
    );
}

/// The interactive session's file: its scripted facts, nothing unknown, and live (what `watch`
/// printed while the CLI ran) equal to offline.
fn check_session(session: &Path, project: &Path, home: &Path, watch: &mut Watch, post: u64) {
    let offline = checked(session, home, project, watch);
    let a = project.join("a.txt").to_string_lossy().into_owned();
    let rows: Vec<(&str, &str, &str)> = offline
        .iter()
        .filter(|e| e["tool"].is_string())
        .map(|e| {
            let field = |key: &str| e[key].as_str().unwrap_or("");
            (field("kind"), field("tool"), field("target"))
        })
        .collect();
    assert_eq!(rows, [("reading", "view", a.as_str())], "{offline:?}");
    let prompts = of_kind(&offline, "prompt");
    assert_eq!(prompts.len(), 1, "{offline:?}");
    assert_eq!(prompts[0]["text"], "Read a.txt. FAMILIAR-SCRIPT statusline");
    let compactions = of_kind(&offline, "compact_boundary");
    assert_eq!(compactions.len(), 1, "{offline:?}");
    assert_eq!(compactions[0]["trigger"], "manual");
    assert_eq!(compactions[0]["post_tokens"], post);
}
