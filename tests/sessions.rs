//! `familiar sessions` against `familiar watch`: both read the same transcripts through the
//! same session model, so the table `sessions --json` prints is exactly the `snapshot` events
//! `watch` starts with. And a replay of a summary-first transcript is one session, and a
//! deleted project's Codex rollouts are still its sessions.

mod common;

use std::path::PathBuf;

use common::watch::Watch;
use common::{Test, ndjson, real_fixture};
use serde_json::Value;

/// A config dir with three real sessions in two projects, one with a finished subagent.
fn config_with_real_sessions() -> tempfile::TempDir {
    let config = tempfile::tempdir().expect("temp config");
    let projects = config.path().join("projects");
    let spotter = projects.join("-home-u-spotter");
    let session = "258c7280-ae70-4798-800f-63464d01a85d";
    let subagents = spotter.join(session).join("subagents");
    std::fs::create_dir_all(&subagents).expect("dirs");
    let copy = |name: &str, to: PathBuf| {
        std::fs::copy(real_fixture(name), to).expect("copy fixture");
    };
    copy(
        "v2.1.39-spotter-compact-queue-progress.jsonl",
        spotter.join(format!("{session}.jsonl")),
    );
    copy(
        "v2.1.39-spotter-subagent-agent-a881341.jsonl",
        subagents.join("agent-a881341.jsonl"),
    );
    let erk = projects.join("-home-u-erk");
    std::fs::create_dir_all(&erk).expect("dirs");
    copy(
        "v2.1.56-erk-api-error-turn-duration.jsonl",
        erk.join("393e5f27-e608-4173-adcc-fcef1abcc750.jsonl"),
    );
    copy(
        "v2.0.65-slopometry-api-error-compact-summary.jsonl",
        erk.join("b2c9a6e4-d0e7-4b6f-a1b4-2f6f0f3d9a11.jsonl"),
    );
    config
}

#[test]
fn sessions_json_agrees_with_the_snapshots_watch_starts_with() {
    let config = config_with_real_sessions();
    let output = Test::new()
        .args(["sessions", "--all", "--json"])
        .env("CLAUDE_CONFIG_DIR", config.path())
        .run();
    let table: Value = serde_json::from_slice(&output.stdout).expect("one JSON array");
    let rows = table.as_array().expect("an array");
    assert_eq!(rows.len(), 3, "{table:#}");
    for row in rows {
        assert_eq!(row["status"], "idle", "months-old sessions are idle");
        assert!(
            row["cwd"].is_string() && row["context_used"].is_u64(),
            "{row:#}"
        );
        assert_eq!(
            row["subagents"],
            serde_json::json!([]),
            "the subagent finished"
        );
    }

    let watch = Watch::start(config.path(), config.path(), &["--all"]);
    let snapshot_events: Vec<Value> = watch
        .next_lines(rows.len())
        .iter()
        .map(|line| serde_json::from_str(line).expect("JSON"))
        .collect();
    assert!(
        snapshot_events
            .iter()
            .all(|event| event["kind"] == "snapshot"),
        "watch starts with the snapshots and replays no old event: {snapshot_events:#?}"
    );
    drop(watch);
    for row in rows {
        let event = snapshot_events
            .iter()
            .find(|event| event["session"] == row["session"])
            .unwrap_or_else(|| panic!("no snapshot event for {}", row["session"]));
        for field in [
            "status",
            "context_used",
            "context_limit",
            "model",
            "cwd",
            "git_branch",
            "line",
        ] {
            assert_eq!(event[field], row[field], "{field} of {}", row["session"]);
        }
        assert_eq!(event["ts"], row["last_record"]);
    }
}

#[test]
fn a_summary_first_transcript_replays_as_one_session() {
    // Regression: replaying a transcript that opens with `summary` records showed a phantom
    // second familiar for the summaries, which name no session.
    let output = Test::new()
        .args([
            "replay",
            "--headless",
            "--events",
            "--no-notify",
            "--max-gap",
            "0",
        ])
        .arg(real_fixture(
            "v2.0.65-slopometry-api-error-compact-summary.jsonl",
        ))
        .run();
    let lines = ndjson(&output);
    let sessions: std::collections::BTreeSet<String> = lines
        .iter()
        .filter(|line| line.get("kind").is_some() && line["sidechain"] == false)
        .map(|line| line["session"].to_string())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert!(!sessions.contains("null"));
    assert!(
        lines
            .iter()
            .any(|line| line["action"].is_string() && line["session"] != Value::Null),
        "actions follow their events' session"
    );
}

