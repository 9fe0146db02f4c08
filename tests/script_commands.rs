//! End-to-end tests of `familiar check`, `familiar run` and `familiar test`: the real binary,
//! the shipped scripts, real transcripts.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{Test, assert_ends_quietly_with_stdout_closed, fixture, ndjson, real_fixture};

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(name)
}

const SMALL: &str = "v2.1.38-spotter-local-command-tool-errors.jsonl";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).expect("write test file");
    path
}

#[test]
fn check_lists_handlers_functions_and_state() {
    Test::new()
        .args(["check".as_ref(), script("default.rhai").as_os_str()])
        .stdout(format!(
            "{}: ok\n  handlers: on_event\n  functions: turn_bonus(ev), banner(text)\n  \
             state: none\n  constants: XP\n",
            script("default.rhai").display()
        ))
        .stderr("")
        .run();
}

#[test]
fn check_prints_warnings_and_fails_on_errors_with_a_caret_excerpt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let warned = write(
        dir.path(),
        "warned.rhai",
        "fn on_eror(ev) { animate(\"hurt\"); }\n",
    );
    let broken = write(
        dir.path(),
        "broken.rhai",
        "let hits = 0;\nfn on_bash(ev) {\n    hits += 1\n    say(`${hits}`);\n}\n",
    );
    Test::new()
        .arg("check")
        .arg(&warned)
        .stdout(format!(
            "{}: ok with 1 warning(s)\n  handlers: none\n  functions: on_eror(ev)\n  state: none\n",
            warned.display()
        ))
        .stderr(
            "warned.rhai:1:4: warning: `on_eror` is not a handler Familiar calls; did you mean \
             `on_error`?\n  |\n1 | fn on_eror(ev) { animate(\"hurt\"); }\n  |    ^\n",
        )
        .run();
    Test::new()
        .args([
            "check".as_ref(),
            "--deny-warnings".as_ref(),
            warned.as_os_str(),
        ])
        .status(1)
        .run();
    Test::new()
        .arg("check")
        .arg(&warned)
        .arg(&broken)
        .status(1)
        .stdout_contains(format!("{}: error\n", broken.display()))
        .stderr_contains(
            "broken.rhai:4:5: error: Expecting ';' to terminate this statement\n  |\n4 |     \
             say(`${hits}`);\n  |     ^\n",
        )
        .run();
}

