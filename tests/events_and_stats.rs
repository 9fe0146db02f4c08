//! End-to-end tests of `familiar events` and `familiar stats`: the real binary, real files.

mod common;

use common::{Test, assert_ends_quietly_with_stdout_closed, fixture, ndjson, real_fixture};

#[test]
fn events_prints_one_json_object_per_event() {
    let output = Test::new()
        .arg("events")
        .arg(fixture("split-message-usage.jsonl"))
        .stderr("")
        .run();
    let events = ndjson(&output);
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "session_start",
            "prompt",
            "thinking",
            "text",
            "reading",
            "text",
            "success",
            "status"
        ]
    );
    let reading = &events[4];
    assert_eq!(reading["tool"], "Read");
    assert_eq!(reading["target"], "/home/user/proj/src/main.rs");
    assert_eq!(reading["line"], 4);
    assert_eq!(reading["context_used"], 20_310);
    assert_eq!(reading["context_limit"], 200_000);
    // A tool waiting for its result is at work: no record says a dialog is open.
    assert_eq!(reading["status"], "working");
    assert_eq!(reading["agent"], serde_json::Value::Null);
}

#[test]
fn events_reads_stdin_with_a_dash() {
    let input = std::fs::read(fixture("meta-and-injected-user-records.jsonl")).expect("fixture");
    let output = Test::new().args(["events", "-"]).stdin(input).run();
    let events = ndjson(&output);
    assert_eq!(events.len(), 2);
    assert_eq!(events[1]["text"], "the only real prompt");
}

#[test]
fn skipped_lines_are_reported_on_stderr_with_file_and_line_and_exit_zero() {
    let path = fixture("malformed-line.jsonl");
    let name = path.display().to_string();
    let output = Test::new()
        .arg("events")
        .arg(&path)
        .stderr(format!(
            "familiar: {name}:2: malformed JSON: EOF while parsing a string at line 1 column 58\n\
             familiar: {name}:3: not a JSON object\n\
             familiar: {name}:4: not a JSON object\n"
        ))
        .run();
    assert_eq!(ndjson(&output).len(), 3);
}

#[test]
fn a_file_that_cannot_be_opened_is_a_clear_error_with_exit_one() {
    Test::new()
        .args(["events", "/nonexistent/session.jsonl"])
        .status(1)
        .stderr("familiar: cannot open /nonexistent/session.jsonl: No such file or directory (os error 2)\n")
        .run();
}

#[test]
fn other_files_are_still_read_when_one_is_missing() {
    let output = Test::new()
        .arg("events")
        .arg("/nonexistent.jsonl")
        .arg(fixture("meta-and-injected-user-records.jsonl"))
        .status(1)
        .run();
    assert_eq!(ndjson(&output).len(), 2);
}

#[test]
fn an_unknown_option_is_a_usage_error_with_exit_two() {
    Test::new()
        .args(["events", "--no-such-flag"])
        .status(2)
        .stderr_contains("unexpected argument '--no-such-flag'")
        .run();
}

#[test]
fn stats_json_reports_counts_tokens_and_cost_per_file() {
    let output = Test::new()
        .args(["stats", "--json"])
        .arg(fixture("errors-each-kind.jsonl"))
        .arg(real_fixture(
            "v2.0.65-slopometry-api-error-compact-summary.jsonl",
        ))
        .run();
    let stats = ndjson(&output);
    assert_eq!(stats.len(), 2);
    let errors = &stats[0];
    assert_eq!(errors["errors"]["tool"], 1);
    assert_eq!(errors["errors"]["api"], 2);
    assert_eq!(errors["errors"]["rejected"], 1);
    assert_eq!(errors["errors"]["interrupted"], 1);
    assert_eq!(errors["prompts"], 2);
    assert_eq!(errors["tool_calls"]["Bash"], 1);
    assert_eq!(errors["files_modified"][0], "/home/user/proj/src/lib.rs");
    assert_eq!(errors["duration_ms"], 66_000);
    let real = &stats[1];
    assert_eq!(real["compactions"], 1);
    assert_eq!(real["events"]["success"], 13);
    assert_eq!(real["session"], "0f112eb4-a676-476d-8986-d6c78693cd5b");
    assert!(real["cost_usd"].as_f64().is_some_and(|cost| cost > 1.0));
}

#[test]
fn stats_prices_file_overrides_the_table() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prices = dir.path().join("prices.toml");
    std::fs::write(
        &prices,
        "[models.sonnet]\ninput = 1000000.0\noutput = 0.0\ncache_write = 0.0\ncache_read = 0.0\n",
    )
    .expect("write prices");
    let output = Test::new()
        .args(["stats", "--json", "--prices"])
        .arg(&prices)
        .arg(fixture("context-over-200k.jsonl"))
        .run();
    // 8 input tokens at $1 per token.
    assert_eq!(ndjson(&output)[0]["cost_usd"], 8.0);
}