#[test]
fn the_configured_model_was_not_a_source_of_the_window() {
    // The transcripts say `claude-opus-4-6` and `-4-5`; a user who configured `opus[1m]`
    // (settings.json `model`, else ANTHROPIC_MODEL) runs them with 1M.
    let limits = |config: &tempfile::TempDir, env: Option<&str>| -> Vec<u64> {
        let mut test = Test::new()
            .args(["sessions", "--all", "--json"])
            .env("CLAUDE_CONFIG_DIR", config.path());
        if let Some(model) = env {
            test = test.env("ANTHROPIC_MODEL", model);
        }
        let table: Value = serde_json::from_slice(&test.run().stdout).expect("JSON");
        let mut limits: Vec<u64> = table
            .as_array()
            .expect("an array")
            .iter()
            .map(|row| row["context_limit"].as_u64().unwrap_or(0))
            .collect();
        limits.sort();
        limits
    };
    let config = config_with_real_sessions();
    assert_eq!(limits(&config, None), [200_000; 3]);
    assert_eq!(limits(&config, Some("opus[1m]")), [1_000_000; 3]);
    // A full id names only the sessions that run it (two run claude-opus-4-6, one 4-5).
    std::fs::write(
        config.path().join("settings.json"),
        r#"{"model": "claude-opus-4-6[1m]"}"#,
    )
    .expect("settings");
    assert_eq!(limits(&config, None), [200_000, 1_000_000, 1_000_000]);
    // settings.json wins over the environment; a model the sessions do not run says nothing.
    std::fs::write(
        config.path().join("settings.json"),
        r#"{"model": "sonnet[1m]"}"#,
    )
    .expect("settings");
    assert_eq!(limits(&config, Some("opus[1m]")), [200_000; 3]);
}

/// Issue 25: `--project DIR` for a directory that is gone (a deleted worktree), which a real
/// Codex 0.171 rollout names as its `cwd`, lists that session instead of exiting 1.
#[test]
fn a_deleted_project_lists_the_codex_rollouts_written_in_it() {
    let test = Test::new();
    let gone = test.home().join("deleted-worktree");
    let rollout = std::fs::read_to_string(common::fixture("codex-0.171.0/main.jsonl"))
        .expect("fixtures/codex-0.171.0/main.jsonl");
    let gone_text = gone.to_str().expect("UTF-8 temp dir");
    let rollout = rollout.replace("/tmp/familiar-codex/project", gone_text);
    let day = test.home().join(".codex/sessions/2026/11/27");
    std::fs::create_dir_all(&day).expect("sessions dir");
    let id = "01a21e24-8173-7d71-a2b0-e0c1f361228a";
    std::fs::write(
        day.join(format!("rollout-2026-11-27T17-53-59-{id}.jsonl")),
        rollout,
    )
    .expect("write rollout");
    assert!(!gone.exists());
    let output = test
        .args(["sessions", "--json", "--project"])
        .arg(&gone)
        .status(0)
        .run();
    let rows: Vec<Value> = serde_json::from_slice(&output.stdout).expect("one JSON array");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["agent_kind"], "codex");
    assert_eq!(rows[0]["session"], id);
    assert_eq!(rows[0]["cwd"], gone_text);
}

/// A session the CLI keeps a sessions file for, waiting on a permission prompt: `familiar
/// sessions` says so with no hook installed, and a file whose process is gone says nothing.
#[test]
fn sessions_takes_the_status_a_running_cli_keeps_in_its_sessions_folder() {
    let config = config_with_real_sessions();
    let sessions = config.path().join("sessions");
    std::fs::create_dir_all(&sessions).expect("sessions dir");
    let waiting = |session: &str, pid: u32| {
        serde_json::json!({
            "pid": pid, "sessionId": session, "kind": "interactive", "status": "waiting",
            "waitingFor": "permission prompt", "statusUpdatedAt": 1_795_802_273_895_u64,
        })
        .to_string()
    };
    // A running CLI (this test's own process stands for it).
    let running = std::process::id();
    std::fs::write(
        sessions.join(format!("{running}.json")),
        waiting("393e5f27-e608-4173-adcc-fcef1abcc750", running),
    )
    .expect("write");
    // A CLI that crashed and left its file.
    let mut gone = std::process::Command::new("true").spawn().expect("true");
    let gone_pid = gone.id();
    gone.wait().expect("wait");
    std::fs::write(
        sessions.join(format!("{gone_pid}.json")),
        waiting("258c7280-ae70-4798-800f-63464d01a85d", gone_pid),
    )
    .expect("write");
    let output = Test::new()
        .args(["sessions", "--all", "--json"])
        .env("CLAUDE_CONFIG_DIR", config.path())
        .run();
    let table: Value = serde_json::from_slice(&output.stdout).expect("one JSON array");
    let status = |session: &str| {
        table
            .as_array()
            .expect("rows")
            .iter()
            .find(|row| row["session"] == session)
            .map(|row| row["status"].clone())
            .expect("the session's row")
    };
    assert_eq!(
        status("393e5f27-e608-4173-adcc-fcef1abcc750"),
        "waiting_for_approval",
        "{table:#}"
    );
    assert_eq!(status("258c7280-ae70-4798-800f-63464d01a85d"), "idle");
}

