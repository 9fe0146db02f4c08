//! `familiar replay` and `familiar demo` end to end (headless): with no pauses (`--max-gap 0`,
//! so nothing sleeps) a replay with `--events` prints the events `familiar events` prints for
//! the same file, plus the status events of the session model's timers (run at the records'
//! own times), each followed by the actions the shipped scripts make of it; the
//! demo replays the bundled transcript; errors exit 1; a closed stdout ends a replay cleanly.

mod common;

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use common::{Test, fixture, ndjson, real_fixture};

fn isolated() -> Test {
    Test::new()
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/familiar-test-bus",
        )
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("FAMILIAR_CONFIG")
}

#[test]
fn replay_prints_the_same_events_as_the_events_command() {
    for file in [
        real_fixture("v2.1.39-spotter-compact-queue-progress.jsonl"),
        real_fixture("stream-json-v2.1.3-gleam-init-tool-success.jsonl"),
        fixture("errors-each-kind.jsonl"),
        // A Codex rollout: the same events, and the shipped scripts act on them unchanged.
        fixture("codex-0.169.0/main.jsonl"),
    ] {
        let events = isolated().arg("events").arg(&file).run();
        let replayed = isolated()
            .arg("replay")
            .arg(&file)
            .args([
                "--headless",
                "--events",
                "--max-gap",
                "0",
                "--speed",
                "1000",
            ])
            .run();
        assert!(!events.stdout.is_empty());
        let (event_lines, action_lines) = split_events_and_actions(&replayed.stdout);
        let offline: Vec<&str> = std::str::from_utf8(&events.stdout)
            .expect("UTF-8")
            .lines()
            .collect();
        // Every event of `familiar events`, in order; what the model adds is its timers'
        // status events only.
        let mut extra = Vec::new();
        let mut expected = offline.iter().peekable();
        for line in event_lines.lines() {
            if expected.peek().copied() == Some(&line) {
                expected.next();
            } else {
                extra.push(line);
            }
        }
        assert_eq!(
            expected.next(),
            None,
            "{}: an event is missing",
            file.display()
        );
        for line in extra {
            let event: serde_json::Value = serde_json::from_str(line).expect("an event");
            assert_eq!(event["kind"], "status", "{}: {line}", file.display());
        }
        assert!(
            !action_lines.is_empty(),
            "the shipped scripts act on {}",
            file.display()
        );
    }
}

/// Event lines (they have `kind`) and action lines (they have `action`), each in order.
fn split_events_and_actions(stdout: &[u8]) -> (String, Vec<serde_json::Value>) {
    let mut events = String::new();
    let mut actions = Vec::new();
    for line in String::from_utf8_lossy(stdout).lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("NDJSON");
        if value.get("action").is_some() {
            actions.push(value);
        } else {
            // The session model tells a session's project once; `familiar events` does not.
            events.push_str(&common::watch::offline_form(line));
            events.push('\n');
        }
    }
    (events, actions)
}

#[test]
fn headless_replay_prints_the_actions_of_the_shipped_scripts() {
    let out = isolated()
        .args(["replay", "--headless", "--max-gap", "0"])
        .arg(fixture("errors-each-kind.jsonl"))
        .run();
    let actions = ndjson(&out);
    assert!(
        actions.iter().all(|a| a.get("action").is_some()),
        "only actions without --events"
    );
    let notify: Vec<_> = actions
        .iter()
        .filter(|a| a["action"] == "notify")
        .map(|a| (a["line"].as_u64(), a["script"].as_str()))
        .collect();
    // The tool error (line 3), the API connection error (8) and the rate limit (9) notify;
    // the rejection (5) and the interrupt (6) do not.
    let script = Some("notify-errors.rhai");
    assert_eq!(
        notify,
        [(Some(3), script), (Some(8), script), (Some(9), script)]
    );
    assert!(
        actions
            .iter()
            .any(|a| a["action"] == "animate" && a["name"] == "hurt")
    );
}

