//! End-to-end tests of `familiar statusline`: Claude Code's statusline JSON on stdin, the one
//! line it shows on stdout.

mod common;

use common::{Test, fixture};

fn input(transcript: &std::path::Path, model: Option<&str>) -> String {
    let mut value = serde_json::json!({
        "hook_event_name": "Status",
        "session_id": "s-1h",
        "transcript_path": transcript,
        "cwd": "/home/user/proj",
        "workspace": {"current_dir": "/home/user/proj", "project_dir": "/home/user/proj"},
        "version": "2.1.197",
    });
    if let Some(model) = model {
        value["model"] = serde_json::json!({"id": model, "display_name": "Opus 4.8"});
    }
    value.to_string()
}

#[test]
fn statusline_shows_mana_of_the_1m_window_status_and_tools() {
    // msg_B's context: 10 input + 30,000 cache reads + 4,000 cache writes.
    let transcript = fixture("usage-1h-cache.jsonl");
    Test::new()
        .arg("statusline")
        .stdin(input(&transcript, Some("claude-opus-4-8[1m]")))
        .stdout("mana 965k left of 1M (96%) · working · Bash 1\n")
        .stderr("")
        .run();
}

#[test]
fn statusline_window_comes_from_the_configured_model_then_the_table() {
    let transcript = fixture("usage-1h-cache.jsonl");
    // The transcript says only `claude-opus-4-6`: 200k by the table.
    Test::new()
        .arg("statusline")
        .stdin(input(&transcript, None))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana 165k left of 200k (82%) · working · Bash 1\n")
        .run();
    // The user's configured `opus[1m]` is the model running: 1M.
    let test = Test::new();
    let settings = test.home().join(".claude");
    std::fs::create_dir_all(&settings).expect("config dir");
    std::fs::write(settings.join("settings.json"), r#"{"model": "opus[1m]"}"#)
        .expect("write settings");
    test.arg("statusline")
        .stdin(input(&transcript, None))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana 965k left of 1M (96%) · working · Bash 1\n")
        .run();
    // --context-limit wins over everything.
    Test::new()
        .args(["statusline", "--context-limit", "68020"])
        .stdin(input(&transcript, Some("claude-opus-4-8[1m]")))
        .stdout("mana 34k left of 68k (50%) · working · Bash 1\n")
        .run();
}

#[test]
fn statusline_counts_from_the_last_compaction() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("compacted.jsonl");
    let mut bytes = std::fs::read(fixture("usage-1h-cache.jsonl")).expect("fixture");
    bytes.extend(std::fs::read(fixture("compaction-with-post-tokens.jsonl")).expect("fixture"));
    std::fs::write(&path, bytes).expect("write transcript");
    // The Bash call came before the compaction; the context after it is 8 + 1,000 + 22,000.
    Test::new()
        .arg("statusline")
        .stdin(input(&path, Some("claude-sonnet-4-5-20250929")))
        .stdout("mana 176k left of 200k (88%) · working\n")
        .run();
}

#[test]
fn statusline_escapes_tool_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("hostile.jsonl");
    let record = serde_json::json!({
        "type": "assistant",
        "sessionId": "s",
        "timestamp": "2026-02-25T16:28:45.000Z",
        "message": {
            "id": "msg_1", "model": "claude-opus-4-6", "role": "assistant", "type": "message",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash\u{1b}]0;x\u{7}", "input": {}}],
            "usage": {"input_tokens": 1000, "output_tokens": 1}
        }
    });
    std::fs::write(&path, format!("{record}\n")).expect("write transcript");
    // The tool use has no result yet: at work (no record says a dialog is open).
    Test::new()
        .arg("statusline")
        .stdin(input(&path, None))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana 199k left of 200k (99%) · working · Bash\\e]0;x\\x07 1\n")
        .run();
    // A turn that ended: the status in the window's words, as `sessions` says it.
    let end = serde_json::json!({
        "type": "assistant",
        "sessionId": "s",
        "message": {
            "id": "msg_2", "model": "claude-opus-4-6", "role": "assistant", "type": "message",
            "content": [{"type": "text", "text": "Done."}], "stop_reason": "end_turn",
            "usage": {"input_tokens": 1000, "output_tokens": 1}
        }
    });
    std::fs::write(&path, format!("{record}\n{end}\n")).expect("write transcript");
    Test::new()
        .arg("statusline")
        .stdin(input(&path, None))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana 199k left of 200k (99%) · your turn · Bash\\e]0;x\\x07 1\n")
        .run();
}

#[test]
fn statusline_before_the_transcript_exists_says_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    Test::new()
        .arg("statusline")
        .stdin(input(&dir.path().join("not-yet.jsonl"), None))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana ? left of 200k · no transcript yet\n")
        .run();
}

