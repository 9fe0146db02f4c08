//! The real Qwen Code CLI in an interactive session, in a pseudo-terminal, with `familiar
//! statusline` as its status-line command (`ui.statusLine` in `~/.qwen/settings.json`, behind
//! a recorder that keeps each input and the line Familiar printed): a prompt typed into the
//! TUI (a `read_file`, then a reply), then `/quit`; `refreshInterval` 1 (at the turn's end
//! Qwen Code runs the command before its session file says the turn ended). Checked: the CLI shows Familiar's line,
//! every input is Qwen Code's and known, and the line after the turn is the mock's last
//! request of the CLI's window, with the session file (found from the input's project and
//! session id, which is all Qwen Code sends) telling the status and the tools.
//! `FAMILIAR_UPDATE_FIXTURES=1` keeps the inputs in `fixtures/qwen-<version>/statusline/`.
//! Part of `tests/real_qwen.rs` (its mock API and CLI).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::time::Duration;

use familiar_hook::statusline_input::{Caller, caller, unknown_keys};
use serde_json::{Value, json};

use super::common::statusline::Recorder;
use super::common::terminal::Terminal;
use super::mock::{Mock, call, say};

/// How long one step may take (the CLI starting, a turn).
const STEP: Duration = Duration::from_secs(120);
/// The reply's prompt tokens: the context Qwen Code counts after the turn.
const LAST_PROMPT: u64 = 2_000;

#[test]
fn familiar_statusline_is_the_real_qwen_codes_status_line() {
    let bin = super::CURRENT.bin();
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let home = root.join("home");
    let qwen_dir = home.join(".qwen");
    let project = root.join("project");
    let tmpdir = home.join("tmp");
    for dir in [&qwen_dir, &project, &tmpdir] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    let recorder = Recorder::new(&root);
    let mut settings: Value = serde_json::from_str(super::SETTINGS).expect("settings JSON");
    // Qwen Code runs the command when its state changes, the turn's end included, before it
    // has written that end to the session file: a refresh brings the status up to date.
    settings["ui"] = json!({"statusLine": {"type": "command", "command": recorder.script,
        "refreshInterval": 1}});
    fs::write(qwen_dir.join("settings.json"), settings.to_string()).expect("settings.json");
    let a = project.join("a.txt").to_string_lossy().into_owned();
    let mock = Mock::start(HashMap::from([(
        "statusline",
        vec![
            call("read_file", json!({"file_path": a}), 900),
            say("a.txt says hello.", LAST_PROMPT),
        ],
    )]));
    let env: [(&str, &OsStr); 6] = [
        ("HOME", home.as_os_str()),
        ("TMPDIR", tmpdir.as_os_str()),
        ("OPENAI_API_KEY", OsStr::new("familiar-test-dummy")),
        ("OPENAI_BASE_URL", OsStr::new(mock.url.as_str())),
        ("OPENAI_MODEL", OsStr::new(super::MODEL)),
        ("QWEN_CODE_SUPPRESS_YOLO_WARNING", OsStr::new("1")),
    ];
    let mut terminal = Terminal::start(&bin, &[], &project, &env);
    terminal.wait("the prompt box", STEP, |t| t.shows("Type your message"));
    terminal.wait("the first status line", STEP, |_| {
        !recorder.runs().is_empty()
    });
    std::thread::sleep(Duration::from_secs(1));
    terminal.type_line("Read a.txt. FAMILIAR-SCRIPT statusline");
    let left = 1_000_000 - LAST_PROMPT;
    let after_turn = format!(
        "mana {} left of 1M ({}%) · your turn · read_file 1",
        familiar_model::words::tokens(left),
        left * 100 / 1_000_000
    );
    terminal.wait("the turn's status line", STEP, |_| {
        recorder.runs().iter().any(|run| run.line == after_turn)
    });
    terminal.wait("the turn's status line on screen", STEP, |t| {
        t.shows(after_turn.trim_start_matches("mana "))
    });
    terminal.type_line("/quit");
    terminal.wait_end(STEP);

    let runs = recorder.runs();
    let version = runs
        .first()
        .and_then(|run| run.input["version"].as_str())
        .unwrap_or("unknown")
        .to_owned();
    if let Some(out) = super::common::save_dir(&format!("qwen-{version}")) {
        let out = out.join("statusline");
        fs::create_dir_all(&out).expect("statusline fixtures dir");
        let tmp_path = root.to_str().expect("UTF-8 temp dir");
        // The first input (before any request) and the turn's.
        let keep = [runs.first(), runs.iter().find(|run| run.line == after_turn)];
        for (run, name) in keep.into_iter().flatten().zip(["start", "turn"]) {
            let text = fs::read_to_string(&run.file).expect("recorded input");
            fs::write(
                out.join(format!("{name}.json")),
                text.replace(tmp_path, "/tmp/familiar-qwen"),
            )
            .expect("write fixture");
        }
    }
    assert!(runs.len() >= 2, "{runs:?}");
    for run in &runs {
        assert_eq!(caller(&run.input), Caller::QwenCode, "{run:?}");
        assert!(unknown_keys(&run.input).is_empty(), "{run:?}");
        assert!(run.err.is_empty(), "{run:?}");
        assert!(run.line.starts_with("mana "), "{run:?}");
        assert_eq!(
            run.input["workspace"]["current_dir"],
            project.to_string_lossy().as_ref()
        );
    }
    // Before the first request: the window, no figure yet.
    assert!(
        runs[0].line.starts_with("mana ? left of 1M"),
        "{:?}",
        runs[0]
    );
    // The turn's line: the CLI's own figure of the mock's last request, and the session
    // file's status and tools (the file its project and session id name).
    let turn = runs
        .iter()
        .find(|run| run.line == after_turn)
        .unwrap_or_else(|| panic!("no line {after_turn:?} in {runs:#?}"));
    let window = &turn.input["context_window"];
    assert_eq!(window["current_usage"], LAST_PROMPT);
    assert_eq!(window["context_window_size"], 1_000_000);
    let id = turn.input["session_id"].as_str().expect("session_id");
    assert!(
        super::session_files(&qwen_dir)
            .iter()
            .any(|file| file.file_stem().is_some_and(|stem| stem == id)),
        "the session file of {id}"
    );
}
