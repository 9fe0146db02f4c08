//! The real Gemini CLI in an interactive session, in a pseudo-terminal
//! (`common::interactive`): a prompt typed into the TUI, a `read_file` the mock asks for, its
//! reply, `/quit`, while `familiar watch` follows the project. Part of `tests/real_gemini.rs`.
//!
//! What it wrote (0.61.0, `fixtures/gemini-0.61.0/interactive.jsonl`): the record types of
//! `-p` runs and no other. Its reply without tool calls ends the turn as in `-p`: the
//! reader holds that `success` until the file has been quiet for the quiet-turn time (the
//! interactive CLI writes nothing after it until the next prompt).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs;

use serde_json::json;

use super::common::facts::{of_kind, tool_uses};
use super::common::interactive::{Session, run};
use super::mock::{Answer, Mock, call, text};

#[test]
fn an_interactive_session_in_a_terminal_reads_as_its_script_live_and_offline() {
    let bin = super::CURRENT.bin();
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let version = super::version(&bin, &root.join("version-home"));
    let home = root.join("home");
    let gemini_dir = home.join(".gemini");
    let project = root.join("project");
    let tmpdir = home.join("tmp");
    for dir in [&gemini_dir, &project, &tmpdir] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    fs::write(gemini_dir.join("settings.json"), super::SETTINGS).expect("settings.json");
    let mock = Mock::start(HashMap::from([(
        "interactive",
        vec![
            Answer::Parts(
                vec![call("read_file", json!({"file_path": "a.txt"}))],
                1_000,
            ),
            Answer::Parts(vec![text("a.txt says hello.")], 1_100),
        ],
    )]));
    let env: [(&str, &OsStr); 4] = [
        ("HOME", home.as_os_str()),
        ("TMPDIR", tmpdir.as_os_str()),
        ("GEMINI_API_KEY", OsStr::new("familiar-test-dummy")),
        ("GOOGLE_GEMINI_BASE_URL", OsStr::new(mock.url.as_str())),
    ];
    let (file, events) = run(&Session {
        bin: &bin,
        args: &["-m", super::MODEL],
        env: &env,
        home: &home,
        project: &project,
        ready: "Type your message",
        prompt: "Read a.txt. FAMILIAR-SCRIPT interactive",
        reply: "a.txt says hello.",
        quit: "/quit",
        files: &|| super::session_files(&gemini_dir),
        save: (&format!("gemini-{version}"), &root),
    });
    assert!(
        events.iter().all(|e| e["agent_kind"] == "gemini"),
        "{events:?}"
    );
    let uses = tool_uses(&events);
    assert_eq!(uses.len(), 1, "{}: {uses:?}", file.display());
    assert_eq!(uses[0].0, "reading");
    assert_eq!(uses[0].1, "read_file");
    let prompts = of_kind(&events, "prompt");
    assert_eq!(prompts.len(), 1, "{events:?}");
    assert_eq!(
        prompts[0]["text"],
        "Read a.txt. FAMILIAR-SCRIPT interactive"
    );
    assert_eq!(of_kind(&events, "success").len(), 1, "{events:?}");
}
