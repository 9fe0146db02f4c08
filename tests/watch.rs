//! End-to-end tests of `familiar watch --headless`: the built binary in a child process with a
//! temporary `CLAUDE_CONFIG_DIR`, while the test appends a real transcript; its NDJSON must be
//! exactly what `familiar events` prints for the finished file. Ctrl-C and a closed stdout
//! end it with status 0. Waits are generous (10 s) and nothing is timed.

use std::fs::{self};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Command, Stdio};

mod common;

use common::watch::*;

#[test]
fn watch_file_prints_what_familiar_events_prints_and_ends_on_ctrl_c() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("session.jsonl");
    let path_arg = path.to_str().expect("UTF-8 path");
    let mut watch = Watch::start(&config, tmp.path(), &["--wait", "--file", path_arg]);

    // Append in uneven chunks that cut lines (and multi-byte characters) anywhere.
    let bytes = real_fixture_bytes(FIXTURE);
    let mut at = 0;
    let mut step = 1;
    while at < bytes.len() {
        let end = (at + step).min(bytes.len());
        append(&path, &bytes[..end][at..]);
        at = end;
        step = (step * 7 + 3) % 9_000 + 1;
    }
    append(&path, sentinel("e2e-end").as_bytes());
    let got = without_status(watch.events_until("e2e-end"));

    let copy = tmp.path().join("session.jsonl");
    fs::write(&copy, &bytes).expect("copy");
    // The copy lives elsewhere; the events name sessions by their records, not the path.
    // `status` events are left out on both sides: live ones also come from timers.
    let want = without_status(familiar_events(&copy));
    assert!(!want.is_empty());
    assert_eq!(got, want);

    watch.signal(libc::SIGINT);
    let status = watch.wait_exit();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn a_closed_stdout_ends_it_cleanly() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let mut watch = Watch::start_raw(&config, tmp.path(), &["--all"]);
    let mut reader = BufReader::new(watch.take_stdout());
    append(&dir.join("s.jsonl"), &real_fixture_bytes(FIXTURE));
    let mut first = String::new();
    reader.read_line(&mut first).expect("read a line");
    assert!(first.starts_with("{\"kind\":"), "{first}");
    drop(reader); // the reader goes away, as with `| head -1`
    let status = watch.wait_exit();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn by_default_it_follows_the_current_directory_from_the_end() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let project = tmp.path().join("my proj.v2_x");
    fs::create_dir_all(&project).expect("mkdir");
    let project = project.canonicalize().expect("canonical");
    let encoded: String = project
        .to_string_lossy()
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                b as char
            } else {
                '-'
            }
        })
        .collect();
    let dir = config.join("projects").join(encoded);
    fs::create_dir_all(&dir).expect("mkdir");
    let other = config.join("projects").join("-elsewhere");
    fs::create_dir_all(&other).expect("mkdir");
    let bytes = with_cwd(&real_fixture_bytes(FIXTURE), &project);
    let path = dir.join("s.jsonl");
    let half = bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(20)
        .map(|(i, _)| i + 1)
        .expect("lines");
    fs::write(&path, &bytes[..half]).expect("first part");

    let mut watch = Watch::start(&config, &project, &[]);
    append(&other.join("x.jsonl"), &bytes); // another project: not followed
    append(&path, &bytes[half..]);
    append(&path, sentinel("default-end").as_bytes());
    let raw = watch.events_until("default-end");
    // The existing session is told first, in one snapshot, its old lines read silently.
    let first: serde_json::Value = serde_json::from_str(&raw[0]).expect("JSON");
    assert_eq!(first["kind"], "snapshot", "{raw:?}");
    assert_eq!(first["line"], 21);
    assert_eq!(first["cwd"], project.to_str().expect("UTF-8 path"));
    let got = without_status(raw);

    fs::write(tmp.path().join("whole.jsonl"), &bytes).expect("copy");
    let want: Vec<String> = without_status(familiar_events(&tmp.path().join("whole.jsonl")))
        .into_iter()
        .filter(|line| {
            let event: serde_json::Value = serde_json::from_str(line).expect("JSON");
            event["line"].as_u64().is_some_and(|n| n > 21)
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want, "only the appended part, only this project");

    watch.signal(libc::SIGTERM);
    let status = watch.wait_exit();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn a_hook_permission_prompt_becomes_a_status_event() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("session.jsonl");
    let path_arg = path.to_str().expect("UTF-8 path");
    let watch = Watch::start(&config, tmp.path(), &["--wait", "--file", path_arg]);
    watch.wait_stderr("listening for Claude Code hooks");

    // What Claude Code pipes into a Notification hook.
    let hook_json = format!(
        r#"{{"session_id":"hook-session","transcript_path":"{path_arg}","hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}}"#
    );
    send_hook(&config, &hook_json);

    append(&path, sentinel("after-hook").as_bytes());
    let got = watch.events_until("after-hook");
    let mut status: Vec<serde_json::Value> = got
        .iter()
        .map(|line| serde_json::from_str(line).expect("NDJSON"))
        .filter(|event: &serde_json::Value| event["kind"] == "status")
        .collect();
    assert!(status.len() <= 1, "{got:?}");
    // The hook and the file reach the watcher by different paths (its socket, inotify): under
    // load the appended record may be read first (regression: .ci/run failed once so).
    if status.is_empty() {
        let line = watch.line_containing("\"kind\":\"status\"");
        status.push(serde_json::from_str(&line).expect("NDJSON"));
    }
    assert_eq!(status[0]["status"], "waiting_for_approval");
    assert_eq!(status[0]["session"], "hook-session");
    assert_eq!(
        status[0]["text"],
        "Claude needs your permission to use Bash"
    );
}

