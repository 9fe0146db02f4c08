//! The real Qwen Code CLI in an interactive session, in a pseudo-terminal, with `familiar
//! statusline` as its status-line command, set by `familiar hook install --agent qwen`
//! (`ui.statusLine` in `~/.qwen/settings.json`, with its `refreshInterval`: at the turn's end
//! Qwen Code runs the command before its session file says the turn ended): a prompt typed
//! into the TUI (a `read_file`, then a reply), then `/quit`, then `familiar hook uninstall
//! --agent qwen`. The command install writes names a `familiar` of the test's own, where a
//! recorder then stands that keeps each input and the line Familiar printed. Checked: what
//! install wrote is the setting Qwen Code reads, the CLI shows Familiar's line, every input is
//! Qwen Code's and known, the line after the turn is the mock's last request of the CLI's
//! window, with the session file (found from the input's project and session id, which is
//! all Qwen Code sends) telling the status and the tools; uninstall then takes the status line
//! out of the file Qwen Code wrote to meanwhile (0.24.4 adds `"$version": 4`, and
//! `ui.autoModeAcknowledged` beside the status line) and leaves what it wrote.
//! `FAMILIAR_UPDATE_FIXTURES=1` keeps the inputs in `fixtures/qwen-<version>/statusline/`.
//! Part of `tests/real_qwen.rs` (its mock API and CLI).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::time::Duration;

use familiar_hook::statusline_input::{Caller, caller, unknown_keys};
use serde_json::{Value, json};

use super::common::statusline::{Recorder, installed_familiar};
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
    fs::write(qwen_dir.join("settings.json"), super::SETTINGS).expect("settings.json");
    let familiar = installed_familiar(&root.join("bin"));
    let settings = install(&familiar, &home);
    let command = familiar_hook::status_line_command(&familiar);
    assert_eq!(
        settings["ui"]["statusLine"],
        json!({"type": "command", "command": command, "refreshInterval": 2}),
        "{settings}"
    );
    // What install wrote, without the status line, is the file as it was.
    let mut without = settings.clone();
    without.as_object_mut().expect("object").remove("ui");
    let before: Value = serde_json::from_str(super::SETTINGS).expect("settings JSON");
    assert_eq!(without, before);
    // At that path, the recorder runs `familiar statusline` for the CLI.
    let recorder = Recorder::at(&root, &familiar);
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
    uninstall(&home, &qwen_dir.join("settings.json"));

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

/// Runs `familiar` (the test's own, at a path of its own) as `hook install --agent qwen --yes`
/// in `home`; the settings file it wrote, as JSON.
fn install(familiar: &Path, home: &Path) -> Value {
    let output = hook(familiar, home, "install");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("# add ui.statusLine: "), "{stdout}");
    let text = fs::read_to_string(home.join(".qwen/settings.json")).expect("settings.json");
    serde_json::from_str(&text).expect("settings JSON")
}

/// `familiar hook uninstall --agent qwen --yes` after the CLI ran: the status line goes, and
/// what the CLI wrote into the file meanwhile stays.
fn uninstall(home: &Path, settings: &Path) {
    let text = fs::read_to_string(settings).expect("settings.json");
    let ran: Value = serde_json::from_str(&text).expect("settings JSON");
    // The CLI wrote the file meanwhile; Familiar's status line is as install wrote it.
    assert_eq!(ran["ui"]["statusLine"]["refreshInterval"], 2, "{ran}");
    let output = hook(Path::new(env!("CARGO_BIN_EXE_familiar")), home, "uninstall");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("# remove ui.statusLine: "), "{stdout}");
    let text = fs::read_to_string(settings).expect("settings.json");
    let after: Value = serde_json::from_str(&text).expect("settings JSON");
    let mut want = ran.clone();
    if let Some(ui) = want["ui"].as_object_mut() {
        ui.remove("statusLine");
        if ui.is_empty() {
            want.as_object_mut().expect("object").remove("ui");
        }
    }
    assert_eq!(after, want, "the CLI's settings after it ran: {ran}");
}

/// `familiar hook ACTION --agent qwen --yes` in `home` (its Qwen Code dir `home/.qwen`).
fn hook(familiar: &Path, home: &Path, action: &str) -> std::process::Output {
    let output = std::process::Command::new(familiar)
        .args(["hook", action, "--agent", "qwen", "--yes"])
        .env("HOME", home)
        .env_remove("QWEN_HOME")
        .env_remove("QWEN_RUNTIME_DIR")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("familiar hook");
    assert!(
        output.status.success(),
        "familiar hook {action}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
