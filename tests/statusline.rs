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
