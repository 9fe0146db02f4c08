//! One interactive session of a real agent CLI in a pseudo-terminal ([`super::terminal`]),
//! followed live by `familiar watch --headless --events`: a prompt typed into the TUI, the
//! turn the mock scripted, the CLI quit by its slash command. Checked here for every CLI: the
//! session file holds nothing the reader does not know (`familiar stats --json` counts no
//! `unknown`), and what the watcher printed live equals `familiar events` of that file ([`checked`],
//! which `real_copilot/interactive.rs` uses too). The
//! suites (`real_gemini.rs`, `real_qwen.rs`, `real_opencode.rs`) check the scripted facts on
//! what [`run`] gives. opencode's "file" is a session of its database, by its address
//! (`<db>#<session id>`, which `familiar events` reads): its text is the session's rows as
//! Familiar's source reads them ([`text`]).

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::facts::events;
use super::terminal::Terminal;
use super::watch::{Watch, append, encoded_project_dir, sentinel, without_status};

/// How long one step may take (the CLI starting, a turn, its end).
const STEP: Duration = Duration::from_secs(120);

pub struct Session<'a> {
    pub bin: &'a Path,
    pub args: &'a [&'a str],
    /// The CLI's environment (`PATH` and `TERM` are set).
    pub env: &'a [(&'a str, &'a OsStr)],
    /// The CLI's `HOME`, and the watcher's.
    pub home: &'a Path,
    pub project: &'a Path,
    /// What the screen shows once the prompt box takes keys.
    pub ready: &'a str,
    pub prompt: &'a str,
    /// Text of the scripted last reply: the turn is over once the session file holds it and
    /// the screen shows it.
    pub reply: &'a str,
    /// The slash command that ends the CLI.
    pub quit: &'a str,
    /// Every session file the CLI wrote so far (for opencode, every session's address).
    pub files: &'a dyn Fn() -> Vec<PathBuf>,
    /// Where `FAMILIAR_UPDATE_FIXTURES` (or the drift check) keeps the session file, as
    /// `interactive.jsonl` ([`super::save_dir`]'s name: `qwen-0.24.4`), the temp dir (`root`)
    /// written `/tmp/familiar-interactive`.
    pub save: (&'a str, &'a Path),
}

/// Runs the session; its file and `familiar events` of it, live checked equal to them.
pub fn run(session: &Session<'_>) -> (PathBuf, Vec<Value>) {
    fs::create_dir_all(session.home.join("projects")).expect("projects dir");
    let project_arg = session.project.to_str().expect("UTF-8 temp dir");
    let mut watch = Watch::start(
        session.home,
        session.project,
        &[
            "--project",
            project_arg,
            "--wait",
            "--session",
            "zz-sentinel",
        ],
    );
    let mut terminal = Terminal::start(session.bin, session.args, session.project, session.env);
    terminal.wait("the prompt box", STEP, |t| t.shows(session.ready));
    // Ink's input takes keys a moment after it is drawn.
    std::thread::sleep(Duration::from_secs(2));
    terminal.type_line(session.prompt);
    let mut file = None;
    terminal.wait("the scripted turn", STEP, |_| {
        file = (session.files)()
            .into_iter()
            .find(|path| text(path).is_some_and(|text| text.contains(session.reply)));
        file.is_some()
    });
    let file = file.expect("the session file");
    terminal.wait("the reply on screen", STEP, |t| t.shows(session.reply));
    // What the CLI writes after the reply (the turn's end, its telemetry) settles.
    std::thread::sleep(Duration::from_secs(2));
    terminal.type_line(session.quit);
    terminal.wait_end(STEP);

    if let Some(out) = super::save_dir(session.save.0) {
        let root = session.save.1.to_str().expect("UTF-8 temp dir");
        let text = text(&file).expect("session file");
        fs::write(
            out.join("interactive.jsonl"),
            text.replace(root, "/tmp/familiar-interactive"),
        )
        .expect("write fixture");
    }
    let offline = checked(&file, session.home, session.project, &mut watch);
    (file, offline)
}

/// The text of a session file, or of an opencode session (`<db>#<session id>`: its rows, one
/// line each, as `familiar_tail::opencode::read_session` hands them to the reader).
pub fn text(file: &Path) -> Option<String> {
    match familiar_tail::opencode::parse_address(file) {
        Some((db, session)) if db.is_file() => familiar_tail::opencode::read_session(&db, &session)
            .ok()
            .map(|lines| String::from_utf8_lossy(&lines).into_owned()),
        _ => fs::read_to_string(file).ok(),
    }
}

/// `familiar events` of a session `file` the CLI wrote while `watch` followed `project`
/// (`home` its HOME): checked to hold nothing unknown and to equal what `watch` printed
/// live, which is then stopped. An opencode session's events are compared without their
/// `line` and `ts`: live, a row comes as often as it was written (a tool running, then done),
/// so its line number and the time of its state differ from a read of the finished session.
pub fn checked(file: &Path, home: &Path, project: &Path, watch: &mut Watch) -> Vec<Value> {
    let offline = events(file);
    let stats = std::process::Command::new(env!("CARGO_BIN_EXE_familiar"))
        .args(["stats", "--json"])
        .arg(file)
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .output()
        .expect("familiar stats");
    let row: Value = serde_json::from_slice(&stats.stdout).expect("stats JSON");
    assert!(row.get("unknown").is_none(), "{}: {row}", file.display());

    // A turn's `success` that the reader holds (Gemini CLI's: a reply without tool calls may
    // still get its calls) comes out live once the file has been quiet for the quiet-turn
    // time (5 s), as offline at the end of the file: the sentinel comes after that.
    std::thread::sleep(Duration::from_secs(6));
    let claude_dir = encoded_project_dir(home, project);
    fs::create_dir_all(&claude_dir).expect("claude project dir");
    append(
        &claude_dir.join("zz-sentinel.jsonl"),
        sentinel("interactive-end").as_bytes(),
    );
    let live: Vec<Value> = without_status(watch.events_until("interactive-end"))
        .iter()
        .map(|line| serde_json::from_str(line).expect("live event JSON"))
        .collect();
    watch.interrupt();
    let rows = familiar_tail::opencode::parse_address(file).is_some();
    let compared = |event: &Value| {
        let mut event = event.clone();
        if rows && let Some(object) = event.as_object_mut() {
            object.remove("line");
            object.remove("ts");
        }
        event
    };
    let want: Vec<Value> = offline
        .iter()
        .filter(|e| e["kind"] != "status")
        .map(compared)
        .collect();
    assert!(!want.is_empty(), "no events in {}", file.display());
    let got: Vec<Value> = live
        .iter()
        .filter(|e| e["session"] == want[0]["session"])
        .map(compared)
        .collect();
    assert_eq!(got, want, "live differs from offline");
    offline
}