/// Claude Code keeps `sessions/<pid>.json` while an interactive session runs: without any hook
/// installed, its `waiting` for a permission prompt reaches the watcher as
/// `waiting_for_approval`, and the end of the process that kept it as `idle`. A session the
/// watcher does not follow says nothing. The states are those a real 2.1.332 wrote
/// (`fixtures/claude-2.1.332/sessions-file.jsonl`), under another session id.
#[test]
fn the_clis_sessions_folder_tells_approval_and_the_end_without_hooks() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (config, path, watch) = watching_one_session(tmp.path(), "s-watch");
    let sessions = config.join("sessions");
    fs::create_dir_all(&sessions).expect("mkdir");

    let recorded = fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/claude-2.1.332/sessions-file.jsonl"),
    )
    .expect("recorded states");
    let waiting: serde_json::Value = recorded
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|state| state["status"] == "waiting")
        .expect("a recorded waiting state");
    // The process the file names: alive while the session runs.
    let mut cli = Command::new("sleep").arg("60").spawn().expect("sleep");
    let state = |session: &str| {
        let mut state = waiting.clone();
        state["sessionId"] = session.into();
        state["pid"] = cli.id().into();
        state.to_string()
    };
    // Another user's session of another project, not followed: nothing.
    fs::write(sessions.join("1.json"), state("not-followed")).expect("write");
    // Written as the CLI writes it: a temporary file renamed into place.
    fs::write(sessions.join("tmp"), state("s-watch")).expect("write");
    fs::rename(
        sessions.join("tmp"),
        sessions.join(format!("{}.json", cli.id())),
    )
    .expect("mv");
    let asked: serde_json::Value =
        serde_json::from_str(&watch.line_containing("waiting_for_approval")).expect("NDJSON");
    assert_eq!(asked["session"], "s-watch");
    assert_eq!(asked["text"], "permission prompt");
    assert_eq!(asked["kind"], "status");

    // The CLI is gone (a crash leaves its file): the session ended.
    cli.kill().expect("kill");
    cli.wait().expect("wait");
    let ended: serde_json::Value =
        serde_json::from_str(&watch.line_containing("\"status\":\"idle\"")).expect("NDJSON");
    assert_eq!(ended["session"], "s-watch");
    assert_eq!(ended["text"], "session ended");
    append(&path, sentinel("after-states").as_bytes());
    let rest = watch.events_until("after-states");
    assert!(
        rest.iter().all(|line| !line.contains("not-followed")),
        "{rest:?}"
    );
}