/// A statusline input Claude Code 2.1.332 sent (recorded by `tests/real_claude/interactive.rs`
/// with `FAMILIAR_RECORD`, temp paths renamed `/tmp/rec`).
fn recorded(name: &str) -> String {
    std::fs::read_to_string(fixture(&format!("statusline/claude-2.1.332-{name}.json")))
        .expect("statusline fixture")
}

#[test]
fn statusline_shows_the_clis_own_context_figures() {
    // Mid-turn: `current_usage` 10 input + 300 cache writes + 250,000 cache reads of a
    // 1,000,000 window, `used_percentage` 25. The transcript read says 34k: the CLI's figures
    // are the ones the user sees beside the status line, so they win.
    let transcript = fixture("usage-1h-cache.jsonl");
    Test::new()
        .arg("statusline")
        .arg("--transcript")
        .arg(&transcript)
        .stdin(recorded("turn"))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana 749k left of 1M (75%) · working · Bash 1\n")
        .stderr("")
        .run();
    // --context-limit still wins over the window, and the percentage follows it.
    Test::new()
        .args(["statusline", "--context-limit", "500000", "--transcript"])
        .arg(&transcript)
        .stdin(recorded("turn"))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana 249k left of 500k (49%) · working · Bash 1\n")
        .run();
}

#[test]
fn statusline_falls_back_to_the_transcript_when_the_cli_has_no_figures() {
    // Before the first answer the CLI sends `current_usage: null`: the transcript counts, over
    // the CLI's window.
    let transcript = fixture("usage-1h-cache.jsonl");
    Test::new()
        .arg("statusline")
        .arg("--transcript")
        .arg(&transcript)
        .stdin(recorded("start"))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana 965k left of 1M (96%) · working · Bash 1\n")
        .run();
    // So it does right after `/compact`: the context after the compaction, 23k.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("compacted.jsonl");
    let mut bytes = std::fs::read(&transcript).expect("fixture");
    bytes.extend(std::fs::read(fixture("compaction-with-post-tokens.jsonl")).expect("fixture"));
    std::fs::write(&path, bytes).expect("write transcript");
    Test::new()
        .arg("statusline")
        .arg("--transcript")
        .arg(&path)
        .stdin(recorded("compacted"))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana 976k left of 1M (97%) · working\n")
        .run();
    // The recorded transcript path does not exist here: nothing to fall back on.
    Test::new()
        .arg("statusline")
        .stdin(recorded("start"))
        .env_remove("ANTHROPIC_MODEL")
        .stdout("mana ? left of 1M · no transcript yet\n")
        .run();
}

/// Issue 28: a `transcript_path` naming a FIFO hung the status line (and Claude Code waiting
/// on it). It is refused at once, in one line.
#[test]
fn statusline_refuses_a_transcript_that_is_not_a_regular_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let fifo = dir.path().join("fifo.jsonl");
    let made = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("a path");
    // SAFETY: a NUL-terminated path and a mode.
    assert_eq!(unsafe { libc::mkfifo(made.as_ptr(), 0o600) }, 0);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("statusline")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("familiar runs");
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(input(&fifo, None).as_bytes())
            .expect("the input");
    }
    common::wait_within(
        &mut child,
        std::time::Duration::from_secs(10),
        "statusline on a FIFO",
    );
    let out = child.wait_with_output().expect("output");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr,
        format!("familiar: reading {}: not a regular file\n", fifo.display())
    );
}

/// The interactive session's `/compact`.
const COMPACTION_START: &str = r#""type":"session.compaction_start""#;

/// GitHub Copilot CLI 1.0.102's recorded input `name` (`fixtures/copilot-1.0.102/statusline/`)
/// with its session folder moved to `dir`, where the interactive session's file is written up
/// to (not including) the first line holding `until` (whole when `None`; no file when
/// `Some("")`).
fn copilot_input(dir: &std::path::Path, name: &str, until: Option<&str>) -> String {
    let text = std::fs::read_to_string(fixture(&format!("copilot-1.0.102/statusline/{name}.json")))
        .expect("fixture");
    let mut input: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let session = input["session_id"].as_str().expect("session_id").to_owned();
    let folder = dir.join("session-state").join(&session);
    input["transcript_path"] = serde_json::json!(folder);
    if until != Some("") {
        let records = std::fs::read_to_string(fixture("copilot-1.0.102/interactive-compact.jsonl"))
            .expect("session fixture");
        let kept: String = records
            .lines()
            .take_while(|line| until.is_none_or(|needle| !line.contains(needle)))
            .map(|line| format!("{line}\n"))
            .collect();
        std::fs::create_dir_all(&folder).expect("session folder");
        std::fs::write(folder.join("events.jsonl"), kept).expect("session file");
    }
    input.to_string()
}