#[test]
fn an_invalid_prices_file_is_an_error_with_its_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prices = dir.path().join("prices.toml");
    std::fs::write(&prices, "[models.sonnet]\ninput = \"cheap\"\n").expect("write prices");
    Test::new()
        .args(["stats", "--prices"])
        .arg(&prices)
        .arg(fixture("context-over-200k.jsonl"))
        .status(1)
        .stderr_contains("invalid price file")
        .stderr_contains("line 2")
        .run();
}

#[test]
fn stats_readable_summary_names_the_session_and_context() {
    Test::new()
        .arg("stats")
        .arg(fixture("compaction-with-post-tokens.jsonl"))
        .stdout_contains("session 5b2c0c1e-7d1a-4c43-9a55-0a4cfe1f3f10")
        .stdout_contains("context      23,008 / 200,000 tokens (12%)")
        .stdout_contains("compactions 1")
        .run();
}

#[test]
fn regression_closed_stdout_ends_quietly() {
    // `familiar events big.jsonl | head -1` must not print a broken-pipe error.
    let path = real_fixture("v2.1.39-spotter-compact-queue-progress.jsonl");
    assert_ends_quietly_with_stdout_closed([std::ffi::OsStr::new("events"), path.as_os_str()]);
}

#[test]
fn a_binary_file_is_not_a_transcript_in_a_few_lines_not_one_per_line() {
    // The first 4 KiB of a PNG, kept as a fixture: a sprite sheet that is regenerated would
    // change the line count this golden names.
    Test::new()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["events", "fixtures/binary-not-a-transcript.bin"])
        .status(1)
        .stdout("")
        .stderr(
            "familiar: fixtures/binary-not-a-transcript.bin:1: invalid UTF-8 at byte 0\n\
             familiar: fixtures/binary-not-a-transcript.bin:2: not a JSON object\n\
             familiar: fixtures/binary-not-a-transcript.bin:3: invalid UTF-8 at byte 15\n\
             familiar: not a transcript: fixtures/binary-not-a-transcript.bin: none of its 14 \
             line(s) is a JSON record (JSONL, stream-json or a JSON array expected)\n",
        )
        .run();
}

/// `familiar events` on one input, as it prints alone: (stdout, stderr, exit code).
fn events_alone(path: &std::path::Path) -> (Vec<u8>, String, Option<i32>) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("events")
        .arg(path)
        .output()
        .expect("run familiar events");
    (
        output.stdout,
        String::from_utf8_lossy(&output.stderr).into_owned(),
        output.status.code(),
    )
}

#[test]
fn many_inputs_are_read_at_once_and_printed_in_input_order() {
    // No input holds most of the bytes, so they are read one per core; what comes out must be
    // what reading them one after the other gives: each input's events, warnings and errors,
    // in input order.
    let inputs = [
        real_fixture("v2.0.65-slopometry-api-error-compact-summary.jsonl"),
        fixture("malformed-line.jsonl"),
        std::path::PathBuf::from("/nonexistent/session.jsonl"),
        real_fixture("v2.1.39-spotter-compact-queue-progress.jsonl"),
        fixture("binary-not-a-transcript.bin"),
        real_fixture("v2.1.56-erk-api-error-turn-duration.jsonl"),
        fixture("split-message-usage.jsonl"),
    ];
    let (mut stdout, mut stderr) = (Vec::new(), String::new());
    for path in &inputs {
        let (out, err, _) = events_alone(path);
        stdout.extend(out);
        stderr += &err;
    }
    // Several pieces of NDJSON per real input (a piece is 64 KiB).
    assert!(
        stdout.len() > 400_000,
        "the real inputs give thousands of events"
    );
    let output = Test::new()
        .arg("events")
        .args(&inputs)
        .status(1)
        .stderr(stderr)
        .run();
    assert!(
        output.stdout == stdout,
        "stdout differs from the inputs read one by one"
    );
}

#[test]
fn regression_closed_stdout_ends_quietly_when_reading_many_inputs() {
    assert_ends_quietly_with_stdout_closed([
        "events".into(),
        real_fixture("v2.0.65-slopometry-api-error-compact-summary.jsonl"),
        real_fixture("v2.1.39-spotter-compact-queue-progress.jsonl"),
        real_fixture("v2.1.56-erk-api-error-turn-duration.jsonl"),
    ]);
}
