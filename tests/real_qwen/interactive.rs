//! The real Qwen Code CLI in an interactive session, in a pseudo-terminal
//! (`common::interactive`): a prompt typed into the TUI, a `read_file` the mock asks for, its
//! reply, `/quit`, while `familiar watch` follows the project. Part of `tests/real_qwen.rs`.
//!
//! What the interactive mode does that `-p` does not (0.24.4, seen against the mock): it starts
//! in auto mode ("An LLM classifier evaluates each tool call"; a `read_file` asked nobody), and
//! after the turn it sends one more request, a prompt suggestion (`[SUGGESTION MODE: Suggest
//! what the user might naturally type next.]`, answered by the mock's fallback), which the
//! session file does not hold. The file (`fixtures/qwen-0.24.4/interactive.jsonl`) holds the
//! record types of `-p` runs, and a `system` record of subtype `file_history_snapshot`, which
//! no `-p` run in `fixtures/qwen-0.24.4/` wrote and the reader already knew (no event).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;

use serde_json::json;

use super::common::facts::{of_kind, tool_uses};
use super::common::interactive::{Session, run};
use super::mock::{Mock, call, say};

#[test]
fn an_interactive_session_in_a_terminal_reads_as_its_script_live_and_offline() {
    let bin = super::CURRENT.bin();
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let version = super::version(&bin, &root.join("version-home"));
    let home = root.join("home");
    let qwen_dir = home.join(".qwen");
    let project = root.join("project");
    let tmpdir = home.join("tmp");
    for dir in [&qwen_dir, &project, &tmpdir] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    fs::write(qwen_dir.join("settings.json"), super::SETTINGS).expect("settings.json");
    let a = project.join("a.txt").to_string_lossy().into_owned();
    let mock = Mock::start(HashMap::from([(
        "interactive",
        vec![
            call("read_file", json!({"file_path": a}), 900),
            say("a.txt says hello.", 1_000),
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
    let (file, events) = run(&Session {
        bin: &bin,
        args: &[],
        env: &env,
        home: &home,
        project: &project,
        ready: "Type your message",
        prompt: "Read a.txt. FAMILIAR-SCRIPT interactive",
        reply: "a.txt says hello.",
        quit: "/quit",
        files: &|| super::session_files(&qwen_dir),
        save: (&format!("qwen-{version}"), &root),
    });
    assert!(
        events.iter().all(|e| e["agent_kind"] == "qwen"),
        "{events:?}"
    );
    assert_eq!(
        tool_uses(&events),
        [("reading", "read_file", a.as_str())],
        "{}",
        file.display()
    );
    let prompts = of_kind(&events, "prompt");
    assert_eq!(prompts.len(), 1, "{events:?}");
    assert_eq!(
        prompts[0]["text"],
        "Read a.txt. FAMILIAR-SCRIPT interactive"
    );
    assert_eq!(of_kind(&events, "success").len(), 1, "{events:?}");
}