#[test]
fn demo_replays_the_bundled_transcript() {
    let demo = isolated()
        .args(["demo", "--headless", "--events", "--max-gap", "0"])
        .run();
    let events = isolated().arg("events").arg(fixture("demo.jsonl")).run();
    let (event_lines, actions) = split_events_and_actions(&demo.stdout);
    assert_eq!(
        event_lines,
        String::from_utf8_lossy(&events.stdout),
        "the demo is fixtures/demo.jsonl"
    );
    for action in ["quest", "animate", "rest", "companion_spawn", "xp"] {
        assert!(
            actions.iter().any(|a| a["action"] == action),
            "{action} missing"
        );
    }
    let lines = ndjson(&events);
    let kinds: Vec<&str> = lines
        .iter()
        .filter_map(|event| event["kind"].as_str())
        .collect();
    assert_eq!(kinds.first(), Some(&"session_start"));
    // The turn's end, then the status it leaves.
    assert_eq!(&kinds[kinds.len() - 2..], ["success", "status"]);
    for kind in ["error", "compact_boundary", "subagent_start", "writing"] {
        assert!(kinds.contains(&kind), "{kind} missing: {kinds:?}");
    }
}

/// Issue 14: the level never rose during the demo. Its XP now crosses level 2 (10 XP), and the
/// shipped script says so, every time: the demo starts from level 1 and saves nothing.
#[test]
fn the_demo_earns_a_level_up_every_time() {
    for run in 0..2 {
        let data = tempfile::tempdir().expect("temp data dir");
        let demo = isolated()
            .env("XDG_DATA_HOME", data.path())
            .args(["demo", "--headless", "--max-gap", "0"])
            .run();
        let (_, actions) = split_events_and_actions(&demo.stdout);
        let xp: i64 = actions
            .iter()
            .filter(|a| a["action"] == "xp")
            .filter_map(|a| a["amount"].as_i64())
            .sum();
        assert!(
            xp >= 10,
            "run {run}: the demo earns {xp} XP, level 2 takes 10"
        );
        assert!(
            actions
                .iter()
                .any(|a| a["action"] == "say" && a["text"] == "Level 2!"),
            "run {run}"
        );
        assert!(
            actions
                .iter()
                .any(|a| a["action"] == "sound" && a["name"] == "level_up"),
            "run {run}"
        );
        let saved = std::fs::read_dir(data.path())
            .map(|d| d.count())
            .unwrap_or(0);
        assert_eq!(saved, 0, "the demo saves no progress or store");
    }
}

#[test]
fn replay_errors_exit_1() {
    let test = isolated();
    let missing = test.home().join("missing.jsonl");
    test.arg("replay")
        .arg(&missing)
        .status(1)
        .stderr_contains("cannot open")
        .run();

    let test = isolated();
    let empty = test.home().join("empty.jsonl");
    std::fs::write(&empty, "").expect("empty file");
    test.arg("replay")
        .arg(&empty)
        .status(1)
        .stderr_contains("has no events to replay")
        .run();
}

#[test]
fn a_closed_stdout_ends_the_replay_cleanly() {
    let home = tempfile::tempdir().expect("home");
    let mut child = Command::new(env!("CARGO_BIN_EXE_familiar"))
        // Realtime would take minutes: the reader leaves after the first line.
        .args(["replay", "--headless", "--events", "--realtime"])
        .arg(fixture("demo.jsonl"))
        .env("HOME", home.path())
        .env("CLAUDE_CONFIG_DIR", home.path().join(".claude"))
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/familiar-test-bus",
        )
        .env_remove("FAMILIAR_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("familiar starts");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("first line");
    assert!(first.contains("\"session_start\""), "{first}");
    // The demo's next events come within seconds: the write after the close fails with
    // EPIPE and the replay stops.
    drop(stdout);
    let out = child.wait_with_output().expect("familiar ends");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Skipped lines are told as `events` tells them: the first three, then how many in all (a
/// replay printed one line per bad line).
#[test]
fn a_replay_tells_its_skipped_lines_as_every_command_does() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("broken.jsonl");
    let mut text = std::fs::read_to_string(fixture("demo.jsonl")).expect("demo");
    text.push_str(&"{not json\n".repeat(5));
    std::fs::write(&path, text).expect("write");
    let output = isolated()
        .args(["replay", "--headless", "--speed", "1000"])
        .arg(&path)
        .run();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let told: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("broken.jsonl"))
        .collect();
    assert_eq!(told.len(), 4, "{stderr}");
    assert!(told[0].starts_with("familiar: ") && told[0].contains(": malformed JSON"));
    assert!(
        told[3].ends_with("2 more line(s) skipped, 5 in all"),
        "{stderr}"
    );
}
