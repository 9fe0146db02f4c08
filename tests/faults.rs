//! Fault tests of the built binary (issue 7, "Reliability"): each fault happens to a running
//! `familiar` in a child process, and the test checks that the pipeline keeps going and, where
//! the binary reports the fault, what it says. The project's transcript directory deleted and
//! recreated while watching; a script file deleted under hot reload; a closed stdout while
//! `events` still streams stdin and while `run` prints; the session bus dying mid-run, with a
//! real `dbus-daemon` and a notification server on it. A file replaced under the tailer is
//! covered by familiar-tail's `lifecycle` tests and, at rate, by `bench/soak.sh`.
//! Every wait is generous and nothing is timed: the tests wait for what the binary prints.

use std::fs::{self};
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Command, Stdio};

use familiar_testkit::dbus::{DbusDaemon, start_notification_server};

mod common;

use common::watch::*;

#[test]
fn the_project_directory_deleted_and_recreated_is_followed_again() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let project = tmp.path().join("proj");
    fs::create_dir_all(&project).expect("mkdir");
    let project = project.canonicalize().expect("canonical");
    let dir = encoded_project_dir(&config, &project);
    fs::create_dir_all(&dir).expect("mkdir project dir");
    let project_arg = project.to_str().expect("UTF-8");
    let mut watch = Watch::start(&config, &project, &["--project", project_arg]);

    let bytes = with_cwd(&real_fixture_bytes(FIXTURE), &project);
    let first = dir.join("first.jsonl");
    append(&first, &bytes);
    append(&first, sentinel("before-delete").as_bytes());
    assert!(!watch.events_until("before-delete").is_empty());

    // Claude Code's project directory goes away (the user cleaned ~/.claude/projects) ...
    fs::remove_dir_all(&dir).expect("delete the project dir");
    watch.wait_stderr("was deleted");
    // ... and comes back with a new session in it.
    fs::create_dir_all(&dir).expect("recreate the project dir");
    let second = dir.join("second.jsonl");
    append(&second, &bytes);
    append(&second, sentinel("after-recreate").as_bytes());
    let got = without_status(watch.events_until("after-recreate"));

    let copy = tmp.path().join("second.jsonl");
    fs::write(&copy, &bytes).expect("copy");
    // `status` events are left out on both sides: live ones also come from timers.
    let want = without_status(familiar_events(&copy));
    assert!(!want.is_empty());
    assert_eq!(got, want, "every record of the new session, once");
    let status = watch.interrupt();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn a_script_deleted_while_watching_keeps_its_old_version_running() {
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
    let mut watch = Watch::start(
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
    let mine = |needle: &str| -> serde_json::Value {
        let line = watch
            .lines_until(needle)
            .into_iter()
            .chain(std::iter::once(String::new()))
            .find(|line| line.contains("\"name\":\"mine\""))
            .unwrap_or_default();
        serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("no `mine` action before {needle:?}: {}", watch.stderr()))
    };

    append(&path, prompt_record("one").as_bytes());
    append(&path, sentinel("after-one").as_bytes());
    assert_eq!(mine("after-one")["data"]["text"], "one");

    fs::remove_file(&script).expect("delete the script");
    // Told clearly, once the deletion has settled...
    watch.wait_stderr("cannot read script");
    watch.wait_stderr("the previous version keeps running");
    // ...and a prompt after the deletion: the host must not have dropped (or half-reloaded) it.
    append(&path, prompt_record("two").as_bytes());
    append(&path, sentinel("after-two").as_bytes());
    let second = mine("after-two");
    assert_eq!(
        (
            second["data"]["version"].as_i64(),
            second["data"]["text"].as_str()
        ),
        (Some(1), Some("two")),
        "the old script still runs"
    );
    let status = watch.interrupt();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn events_from_stdin_stop_quietly_when_the_reader_goes_away_mid_stream() {
    // `cat big.jsonl | familiar events - | head -1`: the reader closes while familiar is still
    // reading stdin and printing. (`tests/events_and_stats.rs` closes stdout before anything is
    // printed, on a file.)
    let bytes = real_fixture_bytes("v2.1.39-spotter-compact-queue-progress.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .args(["events", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        // Several copies: far more than a pipe buffer, so familiar is mid-stream when the
        // reader leaves. A write error here is familiar having ended, which is the point.
        for _ in 0..8 {
            if stdin.write_all(&bytes).is_err() {
                break;
            }
        }
    });
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    assert!(first.starts_with("{\"kind\":"), "{first}");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let status = child.wait().expect("wait");
    writer.join().expect("writer thread");
    assert_eq!(stderr, "", "no broken-pipe message");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn run_stops_quietly_when_the_reader_goes_away() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let input = tmp.path().join("big.jsonl");
    let bytes = real_fixture_bytes("v2.1.39-spotter-compact-queue-progress.jsonl");
    fs::write(&input, bytes.repeat(4)).expect("input");
    let script = tmp.path().join("every.rhai");
    // An action for every event: far more output than a pipe buffer holds.
    fs::write(
        &script,
        "fn on_event(ev) { emit(\"seen\", #{ kind: ev.kind }); }\n",
    )
    .expect("script");
    let mut child = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("run")
        .arg(&script)
        .arg("--input")
        .arg(&input)
        .env("HOME", tmp.path())
        .env("XDG_CONFIG_HOME", tmp.path().join(".config"))
        .env_remove("FAMILIAR_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    assert!(first.contains("\"seen\""), "{first}");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let status = child.wait().expect("wait");
    assert!(
        !stderr.to_lowercase().contains("broken pipe"),
        "no broken-pipe message: {stderr}"
    );
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn the_session_bus_dying_mid_run_leaves_the_pipeline_running() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut daemon = DbusDaemon::start(tmp.path());
    let notified = start_notification_server(&daemon.address);
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("session.jsonl");
    // Notifies on every prompt: the shipped scripts debounce theirs by the wall clock.
    let script = tmp.path().join("loud.rhai");
    fs::write(
        &script,
        "fn on_prompt(ev) { notify(\"prompt\", ev.text); }\n",
    )
    .expect("script");
    let mut watch = Watch::start_on_bus(
        &config,
        tmp.path(),
        &[
            "--wait",
            "--file",
            path.to_str().expect("UTF-8"),
            "--script",
            script.to_str().expect("UTF-8"),
        ],
        &daemon.address,
    );

    append(&path, prompt_record("while-the-bus-lives").as_bytes());
    let call = notified
        .recv_timeout(WAIT)
        .unwrap_or_else(|_| panic!("no notification reached the server: {}", watch.stderr()));
    assert_eq!(call.body, "while-the-bus-lives");
    watch.lines_until("while-the-bus-lives");

    daemon.kill();
    for (i, text) in ["after-the-bus-died", "and-still-going"].iter().enumerate() {
        append(&path, prompt_record(text).as_bytes());
        let mark = format!("mark-{i}");
        append(&path, sentinel(&mark).as_bytes());
        let printed = watch.lines_until(&mark);
        assert!(
            printed
                .iter()
                .any(|line| line.starts_with("{\"action\":\"notify\"") && line.contains(*text)),
            "the notify action for {text:?} is still printed: {}",
            watch.stderr()
        );
    }
    watch.wait_stderr("desktop notifications unavailable");
    append(&path, sentinel("bus-end").as_bytes());
    watch.lines_until("bus-end");
    let status = watch.interrupt();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
    assert!(notified.try_recv().is_err(), "nothing reached a dead bus");
}

