//! The turn's thinking intensity (`think`) on real transcripts: the prompt's keyword is carried
//! onto the main chain's `thinking` events of its turn, and nowhere else.

use std::path::Path;

use familiar_model::{Event, EventKind};
use familiar_session::{FileInfo, FileKind, Input, ModelConfig, SessionModel};
use familiar_testkit::real_fixture;

/// Real transcripts with thinking blocks after typed prompts.
const FIXTURES: [&str; 3] = [
    "v2.0.65-slopometry-api-error-compact-summary.jsonl",
    "v2.1.39-spotter-compact-queue-progress.jsonl",
    "v2.1.56-erk-api-error-turn-duration.jsonl",
];

fn run(name: &str, lines: &[Vec<u8>]) -> Vec<Event> {
    let path = Path::new(name);
    let mut model = SessionModel::new(ModelConfig::default());
    model.apply(
        Input::Opened {
            path,
            info: &FileInfo {
                kind: FileKind::Session,
                session_id: None,
                agent_id: None,
                agent_type: None,
                cwd: None,
            },
        },
        &mut Vec::new(),
    );
    let mut events = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        events.extend(model.events(Input::Line {
            path,
            number: i as u64 + 1,
            bytes: line,
            backlog: false,
        }));
    }
    events
}

fn read(name: &str) -> Vec<Vec<u8>> {
    let bytes = std::fs::read(real_fixture(name)).expect("fixture");
    bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// The same records with "ultrathink" typed at the start of every prompt written as a
/// string (the record's shape is untouched: only the text changes).
fn ultrathink(lines: &[Vec<u8>]) -> Vec<Vec<u8>> {
    lines
        .iter()
        .map(|line| {
            let Ok(mut v) = serde_json::from_slice::<serde_json::Value>(line) else {
                return line.clone();
            };
            let is_user = v.get("type").and_then(|t| t.as_str()) == Some("user");
            match v.pointer_mut("/message/content") {
                Some(serde_json::Value::String(text)) if is_user => {
                    *text = format!("ultrathink {text}");
                    serde_json::to_vec(&v).unwrap_or_else(|_| line.clone())
                }
                _ => line.clone(),
            }
        })
        .collect()
}

/// (turn's think, the thinking event's think) for each main-chain thinking event.
fn thinking(events: &[Event]) -> Vec<(u8, Option<u8>)> {
    let mut turn = 0;
    let mut out = Vec::new();
    for e in events.iter().filter(|e| e.agent.is_none() && !e.sidechain) {
        match e.kind {
            EventKind::Prompt => turn = e.think.unwrap_or(0),
            EventKind::Thinking => out.push((turn, e.think)),
            _ => {}
        }
    }
    out
}

#[test]
fn thinking_events_carry_their_turns_intensity_in_real_transcripts() {
    for name in FIXTURES {
        let plain = thinking(&run(name, &read(name)));
        assert!(!plain.is_empty(), "{name} has thinking after a prompt");
        for (turn, think) in &plain {
            assert_eq!(*think, (*turn > 0).then_some(*turn), "{name}");
        }
        let ultra = thinking(&run(name, &ultrathink(&read(name))));
        let carried = ultra.iter().filter(|(_, t)| *t == Some(3)).count();
        assert!(carried > 0, "{name}: no thinking event carried ultrathink");
        for (turn, think) in &ultra {
            assert_eq!(*think, (*turn > 0).then_some(*turn), "{name}");
        }
    }
}