#[test]
fn copilot_clis_input_shows_its_last_request_of_its_window() {
    let dir = tempfile::tempdir().expect("temp dir");
    // After the turn: the CLI's last request (1,500 in, 20 out) of its 64,000, its own 2%
    // (not `current_usage`, the running total, nor the badge's 12,508).
    Test::new()
        .arg("statusline")
        .stdin(copilot_input(dir.path(), "turn", Some(COMPACTION_START)))
        .stdout("mana 62.5k left of 64k (98%) · your turn · view 1\n")
        .stderr("")
        .run();
    // At start: the window, no figure, no session file yet.
    let dir = tempfile::tempdir().expect("temp dir");
    Test::new()
        .arg("statusline")
        .stdin(copilot_input(dir.path(), "start", Some("")))
        .stdout("mana ? left of 64k · no transcript yet\n")
        .run();
    // The very first input has no `context_window_size` yet: `displayed_context_limit`.
    let dir = tempfile::tempdir().expect("temp dir");
    Test::new()
        .arg("statusline")
        .stdin(copilot_input(dir.path(), "first", Some("")))
        .stdout("mana ? left of 64k · no transcript yet\n")
        .run();
}

#[test]
fn after_a_copilot_compaction_the_session_files_figure_stands_in() {
    // The CLI still says the last request (1,520); the session file's compaction says
    // 12,463 (`postCompactionTokens`), and no tool since.
    let dir = tempfile::tempdir().expect("temp dir");
    Test::new()
        .arg("statusline")
        .stdin(copilot_input(
            dir.path(),
            "compacted",
            Some(r#""content":"say hi""#),
        ))
        .stdout("mana 51.5k left of 64k (80%) · your turn\n")
        .stderr("")
        .run();
    // Once a request follows, the CLI's figure again.
    let dir = tempfile::tempdir().expect("temp dir");
    Test::new()
        .arg("statusline")
        .stdin(copilot_input(dir.path(), "turn", None))
        .stdout("mana 62.5k left of 64k (98%) · your turn · view 1\n")
        .run();
}

#[test]
fn copilot_cli_without_a_transcript_path_is_found_by_its_session_id() {
    let dir = tempfile::tempdir().expect("temp dir");
    let copilot_home = dir.path().join("copilot-home");
    let mut input: serde_json::Value = serde_json::from_str(&copilot_input(
        &copilot_home,
        "turn",
        Some(COMPACTION_START),
    ))
    .expect("JSON");
    input
        .as_object_mut()
        .expect("object")
        .remove("transcript_path");
    Test::new()
        .arg("statusline")
        .env("COPILOT_HOME", &copilot_home)
        .stdin(input.to_string())
        .stdout("mana 62.5k left of 64k (98%) · your turn · view 1\n")
        .run();
    // A session id that is not one file name names no file.
    input["session_id"] = serde_json::json!("../../etc");
    Test::new()
        .arg("statusline")
        .env("COPILOT_HOME", &copilot_home)
        .stdin(input.to_string())
        .status(1)
        .stderr_contains("no transcript")
        .run();
}

#[test]
fn hook_install_for_copilot_sets_only_its_status_line_and_uninstall_gives_the_file_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let copilot_home = dir.path().join("copilot-home");
    std::fs::create_dir_all(&copilot_home).expect("copilot home");
    let settings = copilot_home.join("settings.json");
    let mine = "{\n  // mine\n  \"footer\": {\"showQuota\": false},\n  \"banner\": \"never\"\n}\n";
    std::fs::write(&settings, mine).expect("settings");
    let out = Test::new()
        .args(["hook", "install", "--agent", "copilot", "--yes"])
        .env("COPILOT_HOME", &copilot_home)
        .stdout_contains("statusLine")
        .run();
    assert!(out.status.success());
    let after = std::fs::read_to_string(&settings).expect("settings");
    let value: serde_json::Value = jsonc_value(&after);
    let command = value["statusLine"]["command"].as_str().expect("command");
    assert!(
        command.ends_with("familiar statusline") || command.ends_with("familiar' statusline"),
        "{after}"
    );
    assert_eq!(value["statusLine"]["type"], "command");
    assert!(value.get("hooks").is_none(), "{after}");
    assert!(after.contains("// mine"), "{after}");
    let doctor = Test::new()
        .arg("doctor")
        .env("COPILOT_HOME", &copilot_home)
        .status(0)
        .run();
    let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
    let line = doctor
        .lines()
        .find(|line| line.starts_with("[ok] Copilot status line: installed in "))
        .unwrap_or_else(|| panic!("{doctor}"));
    assert!(line.ends_with("statusline)"), "{line}");
    Test::new()
        .args(["hook", "uninstall", "--agent", "copilot", "--yes"])
        .env("COPILOT_HOME", &copilot_home)
        .run();
    assert_eq!(std::fs::read_to_string(&settings).expect("settings"), mine);
}

