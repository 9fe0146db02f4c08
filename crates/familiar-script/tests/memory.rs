//! Transient memory of one handler call stays well under 100 MB whatever the script does with
//! big input: the cases (`s.split("")` on 16 MiB peaked at 1.1 GB, `to_chars` at
//! 319 MB) and their cousins. Measured with a counting allocator, so the figure is exact and
//! does not depend on timing; the cases run one after the other in this one test (the counter
//! is process-wide).

mod support;

use familiar_model::EventKind;
use support::{ev, loaded, run};

#[global_allocator]
static ALLOCATOR: familiar_testkit::Counting = familiar_testkit::Counting;

const MIB: usize = 1024 * 1024;

#[test]
fn one_call_never_holds_more_than_100_mb_on_input_up_to_64_mib() {
    let (mut host, _) = loaded(
        "fn on_prompt(ev) { let parts = ev.text.split(\"\"); }\n\
         fn on_text(ev) { let chars = ev.text.to_chars(); }\n\
         fn on_bash(ev) { let words = ev.text.split(); }\n\
         fn on_reading(ev) { let v = parse_json(ev.text); }\n\
         fn on_writing(ev) { let r = ev.raw; }\n\
         fn on_tool(ev) { let s = ev.text; let t = s + s; }\n\
         fn on_thinking(ev) { let s = ev.text; s.pad(100000000, 'x'); }",
    );
    let spaced = "a ".repeat(8 * MIB);
    let json = format!("[{}0]", "0,".repeat(8 * MIB - 1));
    let cases = [
        // A prompt of 64 MiB, the longest line accepted: scripts see its first MiB.
        (
            "split(\"\")",
            EventKind::Prompt,
            "a ".repeat(32 * MIB),
            None,
        ),
        ("to_chars", EventKind::Text, spaced.clone(), None),
        ("split()", EventKind::Bash, spaced.clone(), None),
        ("parse_json", EventKind::Reading, json.clone(), None),
        ("ev.raw", EventKind::Writing, String::new(), Some(json)),
        ("s + s", EventKind::Tool, spaced.clone(), None),
        ("pad", EventKind::Thinking, spaced, None),
    ];
    for (line, (name, kind, text, raw)) in (1..).zip(cases) {
        let mut event = ev(kind, line);
        event.text = Some(text);
        event.raw = raw.map(std::sync::Arc::from);
        let base = familiar_testkit::Counting::reset_peak();
        let (actions, diags) = run(&mut host, &event);
        let peak = familiar_testkit::Counting::peak() - base;
        assert_eq!(actions, vec![], "{name}");
        // Each case is stopped by a size limit, with its position.
        assert_eq!(diags.len(), 1, "{name}: {diags:?}");
        assert!(
            diags[0].starts_with(&format!("test.rhai:{line}:")) && diags[0].contains("too large"),
            "{name}: {}",
            diags[0]
        );
        eprintln!("{name}: peak {} MB", peak / 1_000_000);
        assert!(
            peak < 100 * 1_000_000,
            "{name}: peak {} MB",
            peak / 1_000_000
        );
    }
}