/// A replay or the demo is not happening now: on a desktop with a notification server it
/// leaves nothing behind (the bundled demo ends on an API error the shipped scripts notify
/// for); `--notify` sends them, as asked.
#[test]
fn demo_and_replay_notify_the_desktop_only_when_asked() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let daemon = DbusDaemon::start(tmp.path());
    let notified = start_notification_server(&daemon.address);
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_familiar"))
            .args(args)
            .args(["--headless", "--speed", "1000"])
            .env("DBUS_SESSION_BUS_ADDRESS", &daemon.address)
            .env("HOME", tmp.path())
            .env("XDG_CONFIG_HOME", tmp.path().join(".config"))
            .env("XDG_DATA_HOME", tmp.path().join(".local/share"))
            .env_remove("FAMILIAR_CONFIG")
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .expect("familiar runs");
        assert!(output.status.success(), "{args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let demo = run(&["demo"]);
    // The scripts did ask (headless prints every action), and nothing reached the desktop.
    assert!(demo.contains("\"action\":\"notify\""), "{demo}");
    let replay = common::fixture("claude-2.1.197/overload.jsonl");
    run(&["replay", replay.to_str().expect("UTF-8")]);
    assert!(
        notified
            .recv_timeout(std::time::Duration::from_secs(2))
            .is_err(),
        "a replay notified the desktop"
    );
    run(&["demo", "--notify"]);
    let call = notified
        .recv_timeout(WAIT)
        .expect("--notify sends the demo's notifications");
    assert_eq!(call.app_name, "Familiar");
}