#[test]
fn hook_install_for_qwen_sets_its_ui_status_line_and_uninstall_gives_the_file_back() {
    let dir = tempfile::tempdir().expect("temp dir");
    let qwen_home = dir.path().join("qwen-home");
    std::fs::create_dir_all(&qwen_home).expect("qwen home");
    let settings = qwen_home.join("settings.json");
    let mine =
        "{\n  // mine\n  \"ui\": {\n    \"theme\": \"Qwen Dark\"\n  },\n  \"$version\": 4\n}\n";
    std::fs::write(&settings, mine).expect("settings");
    // A dry run shows the change and writes nothing.
    Test::new()
        .args(["hook", "install", "--agent", "qwen", "--dry-run"])
        .env("QWEN_HOME", &qwen_home)
        .stdout_contains("# add ui.statusLine: ")
        .stdout_contains("+      \"refreshInterval\": 2")
        .run();
    assert_eq!(std::fs::read_to_string(&settings).expect("settings"), mine);
    // Without a terminal to ask on, --yes is needed.
    Test::new()
        .args(["hook", "install", "--agent", "qwen"])
        .env("QWEN_HOME", &qwen_home)
        .status(1)
        .stderr_contains("pass --yes")
        .run();
    Test::new()
        .args(["hook", "install", "--agent", "qwen", "--yes"])
        .env("QWEN_HOME", &qwen_home)
        .stdout_contains("undo with `familiar hook uninstall --agent qwen`")
        .run();
    let after = std::fs::read_to_string(&settings).expect("settings");
    let value = jsonc_value(&after);
    let status = &value["ui"]["statusLine"];
    let command = status["command"].as_str().expect("command");
    assert!(
        command.ends_with("familiar statusline") || command.ends_with("familiar' statusline"),
        "{after}"
    );
    assert_eq!(status["type"], "command");
    assert_eq!(status["refreshInterval"], 2);
    assert_eq!(value["ui"]["theme"], "Qwen Dark", "{after}");
    assert!(value.get("hooks").is_none(), "{after}");
    assert!(value.get("statusLine").is_none(), "{after}");
    assert!(after.contains("// mine"), "{after}");
    // Twice is once.
    Test::new()
        .args(["hook", "install", "--agent", "qwen", "--yes"])
        .env("QWEN_HOME", &qwen_home)
        .stdout_contains("nothing to change")
        .run();
    let doctor = Test::new()
        .arg("doctor")
        .env("QWEN_HOME", &qwen_home)
        .status(0)
        .run();
    let doctor = String::from_utf8_lossy(&doctor.stdout).into_owned();
    let line = doctor
        .lines()
        .find(|line| line.starts_with("[ok] Qwen status line: installed in "))
        .unwrap_or_else(|| panic!("{doctor}"));
    assert!(line.ends_with("statusline)"), "{line}");
    Test::new()
        .args(["hook", "uninstall", "--agent", "qwen", "--yes"])
        .env("QWEN_HOME", &qwen_home)
        .run();
    assert_eq!(std::fs::read_to_string(&settings).expect("settings"), mine);
}

#[test]
fn hook_install_for_qwen_without_qwen_home_writes_under_home() {
    let home = tempfile::tempdir().expect("temp home");
    Test::new()
        .args(["hook", "install", "--agent", "qwen", "--yes"])
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdout_contains("ui.statusLine")
        .run();
    let settings = home.path().join(".qwen").join("settings.json");
    let created = std::fs::read_to_string(&settings).expect("created settings");
    assert_eq!(
        jsonc_value(&created)["ui"]["statusLine"]["refreshInterval"],
        2
    );
    // No other agent's settings.
    assert!(!home.path().join(".claude").exists());
    assert!(!home.path().join(".copilot").exists());
    Test::new()
        .args(["hook", "uninstall", "--agent", "qwen", "--yes"])
        .env("HOME", home.path())
        .stdout_contains("removed")
        .run();
    assert!(
        !settings.exists(),
        "install created it, uninstall removes it"
    );
}

/// `text` without its `//` comment lines, as JSON.
fn jsonc_value(text: &str) -> serde_json::Value {
    let plain: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    serde_json::from_str(&plain).expect("JSON")
}