#[test]
fn run_prints_the_actions_of_a_real_transcript_as_ndjson() {
    let output = Test::new()
        .arg("run")
        .arg(script("default.rhai"))
        .arg(script("notify-errors.rhai"))
        .arg("--input")
        .arg(real_fixture(SMALL))
        .stderr("")
        .run();
    let actions = ndjson(&output);
    let brief: Vec<String> = actions
        .iter()
        .map(|a| {
            format!(
                "{} {} {} {}",
                a["line"],
                a["script"].as_str().unwrap_or_default(),
                a["action"].as_str().unwrap_or_default(),
                a.get("name")
                    .or_else(|| a.get("text"))
                    .or_else(|| a.get("title"))
                    .or_else(|| a.get("amount"))
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        brief,
        [
            "4 default.rhai quest \"mix phx.server doesnt seem to start\"",
            "6 default.rhai animate \"think\"",
            "8 default.rhai animate \"attack\"",
            "8 default.rhai xp 2",
            "10 default.rhai animate \"cast\"",
            "10 default.rhai xp 1",
            // Lines 11-13 are two rejections and an interrupt: hurt, but no notification.
            "11 default.rhai animate \"hurt\"",
            "12 default.rhai animate \"hurt\"",
            "13 default.rhai animate \"hurt\"",
        ]
    );
    // Every action says where it came from, and copies no session state.
    let first = &actions[0];
    assert_eq!(first["session"], "55604662-cf2a-4331-851a-ec234028f8ca");
    assert_eq!(first["event"], "prompt");
    assert!(first.get("status").is_none() && first.get("context_limit").is_none());
}

/// A dry run's timers fire at the transcript's own times, between the events, tagged with the
/// event that set them; one never due by the last event never fires.
#[test]
fn run_fires_timers_at_the_events_own_times() {
    let dir = tempfile::tempdir().expect("tempdir");
    let timers = write(
        dir.path(),
        "timers.rhai",
        "let set = false;\n\
         fn on_event(ev) {\n\
         \x20   if !set { set = true; after(60000, \"minute\"); after(3600000, \"hour\"); }\n\
         \x20   animate(ev.kind);\n\
         }\n\
         fn on_timer(t) { log(`fired ${t.name}`); }\n",
    );
    let output = Test::new()
        .arg("run")
        .arg(&timers)
        .arg("--input")
        .arg(real_fixture(SMALL))
        .stderr("")
        .run();
    let brief: Vec<String> = ndjson(&output)
        .iter()
        .map(|a| {
            let what = a.get("name").or_else(|| a.get("text"));
            format!(
                "{} {}",
                a["line"],
                what.and_then(|v| v.as_str()).unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        brief,
        [
            "2 session_start",
            "4 prompt",
            "6 thinking",
            "7 text",
            "8 bash",
            "10 reading",
            "11 error",
            "12 error",
            "13 error",
            // Set at line 2 (21:11:52), due a minute later: line 14 (21:16:12) is the first
            // event at or after that, so the timer fires just before it.
            "2 fired minute",
            "14 prompt",
        ]
    );
}

#[test]
fn run_reads_stdin_and_matches_the_events_it_maps() {
    let input = fs::read(fixture("errors-each-kind.jsonl")).expect("fixture");
    let events = ndjson(
        &Test::new()
            .arg("events")
            .arg(fixture("errors-each-kind.jsonl"))
            .run(),
    );
    let output = Test::new()
        .args(["run".as_ref(), script("notify-errors.rhai").as_os_str()])
        .args(["--input", "-"])
        .stdin(input)
        .run();
    let actions = ndjson(&output);
    // One notification per tool or API error kind (debounced), none for rejected/interrupted.
    for action in &actions {
        let cause = events
            .iter()
            .find(|e| e["line"] == action["line"] && e["kind"] == action["event"])
            .expect("causing event");
        assert!(
            cause["error"] == "tool" || cause["error"] == "api",
            "{action} from {cause}"
        );
    }
    let titles: Vec<&str> = actions.iter().filter_map(|a| a["title"].as_str()).collect();
    assert!(titles.contains(&"Bash failed"), "{titles:?}");
    assert!(
        titles.contains(&"Claude Code hit a usage limit"),
        "{titles:?}"
    );
}

#[test]
fn run_reports_runtime_errors_and_goes_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let flaky = write(
        dir.path(),
        "flaky.rhai",
        "fn on_event(ev) { animate(ev.kind); }\nfn on_reading(ev) { let n = ev.target.len() / 0; }\n",
    );
    let output = Test::new()
        .arg("run")
        .arg(&flaky)
        .arg("--input")
        .arg(real_fixture(SMALL))
        .status(1)
        .stderr(concat!(
            "flaky.rhai:2:45: error in on_reading (event reading from line 10): ",
            "Division by zero: 7 / 0\n",
            "  |\n",
            "2 | fn on_reading(ev) { let n = ev.target.len() / 0; }\n",
            "  |                                             ^\n",
            "familiar: flaky.rhai: on_reading failed 1 time(s)\n",
        ))
        .run();
    // The error did not stop the pipeline: every event got its animation.
    let events = ndjson(&Test::new().arg("events").arg(real_fixture(SMALL)).run());
    let animated: Vec<String> = ndjson(&output)
        .iter()
        .map(|a| a["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| e["kind"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(animated, kinds);
}

const RUNNER: &str = "fn on_bash(ev) {\n    run([\"printf\", \"%s\\n\", ev.target, \"it's \\\"quoted\\\"; rm -rf ~ $(id) `id` | tee x\"]);\n}\n";

#[test]
fn run_actions_are_refused_without_allow_run_and_keep_argv_with_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runner = write(dir.path(), "runner.rhai", RUNNER);
    let events = ndjson(&Test::new().arg("events").arg(real_fixture(SMALL)).run());
    let bash_target = events
        .iter()
        .find(|e| e["kind"] == "bash")
        .and_then(|e| e["target"].as_str())
        .expect("a bash event")
        .to_owned();

    let refused = Test::new()
        .arg("run")
        .arg(&runner)
        .arg("--input")
        .arg(real_fixture(SMALL))
        .stdout("")
        .stderr_contains("runner.rhai:2:5: warning in on_bash (event bash from line 8): run([")
        .stderr_contains("refused: running programs is not allowed (use --allow-run)")
        .run();
    assert_eq!(refused.status.code(), Some(0));

    let allowed = Test::new()
        .arg("run")
        .arg(&runner)
        .arg("--allow-run")
        .arg("--input")
        .arg(real_fixture(SMALL))
        .stderr("")
        .run();
    let actions = ndjson(&allowed);
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0]["action"], "run");
    assert_eq!(
        actions[0]["argv"],
        serde_json::json!([
            "printf",
            "%s\n",
            bash_target,
            "it's \"quoted\"; rm -rf ~ $(id) `id` | tee x"
        ])
    );
}

#[test]
fn test_passes_on_matching_expectations_and_shows_a_diff_otherwise() {
    let dir = tempfile::tempdir().expect("tempdir");
    let expect = dir.path().join("default.expected.jsonl");
    let input = real_fixture(SMALL);

    // --update writes the produced actions, without session state.
    Test::new()
        .arg("test")
        .arg(script("default.rhai"))
        .arg("--input")
        .arg(&input)
        .arg("--expect")
        .arg(&expect)
        .arg("--update")
        .stdout(format!("updated {}\n", expect.display()))
        .run();
    let written = fs::read_to_string(&expect).expect("expectations");
    assert_eq!(written.lines().count(), 9);
    assert_eq!(
        written.lines().next(),
        Some(
            r#"{"action":"quest","event":"prompt","line":4,"script":"default.rhai","text":"mix phx.server doesnt seem to start"}"#
        )
    );
    Test::new()
        .arg("test")
        .arg(script("default.rhai"))
        .arg("--input")
        .arg(&input)
        .arg("--expect")
        .arg(&expect)
        .stdout(format!("ok: 9 action(s) match {}\n", expect.display()))
        .run();

    // Expectations that name only some fields: compared on those.
    let brief = write(
        dir.path(),
        "brief.jsonl",
        "{\"action\":\"quest\",\"text\":\"mix phx.server doesnt seem to start\"}\n\
         {\"action\":\"animate\",\"name\":\"think\"}\n\
         {\"action\":\"animate\",\"name\":\"attack\"}\n\
         {\"action\":\"xp\",\"amount\":2}\n\
         {\"action\":\"animate\",\"name\":\"cast\"}\n\
         {\"action\":\"xp\",\"amount\":1}\n\
         {\"action\":\"animate\",\"name\":\"hurt\"}\n\
         {\"action\":\"animate\",\"name\":\"victory\"}\n\
         {\"action\":\"animate\",\"name\":\"hurt\"}\n",
    );
    Test::new()
        .arg("test")
        .arg(script("default.rhai"))
        .arg("--input")
        .arg(&input)
        .arg("--expect")
        .arg(&brief)
        .status(1)
        .stdout(format!(
            "--- {}\n+++ produced\n@@ -6,3 +6,4 @@\n {{\"action\":\"xp\",\"amount\":1}}\n \
             {{\"action\":\"animate\",\"name\":\"hurt\"}}\n-{{\"action\":\"animate\",\"name\":\
             \"victory\"}}\n {{\"action\":\"animate\",\"name\":\"hurt\"}}\n+{{\"action\":\
             \"animate\",\"name\":\"hurt\"}}\nFAILED: 9 expected, 9 produced (compared on: \
             action, amount, name, text)\n",
            brief.display()
        ))
        .run();
}

#[test]
fn regression_run_ends_quietly_when_its_output_is_closed() {
    // Thousands of actions from a real transcript: the reader of stdout going away
    // (`familiar run ... | head -1`) ends the run quietly, with exit 0, and stops the reader.
    assert_ends_quietly_with_stdout_closed([
        "run".into(),
        familiar_testkit::workspace_root().join("scripts/default.rhai"),
        "--input".into(),
        real_fixture("v2.0.65-slopometry-api-error-compact-summary.jsonl"),
    ]);
}

/// The timer example of docs/scripting.md, as written there: 30 s after a normal turn ends
/// (its `success`, then the `status` it leaves) it nudges; a prompt before that cancels it.
#[test]
fn the_documented_nudge_fires_after_a_normal_turn_and_not_after_a_prompt() {
    let doc = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scripting.md"))
        .expect("docs/scripting.md");
    let section = doc
        .split("## Timers: `after`, `every`, `on_timer`")
        .nth(1)
        .expect("the timers section");
    let example = section
        .split("```rhai\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("the example");
    let dir = tempfile::tempdir().expect("tempdir");
    let script = write(dir.path(), "nudge.rhai", example);
    let record = |ts: &str, body: &str| {
        format!(
            "{{\"type\":\"{body}\",\"sessionId\":\"s\",\"timestamp\":\"2026-02-11T10:{ts}.000Z\"}}\n"
        )
    };
    let assistant = |ts: &str, text: &str| {
        format!(
            "{{\"type\":\"assistant\",\"sessionId\":\"s\",\"timestamp\":\"2026-02-11T10:{ts}.000Z\",\
             \"message\":{{\"id\":\"m{ts}\",\"model\":\"claude-opus-4-8\",\"role\":\"assistant\",\
             \"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}],\"stop_reason\":\"end_turn\",\
             \"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}}}}\n"
        )
    };
    let prompt = |ts: &str| {
        format!(
            "{{\"type\":\"user\",\"sessionId\":\"s\",\"timestamp\":\"2026-02-11T10:{ts}.000Z\",\
             \"message\":{{\"role\":\"user\",\"content\":\"go\"}}}}\n"
        )
    };
    // A turn ends at 00:10; the user answers at 00:20 (before the nudge); that turn ends at
    // 00:30 and nobody answers: the nudge comes at 01:00, before the record at 02:00.
    let transcript = [
        prompt("00:00"),
        assistant("00:10", "one"),
        prompt("00:20"),
        assistant("00:30", "two"),
        record("02:00", "summary"),
    ]
    .concat();
    let input = write(dir.path(), "turns.jsonl", &transcript);
    let output = Test::new()
        .arg("run")
        .arg(&script)
        .arg("--input")
        .arg(&input)
        .stderr("")
        .run();
    let nudges: Vec<u64> = ndjson(&output)
        .iter()
        .filter(|a| a["action"] == "notify")
        .filter_map(|a| a["line"].as_u64())
        .collect();
    // Once, for the second turn (its status at line 4); the first was cancelled by the prompt.
    assert_eq!(nudges, [4], "{}", String::from_utf8_lossy(&output.stdout));
}

/// The shipped notify-errors.rhai times each session's turn on its own: a turn of two minutes
/// in one session is long even when another session's prompt came in between (one shared
/// start time made it 20 s, and nobody was told).
#[test]
fn notify_errors_times_each_sessions_turn_on_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let prompt = |session: &str, ts: &str| {
        format!(
            "{{\"type\":\"user\",\"sessionId\":\"{session}\",\"timestamp\":\"2026-02-11T10:{ts}.000Z\",\
             \"message\":{{\"role\":\"user\",\"content\":\"go\"}}}}\n"
        )
    };
    let done = |session: &str, ts: &str| {
        format!(
            "{{\"type\":\"assistant\",\"sessionId\":\"{session}\",\"timestamp\":\"2026-02-11T10:{ts}.000Z\",\
             \"message\":{{\"id\":\"m-{session}\",\"model\":\"claude-opus-4-8\",\"role\":\"assistant\",\
             \"content\":[{{\"type\":\"text\",\"text\":\"done\"}}],\"stop_reason\":\"end_turn\",\
             \"usage\":{{\"input_tokens\":1,\"output_tokens\":1}}}}}}\n"
        )
    };
    let transcript = [
        prompt("a", "00:00"),
        prompt("b", "01:40"),
        done("a", "02:00"),
    ]
    .concat();
    let input = write(dir.path(), "two.jsonl", &transcript);
    let output = Test::new()
        .arg("run")
        .arg(script("notify-errors.rhai"))
        .arg("--input")
        .arg(&input)
        .stderr("")
        .run();
    let told: Vec<String> = ndjson(&output)
        .iter()
        .filter(|a| a["action"] == "notify")
        .map(|a| format!("{} {}", a["session"], a["body"]))
        .collect();
    assert_eq!(told, ["\"a\" \"Turn finished after 2 min\""], "{told:?}");
}

/// The shipped scripts and the examples are built in: `familiar scripts` lists every one (each
/// file of `scripts/` and `scripts/examples/`), and prints any of them as it is on disk.
#[test]
fn the_built_in_scripts_are_listed_and_printed() {
    let output = Test::new().arg("scripts").run();
    let listing = String::from_utf8_lossy(&output.stdout).into_owned();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    for dir in [root.clone(), root.join("examples")] {
        for entry in fs::read_dir(&dir).expect("scripts dir").flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.ends_with(".rhai") {
                continue;
            }
            assert!(listing.contains(&format!("  {name} ")), "{name}: {listing}");
            let stem = name.trim_end_matches(".rhai");
            let printed = Test::new().args(["scripts", stem]).run();
            assert_eq!(
                printed.stdout,
                fs::read(entry.path()).expect("script"),
                "{name}"
            );
        }
    }
    Test::new()
        .args(["scripts", "nope"])
        .status(2)
        .stderr_contains("no built-in script `nope`")
        .run();
}

/// Every Rhai example of the README, docs/scripting.md and scripts/examples/ runs as written:
/// it compiles (`familiar check`) and maps the demo transcript without an error (`familiar
/// run`). Two are written as parts of a larger script and get that part here: the XP
/// helper continues the level example before it, and the import example's module is given.
#[test]
fn every_documented_example_compiles_and_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut examples: Vec<(String, String)> = Vec::new();
    for doc in ["README.md", "docs/scripting.md"] {
        let text = fs::read_to_string(root.join(doc)).expect("doc");
        for (index, block) in text.split("```rhai\n").skip(1).enumerate() {
            let code = block.split("```").next().unwrap_or_default();
            examples.push((format!("{doc} example {}", index + 1), code.to_owned()));
        }
    }
    for entry in fs::read_dir(root.join("scripts/examples"))
        .expect("examples")
        .flatten()
    {
        let code = fs::read_to_string(entry.path()).expect("example");
        examples.push((entry.path().display().to_string(), code));
    }
    assert!(examples.len() >= 14, "{}", examples.len());
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(dir.path().join("lib")).expect("lib dir");
    write(dir.path(), "lib/format.rhai", "fn short(text) { text }\n");
    for (index, (name, code)) in examples.iter().enumerate() {
        let code = if code.contains("minutes +=") && !code.contains("let minutes") {
            format!("let minutes = 0;\n{code}")
        } else {
            code.clone()
        };
        let script = write(dir.path(), &format!("example{index}.rhai"), &code);
        let check = Test::new().arg("check").arg(&script).run();
        assert!(check.status.success(), "{name}: {check:?}");
        let run = Test::new()
            .arg("run")
            .arg(&script)
            .arg("--input")
            .arg(fixture("demo.jsonl"))
            .run();
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!stderr.contains("error"), "{name}: {stderr}");
    }
}
