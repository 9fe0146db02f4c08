//! End-to-end tests of `familiar stats` tokens, cost and output: the real binary on files.
//! The usage fixtures are real Claude Code 2.1.56 records (ids, counts and text changed);
//! ccusage 20.0.24 gives the same costs for them (`bench/stats-vs-ccusage.sh`).

mod common;

use common::{Test, fixture, ndjson};

#[test]
fn one_hour_cache_writes_cost_twice_the_input_rate() {
    let output = Test::new()
        .args(["stats", "--json"])
        .arg(fixture("usage-1h-cache.jsonl"))
        .stderr("")
        .run();
    let stats = &ndjson(&output)[0];
    assert_eq!(stats["tokens"]["cache_creation"], 14_000);
    assert_eq!(stats["tokens"]["cache_creation_1h"], 10_000);
    // Opus 4.6: msg_A 10 in, 100 out, 20k reads, 10k one-hour writes at $10;
    // msg_B 10 in, 200 out, 30k reads, 4k five-minute writes at $6.25.
    assert_eq!(stats["cost_usd"], 0.1576);
}

#[test]
fn a_message_copied_into_another_file_counts_once() {
    let output = Test::new()
        .args(["stats", "--json"])
        .arg(fixture("usage-1h-cache.jsonl"))
        .arg(fixture("usage-copied-messages.jsonl"))
        // The same file twice is the same messages again.
        .arg(fixture("usage-1h-cache.jsonl"))
        .run();
    let stats = ndjson(&output);
    let costs: Vec<f64> = stats
        .iter()
        .filter_map(|s| s["cost_usd"].as_f64())
        .collect();
    // msg_A is in all three files and counts for the first; the copy adds only msg_C.
    assert_eq!(costs, [0.1576, 0.0313, 0.0]);
    assert_eq!(stats[1]["tokens"]["output"], 50);
    assert_eq!(stats[2]["tokens"]["output"], 0);
}

#[test]
fn readable_stats_of_two_files_end_with_a_total() {
    let output = Test::new()
        .current_dir(fixture(""))
        .args([
            "stats",
            "usage-1h-cache.jsonl",
            "usage-copied-messages.jsonl",
        ])
        .stderr("")
        .run();
    insta::assert_snapshot!(String::from_utf8_lossy(&output.stdout));
}

#[test]
fn an_empty_file_costs_zero_dollars_not_minus_zero() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").expect("write empty file");
    let output = Test::new().arg("stats").arg(&empty).run();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("cost (est.)  $0.00\n"), "{stdout}");
    assert!(!stdout.contains("-0"), "{stdout}");
    let json = Test::new().args(["stats", "--json"]).arg(&empty).run();
    let json = String::from_utf8_lossy(&json.stdout);
    assert!(json.contains("\"cost_usd\":0.0"), "{json}");
}

#[test]
fn stats_escapes_control_characters_in_tool_names_and_session_ids() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("hostile.jsonl");
    // A real tool_use record shape with terminal escapes in the session id and tool name.
    let record = serde_json::json!({
        "type": "assistant",
        "sessionId": "s\u{1b}]0;pwned\u{7}",
        "timestamp": "2026-02-25T16:28:45.000Z",
        "message": {
            "id": "msg_1", "model": "claude-opus-4-6", "role": "assistant", "type": "message",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash\u{1b}[2J", "input": {}}],
            "usage": {"input_tokens": 1, "output_tokens": 1}
        }
    });
    std::fs::write(&path, format!("{record}\n")).expect("write transcript");
    let output = Test::new().arg("stats").arg(&path).run();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        !stdout.contains('\u{1b}') && !stdout.contains('\u{7}'),
        "{stdout:?}"
    );
    assert!(stdout.contains("session s\\e]0;pwned\\x07"), "{stdout}");
    assert!(stdout.contains("Bash\\e[2J 1"), "{stdout}");
}

#[test]
fn a_misspelled_price_key_is_an_error_naming_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let prices = dir.path().join("prices.toml");
    std::fs::write(
        &prices,
        "[models.sonnet]\ninput = 3.0\noutput = 15.0\ncache_red = 0.3\n",
    )
    .expect("write prices");
    Test::new()
        .args(["stats", "--prices"])
        .arg(&prices)
        .arg(fixture("usage-1h-cache.jsonl"))
        .status(1)
        .stderr_contains("invalid price file")
        .stderr_contains("line 4")
        .stderr_contains("unknown field `cache_red`")
        .run();
}

#[test]
fn skipped_lines_are_reported_in_input_order_the_first_few_of_each_then_a_count() {
    // Files are read on every core, largest first; what they say comes out in input order,
    // and a binary file gives three lines and a count, not one line per line.
    Test::new()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "stats",
            "--json",
            "fixtures/malformed-line.jsonl",
            "fixtures/binary-not-a-transcript.bin",
            "fixtures/invalid-utf8.jsonl",
        ])
        .stderr(
            "familiar: fixtures/malformed-line.jsonl:2: malformed JSON: EOF while parsing a \
             string at line 1 column 58\n\
             familiar: fixtures/malformed-line.jsonl:3: not a JSON object\n\
             familiar: fixtures/malformed-line.jsonl:4: not a JSON object\n\
             familiar: fixtures/binary-not-a-transcript.bin:1: invalid UTF-8 at byte 0\n\
             familiar: fixtures/binary-not-a-transcript.bin:2: not a JSON object\n\
             familiar: fixtures/binary-not-a-transcript.bin:3: invalid UTF-8 at byte 15\n\
             familiar: fixtures/binary-not-a-transcript.bin: 12 more line(s) skipped, 15 in all\n\
             familiar: fixtures/invalid-utf8.jsonl:2: invalid UTF-8 at byte 209\n",
        )
        .run();
}

/// With no file and nothing on stdin (cron, an IDE task, `</dev/null`: the harness gives
/// `/dev/null`), `familiar stats` reads the project's sessions; piped data is read instead.
#[test]
fn with_nothing_on_stdin_stats_reads_the_projects_sessions() {
    let test = Test::new().arg("stats");
    let project = test.home().join("work/app");
    common::watch::demo_session_in(&test.home().join(".claude"), &project);
    let output = test
        .current_dir(&project)
        .stderr_contains("familiar: 1 transcripts of")
        .run();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("session d3m0d3m0-0000-4000-8000-00000000f00d"),
        "{stdout}"
    );
    assert!(!stdout.contains("<stdin>"), "{stdout}");
}
