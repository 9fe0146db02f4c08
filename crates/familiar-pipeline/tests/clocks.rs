//! The clocks of a run hold against a record dated in the future (issue 28: one record of the
//! year 9999 stopped every later `after`/`every` timer for the rest of the run).

use std::path::Path;

use familiar_config::{Config, Overrides};
use familiar_model::ActionKind;
use familiar_pipeline::source::recorded::Recorded;
use familiar_pipeline::source::{Pace, Source};
use familiar_pipeline::window::Front;
use familiar_pipeline::{Stage, StageOptions, settings};

fn prompt(text: &str, at: &str) -> String {
    format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"sessionId\":\"s-clock\",\"isSidechain\":false,\"timestamp\":\"{at}\"}}\n"
    )
}

/// What a dry run of `lines` says, with a script that sets a 1 s timer on the prompt "later".
fn said(dir: &Path, lines: &str) -> Vec<String> {
    let script = dir.join("timer.rhai");
    std::fs::write(
        &script,
        "fn on_prompt(ev) { if ev.text == \"later\" { after(1000, \"t\"); } }\n\
         fn on_timer(t) { say(\"fired\"); }\n",
    )
    .expect("the script");
    let settings = Config::default().merge(&Overrides {
        scripts: vec![script],
        ..Overrides::default()
    });
    let mut options = StageOptions::dry_run(false);
    options.collect = true;
    let mut stage = Stage::with_scripts(&settings, options, false).expect("the script loads");
    let model = settings::model_config(&settings, Default::default(), None);
    let source = Source::Recorded {
        transcript: Recorded::reader(
            "clock.jsonl",
            std::io::Cursor::new(lines.as_bytes().to_vec()),
        ),
        pace: Pace::AsRead,
    };
    source
        .run(model, &mut stage, &Front::terminal())
        .expect("read");
    stage
        .take_collected()
        .into_iter()
        .filter_map(|action| match action.kind {
            ActionKind::Say { text } => Some(text),
            _ => None,
        })
        .collect()
}

#[test]
fn a_record_from_the_future_holds_no_timer() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let plain = [
        prompt("first", "2026-02-11T10:00:00.000Z"),
        prompt("later", "2026-02-11T10:00:10.000Z"),
        prompt("after", "2026-02-11T10:00:20.000Z"),
    ]
    .concat();
    assert_eq!(said(dir.path(), &plain), ["fired"]);
    let with_future = [
        prompt("first", "2026-02-11T10:00:00.000Z"),
        prompt("wrong clock", "9999-01-01T00:00:00.000Z"),
        prompt("later", "2026-02-11T10:00:10.000Z"),
        prompt("after", "2026-02-11T10:00:20.000Z"),
    ]
    .concat();
    assert_eq!(said(dir.path(), &with_future), ["fired"]);
}