/// A record type nobody taught Familiar, from a newer CLI: `watch -v` says so once per file,
/// with the CLI's version, and goes on (the record is counted, not read).
#[test]
fn a_record_type_never_seen_is_said_once_with_the_cli_version() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (_, path, watch) = watching_one_session(tmp.path(), "s-new");
    for _ in 0..3 {
        append(
            &path,
            b"{\"type\":\"hologram\",\"sessionId\":\"s-watch\",\"version\":\"2.1.400\"}\n",
        );
    }
    append(&path, sentinel("after-hologram").as_bytes());
    watch.events_until("after-hologram");
    let said = "hologram not known to Familiar (written by CLI 2.1.400); counted, not read";
    watch.wait_stderr(said);
    assert_eq!(
        watch.stderr().matches(said).count(),
        1,
        "{}",
        watch.stderr()
    );
}

#[test]
fn a_hook_input_longer_than_the_socket_takes_still_tells_its_status() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("session.jsonl");
    let path_arg = path.to_str().expect("UTF-8 path");
    let watch = Watch::start(&config, tmp.path(), &["--wait", "--file", path_arg]);
    watch.wait_stderr("listening for Claude Code hooks");

    // 2.1.332's PostToolUseFailure as recorded, its tool input grown past the socket's 1 MiB
    // (a failed Write of a large file carries the whole content).
    let samples = fs::read_to_string(common::fixture("hooks/claude-2.1.332.jsonl")).expect("hooks");
    let mut input: serde_json::Value = samples
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|hook| hook["hook_event_name"] == "PostToolUseFailure")
        .expect("a PostToolUseFailure sample");
    input["session_id"] = "big-hook".into();
    input["tool_input"]["command"] = "x".repeat(2 << 20).into();
    let json = input.to_string();
    assert!(json.len() > familiar_hook::MAX_MESSAGE);
    send_hook(&config, &json);

    let line = watch.line_containing("\"session\":\"big-hook\"");
    let status: serde_json::Value = serde_json::from_str(&line).expect("NDJSON");
    assert_eq!(status["kind"], "status", "{status}");
    assert_eq!(status["status"], "working", "{status}");
    assert_eq!(status["text"], "Exit code 3", "{status}");
    assert_eq!(status["tool"], "Bash", "{status}");
}

/// A live file of garbage does not flood the terminal: its first three bad lines are told as
/// every command tells them (`familiar: FILE:LINE: reason`), then once that the rest are
/// counted.
#[test]
fn a_live_file_of_bad_lines_is_told_three_times_then_counted() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let (_, path, watch) = watching_one_session(tmp.path(), "s-bad");
    append(&path, "{not json\n".repeat(10).as_bytes());
    append(&path, sentinel("after-garbage").as_bytes());
    watch.events_until("after-garbage");
    watch.wait_stderr("the rest are counted, not told");
    let stderr = watch.stderr();
    let told: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("familiar: ") && line.contains("s-bad.jsonl"))
        .collect();
    assert_eq!(told.len(), 4, "{stderr}");
    assert!(
        told[0].ends_with(":2: malformed JSON: key must be a string at line 1 column 2"),
        "{stderr}"
    );
}

/// A session `name` with one prompt under a fresh config dir in `tmp`, followed by a watcher
/// of everything that has shown its snapshot: `(config dir, transcript, watcher)`.
fn watching_one_session(tmp: &std::path::Path, name: &str) -> (PathBuf, PathBuf, Watch) {
    let config = tmp.join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join(format!("{name}.jsonl"));
    append(&path, prompt_record("go").as_bytes());
    let watch = Watch::start(&config, tmp, &["--all"]);
    watch.line_containing("\"kind\":\"snapshot\"");
    (config, path, watch)
}

