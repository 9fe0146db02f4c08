//! The real opencode TUI in an interactive session, in a pseudo-terminal
//! (`common::interactive`): a prompt typed into its prompt box, a `read` the mock asks for, its
//! reply on screen, `/exit` (the TUI's `app.exit` command, `slashName: "exit"`), while
//! `familiar watch` follows the database. Checked: the session reads as its script, live equal
//! to offline (without the rows' line numbers and times: a row comes live as often as it was
//! written), nothing unknown. Part of `tests/real_opencode.rs`.
//!
//! What the TUI does that `opencode run` does not (1.18.33, seen against the mock): it draws
//! with opentui (the terminal's capabilities asked for, no answer needed), its prompt is the
//! text as typed (`run` quotes one with spaces), and on `/exit` it prints the session's title
//! and how to continue it (`opencode -s <session id>`).

use std::ffi::OsStr;
use std::fs;
use std::path::PathBuf;

use serde_json::json;

use super::common::facts::of_kind;
use super::common::interactive::{Session, run};
use super::mock::{Mock, call, say};
use super::{DIR, OVERRIDE, Partner, tool_events, write_config};

#[test]
fn an_interactive_session_in_a_terminal_reads_as_its_script_live_and_offline() {
    let bin = super::common::agent_cli(DIR, "opencode", OVERRIDE);
    let tmp = tempfile::tempdir().expect("temp dir");
    let root = tmp.path().canonicalize().expect("canonical temp dir");
    let home = root.join("home");
    let project = root.join("project");
    let tmpdir = home.join("tmp");
    for dir in [&home, &project, &tmpdir] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    fs::write(project.join("a.txt"), "hello\n").expect("a.txt");
    let a = project.join("a.txt").to_string_lossy().into_owned();
    let mock = Mock::start(std::collections::HashMap::from([(
        "interactive",
        vec![
            call("read", json!({"filePath": a}), 900),
            say("a.txt says hello.", 1_000),
        ],
    )]));
    write_config(&home, &mock.url);
    let partner = Partner {
        bin: bin.clone(),
        home: home.clone(),
        project: project.clone(),
    };
    let version = partner.version();
    let db = home.join(".local/share/opencode/opencode.db");
    let sessions = || -> Vec<PathBuf> {
        if !db.is_file() {
            return Vec::new();
        }
        familiar_tail::opencode::list_sessions(&db)
            .unwrap_or_default()
            .iter()
            .map(|session| familiar_tail::opencode::address(&db, &session.id))
            .collect()
    };
    let mut env: Vec<(&str, &OsStr)> =
        vec![("HOME", home.as_os_str()), ("TMPDIR", tmpdir.as_os_str())];
    env.extend(
        super::QUIET
            .iter()
            .map(|(key, value)| (*key, OsStr::new(value))),
    );
    let prompt = "Read a.txt. FAMILIAR-SCRIPT interactive";
    let (address, events) = run(&Session {
        bin: &bin,
        args: &[],
        env: &env,
        home: &home,
        project: &project,
        ready: "Ask anything",
        prompt,
        reply: "a.txt says hello.",
        quit: "/exit",
        files: &sessions,
        save: (&format!("opencode-{version}"), &root),
    });
    assert!(
        events.iter().all(|e| e["agent_kind"] == "opencode"),
        "{events:?}"
    );
    let row = |kind: &str, tool: &str, target: &str| {
        (kind.to_owned(), tool.to_owned(), target.to_owned())
    };
    assert_eq!(
        tool_events(&events),
        [row("reading", "read", &a)],
        "{}",
        address.display()
    );
    let prompts = of_kind(&events, "prompt");
    assert_eq!(prompts.len(), 1, "{events:?}");
    assert_eq!(prompts[0]["text"], prompt);
    assert_eq!(of_kind(&events, "success").len(), 1, "{events:?}");
    // One session: the TUI's, ended.
    assert_eq!(sessions(), [address]);
}
