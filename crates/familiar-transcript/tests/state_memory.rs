//! What a normalizer keeps once it has read a session (issue 28): a watcher keeps one for
//! every file it follows, thousands at once, so its counts and its pending tools are kept
//! as small as what they hold. Measured with a counting allocator: exact, and independent of
//! timing.

use familiar_transcript::{Normalizer, NormalizerConfig};

#[global_allocator]
static ALLOCATOR: familiar_testkit::Counting = familiar_testkit::Counting;

/// The bytes a normalizer keeps on the heap after reading `lines` (its events dropped), the
/// second time they are read: the names every file shares are kept once for all of them
/// (`familiar_transcript::counts`), by the first.
fn kept_after(lines: &[&str]) -> usize {
    read(lines);
    let before = familiar_testkit::Counting::current();
    let normalizer = read(lines);
    let kept = familiar_testkit::Counting::current().saturating_sub(before);
    drop(normalizer);
    kept
}

fn read(lines: &[&str]) -> Normalizer {
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    for (at, line) in lines.iter().enumerate() {
        let mut events = Vec::new();
        // A line that is not a record is counted, like any other: part of what is kept.
        let _ = normalizer.push_line(line.as_bytes(), at as u64 + 1, &mut events);
    }
    normalizer
}

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn a_read_session_keeps_its_counts_in_little_room() {
    // Real CLIs' sessions: tools called and answered, record types of every kind.
    for (name, bound) in [
        ("claude-2.1.332/main.jsonl", 2_300),
        ("claude-2.1.197/interactive.jsonl", 2_300),
        ("codex-0.171.0/main.jsonl", 2_200),
    ] {
        let text = fixture(name);
        let lines: Vec<&str> = text.lines().collect();
        let kept = kept_after(&lines);
        eprintln!("{name}: {kept} bytes kept");
        assert!(kept <= bound, "{name}: {kept} bytes kept (at most {bound})");
    }
    // A tool still running when the session was read: room for one, not for four.
    let one_running = [
        r#"{"type":"user","sessionId":"s","uuid":"u","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"go"}}"#,
        r#"{"type":"assistant","sessionId":"s","uuid":"a","timestamp":"2026-01-01T00:00:01Z","message":{"id":"m","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"sleep 60"}}]}}"#,
    ];
    let with_one = kept_after(&one_running);
    let answered = [
        one_running[0],
        one_running[1],
        r#"{"type":"user","sessionId":"s","uuid":"r","timestamp":"2026-01-01T00:00:02Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"}]}}"#,
    ];
    let with_none = kept_after(&answered);
    eprintln!("one tool running: {with_one} bytes; answered: {with_none}");
    // Answered, the tool's room goes back; running, it costs its own room and names.
    assert!(with_none <= 600, "{with_none} bytes kept once answered");
    assert!(
        with_one <= with_none + 256,
        "a running tool costs {} bytes",
        with_one.saturating_sub(with_none)
    );
}