/// `familiar hook` with `json` on stdin, as Claude Code runs it, to the watch of `config`.
fn send_hook(config: &std::path::Path, json: &str) {
    let mut hook = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("hook")
        .env("FAMILIAR_SOCKET", config.join("run/hook.sock"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run familiar hook");
    hook.stdin
        .take()
        .expect("stdin")
        .write_all(json.as_bytes())
        .expect("write hook input");
    let output = hook.wait_with_output().expect("familiar hook ends");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_hook_naming_a_transcript_outside_the_watched_dirs_gets_it_followed() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    fs::create_dir_all(config.join("projects")).expect("mkdir");
    let project = tmp.path().join("quiet-project");
    fs::create_dir_all(&project).expect("mkdir");
    // A session of another Claude Code config dir: nothing watch looks at by itself.
    let elsewhere = tmp.path().join("other-claude/projects/-elsewhere");
    fs::create_dir_all(&elsewhere).expect("mkdir");
    let bytes = real_fixture_bytes(FIXTURE);
    let half = bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(20)
        .map(|(i, _)| i + 1)
        .expect("lines");
    let path = elsewhere.join("s.jsonl");
    fs::write(&path, &bytes[..half]).expect("first part");
    let watch = Watch::start(&config, &project, &[]);
    watch.wait_stderr("listening for Claude Code hooks");

    let hook_json = format!(
        r#"{{"session_id":"s","transcript_path":{},"hook_event_name":"SessionStart","source":"resume"}}"#,
        serde_json::to_string(path.to_str().expect("UTF-8 path")).expect("JSON string")
    );
    send_hook(&config, &hook_json);
    // Its lines so far are read silently: the session is told in one snapshot.
    let first: serde_json::Value = serde_json::from_str(&watch.next_lines(1)[0]).expect("JSON");
    assert_eq!(first["kind"], "snapshot", "{first}");
    assert_eq!(first["line"], 21);

    append(&path, &bytes[half..]);
    append(&path, sentinel("hooked-end").as_bytes());
    let got = without_status(watch.events_until("hooked-end"));
    fs::write(tmp.path().join("whole.jsonl"), &bytes).expect("copy");
    let want: Vec<String> = without_status(familiar_events(&tmp.path().join("whole.jsonl")))
        .into_iter()
        .filter(|line| {
            let event: serde_json::Value = serde_json::from_str(line).expect("JSON");
            event["line"].as_u64().is_some_and(|n| n > 21)
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want, "what the session writes after the hook, once");
    let session: serde_json::Value = serde_json::from_str(&want[0]).expect("JSON");
    assert_eq!(first["session"], session["session"]);
}

#[test]
fn scripts_hot_reload_while_watching_and_a_broken_change_keeps_the_old_one() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("session.jsonl");
    let script = tmp.path().join("mine.rhai");
    fs::write(
        &script,
        "fn on_prompt(ev) { emit(\"mine\", #{ version: 1, text: ev.text }); }\n",
    )
    .expect("script");
    let mut watch = Watch::start_raw(
        &config,
        tmp.path(),
        &[
            "--wait",
            "--file",
            path.to_str().expect("UTF-8"),
            "--script",
            script.to_str().expect("UTF-8"),
        ],
    );
    let (tx, lines) = crossbeam_channel::unbounded();
    let out = watch.take_stdout();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if line.contains("\"name\":\"mine\"") && tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = || -> serde_json::Value {
        let line = lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("no `mine` action in time: {}", watch.stderr()));
        serde_json::from_str(&line).expect("NDJSON")
    };

    append(&path, prompt_record("one").as_bytes());
    let first = next();
    assert_eq!(
        (first["data"]["version"].as_i64(), first["script"].as_str()),
        (Some(1), Some("mine.rhai"))
    );

    fs::write(
        &script,
        "fn on_prompt(ev) { emit(\"mine\", #{ version: 2, text: ev.text }); }\n",
    )
    .expect("script v2");
    watch.wait_stderr("reloaded");
    append(&path, prompt_record("two").as_bytes());
    assert_eq!(next()["data"]["version"], 2);

    fs::write(
        &script,
        "fn on_prompt(ev) { emit(\"mine\", #{ version: 3 }\n",
    )
    .expect("broken");
    watch.wait_stderr("the previous version keeps running");
    append(&path, prompt_record("three").as_bytes());
    let third = next();
    assert_eq!(
        (
            third["data"]["version"].as_i64(),
            third["data"]["text"].as_str()
        ),
        (Some(2), Some("three"))
    );
}

#[test]
fn with_no_session_yet_it_says_where_it_looked_and_picks_one_up_when_it_appears() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let project = tmp.path().join("fresh_project");
    fs::create_dir_all(&project).expect("mkdir");
    let watch = Watch::start(&config, &project, &[]);
    let encoded = config.join("projects").join(
        project
            .to_str()
            .expect("UTF-8")
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-"),
    );
    watch.wait_stderr(&format!(
        "no Claude Code session yet in {}",
        encoded.display()
    ));
    watch.wait_stderr("the config dir comes from CLAUDE_CONFIG_DIR");
    // Claude Code starts: the project dir and its first transcript appear. (The dash encoding
    // is lossy, so the tailer confirms the project by the records' own `cwd`.)
    fs::create_dir_all(&encoded).expect("mkdir project dir");
    let record = format!(
        "{{\"type\":\"user\",\"cwd\":{},\"sessionId\":\"s-new\",\"message\":{{\"role\":\"user\",\"content\":\"first-record\"}},\"timestamp\":\"2026-02-11T10:00:00.000Z\"}}\n",
        serde_json::to_string(project.to_str().expect("UTF-8")).expect("JSON string")
    );
    append(&encoded.join("new-session.jsonl"), record.as_bytes());
    let before = watch.events_until("first-record");
    assert!(
        before
            .iter()
            .any(|line| line.contains("\"session_start\"") && line.contains("s-new")),
        "{before:?}"
    );
}