/// A user in `~/code/app/src` means `~/code/app`: the nearest directory above with sessions
/// (it found nothing from a subdirectory).
#[test]
fn sessions_are_found_from_a_subdirectory_of_the_project() {
    let test = Test::new().args(["sessions", "--json"]);
    let app = test.home().join("code/app");
    let src = app.join("src/deep");
    std::fs::create_dir_all(&src).expect("mkdir");
    common::watch::demo_session_in(&test.home().join(".claude"), &app);
    let output = test.current_dir(&src).run();
    let table: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let rows = table.as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{table:#}");
    assert_eq!(rows[0]["session"], "d3m0d3m0-0000-4000-8000-00000000f00d");
}

/// Date a file's last write `days` ago.
fn age(path: &std::path::Path, days: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open to date");
    let when = std::time::SystemTime::now() - std::time::Duration::from_secs(days * 86_400);
    file.set_modified(when).expect("set the mtime");
}

#[test]
fn sessions_not_written_for_a_day_are_counted_not_read_until_since_says_so() {
    let config = config_with_real_sessions();
    let erk = config.path().join("projects/-home-u-erk");
    let old = erk.join("393e5f27-e608-4173-adcc-fcef1abcc750.jsonl");
    age(&old, 40);
    age(&erk.join("b2c9a6e4-d0e7-4b6f-a1b4-2f6f0f3d9a11.jsonl"), 3);
    let rows = |since: Option<&str>| {
        let mut test = Test::new()
            .args(["sessions", "--all", "--json"])
            .env("CLAUDE_CONFIG_DIR", config.path());
        if let Some(since) = since {
            test = test.args(["--since", since]);
        }
        let output = test.run();
        let table: Value = serde_json::from_slice(&output.stdout).expect("one JSON array");
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        (table.as_array().expect("an array").len(), stderr)
    };
    let (listed, stderr) = rows(None);
    assert_eq!(listed, 1, "only the session written today");
    assert!(
        stderr.contains(
            "familiar: 2 transcripts not written in the last 1d were not read (`familiar \
             sessions --since 30d`, or `--since all`, reads them)"
        ),
        "{stderr}"
    );
    let (listed, stderr) = rows(Some("7d"));
    assert_eq!(listed, 2, "{stderr}");
    assert!(
        stderr.contains("1 transcript not written in the last 7d"),
        "{stderr}"
    );
    let (listed, stderr) = rows(Some("all"));
    assert_eq!(listed, 3);
    assert!(!stderr.contains("not read"), "{stderr}");

    Test::new()
        .args(["sessions", "--all", "--since", "lately"])
        .env("CLAUDE_CONFIG_DIR", config.path())
        .status(2)
        .stderr_contains("(a duration such as 3d or 12h, or `all`)")
        .run();

    // `watch` follows the old session and reads it once it is written again: its snapshot
    // first (its state from what it held), then only what is new.
    let watch = Watch::start(config.path(), config.path(), &["--all"]);
    let first = watch.next_lines(1);
    assert!(first[0].contains("\"kind\":\"snapshot\""), "{first:?}");
    assert!(
        !first[0].contains("393e5f27"),
        "the old session is not read: {first:?}"
    );
    let prompt = common::watch::prompt_record("back again")
        .replace("s-watch", "393e5f27-e608-4173-adcc-fcef1abcc750");
    common::watch::append(&old, prompt.as_bytes());
    let woken: Vec<Value> = watch
        .next_lines(2)
        .iter()
        .map(|line| serde_json::from_str(line).expect("JSON"))
        .collect();
    assert_eq!(woken[0]["kind"], "snapshot", "{woken:#?}");
    assert_eq!(woken[0]["session"], "393e5f27-e608-4173-adcc-fcef1abcc750");
    assert!(woken[0]["context_used"].is_u64(), "its state: {woken:#?}");
    assert_eq!(woken[1]["kind"], "prompt", "{woken:#?}");
    let lines = std::fs::read(&old)
        .expect("read")
        .iter()
        .filter(|b| **b == b'\n')
        .count();
    assert_eq!(woken[1]["line"], lines as u64, "its exact line number");
    drop(watch);

    // With nothing written today, `watch` says what it follows and what would show them now.
    for file in ["-home-u-erk/393e5f27-e608-4173-adcc-fcef1abcc750.jsonl"]
        .into_iter()
        .map(|name| config.path().join("projects").join(name))
        .chain(walk_jsonl(&config.path().join("projects/-home-u-spotter")))
    {
        age(&file, 2);
    }
    let watch = Watch::start(config.path(), config.path(), &["--all"]);
    watch.wait_stderr("familiar: no session written in the last 1d in ");
    watch.wait_stderr(
        "; 4 older transcript(s) are followed and read once written again (`--since all` reads \
         them now)",
    );
}

/// Every `*.jsonl` under `dir`.
fn walk_jsonl(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("list").flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk_jsonl(&path));
        } else if path.extension().is_some_and(|ext| ext == "jsonl") {
            found.push(path);
        }
    }
    found
}