#[test]
fn regression_bad_hook_input_is_said_once() {
    // `echo garbage | familiar watch --hook` printed the JSON error twice on one line.
    let output = common::Test::new()
        .args(["watch", "--hook", "--headless"])
        .env("NO_COLOR", "1")
        .stdin("garbage\n")
        .status(1)
        .run();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "familiar: hook input is not JSON: expected value at line 1 column 1\n"
    );
}

#[test]
fn regression_watch_file_given_a_directory_is_an_error_not_a_silent_wait() {
    let dir = tempfile::tempdir().expect("temp dir");
    let output = common::Test::new()
        .args(["watch", "--headless", "--file"])
        .arg(dir.path())
        .env("NO_COLOR", "1")
        .status(1)
        .run();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "familiar: {} is a directory: --file follows one transcript (a .jsonl file); for \
             the sessions of a project use --project DIR\n",
            dir.path().display()
        )
    );
}

/// `--session` takes the short id `familiar sessions` prints (any unique prefix); an id or a
/// file that does not exist is an error at once, not a wait for ever (`--wait` waits).
#[test]
fn a_short_session_id_is_followed_and_a_missing_one_is_an_error() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let id = "258c7280-ae70-4798-800f-63464d01a85d";
    let path = dir.join(format!("{id}.jsonl"));
    append(&path, prompt_record("go").replace("s-watch", id).as_bytes());
    let watch = Watch::start(&config, tmp.path(), &["--session", &id[..8]]);
    let snapshot: serde_json::Value =
        serde_json::from_str(&watch.line_containing("\"kind\":\"snapshot\"")).expect("JSON");
    assert_eq!(snapshot["session"], id);
    drop(watch);

    let refused = |args: &[&str], said: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_familiar"))
            .args(["watch", "--headless"])
            .args(args)
            .env("CLAUDE_CONFIG_DIR", &config)
            .env("HOME", &config)
            .env("XDG_CONFIG_HOME", config.join(".config"))
            .env_remove("FAMILIAR_CONFIG")
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
            .env("FAMILIAR_SOCKET", config.join("run/hook.sock"))
            .stdin(Stdio::null())
            .output()
            .expect("familiar runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    };
    refused(
        &["--session", "deadbeef"],
        "--session deadbeef: no session's id begins so",
    );
    let missing = dir.join("typo.jsonl");
    refused(
        &["--file", missing.to_str().expect("UTF-8")],
        "no such file (--wait waits for it to appear)",
    );
}
