//! A Gemini CLI session file rewritten whole while it is followed: the CLI may write its
//! history to a temporary file and rename it over the session (`rewriteConversationFile`, when
//! a resumed session cannot be read back), which the tailer reports as a new generation of the
//! same path. The messages of the new generation that were told already are not told again;
//! what is new is (`Normalizer::continue_from`). The lines are those the real CLI 0.61.0 wrote
//! (`fixtures/gemini-0.61.0/main.jsonl`).

use std::path::Path;

use familiar_model::{AgentKind, EventKind};
use familiar_session::{FileInfo, Input, ModelConfig, SessionModel};

fn feed(model: &mut SessionModel, path: &Path, lines: &[&str]) -> Vec<familiar_model::Event> {
    let mut events = model.events(Input::Opened {
        path,
        info: &FileInfo::unknown(),
    });
    for (index, line) in lines.iter().enumerate() {
        events.extend(model.events(Input::Line {
            path,
            number: index as u64 + 1,
            bytes: line.as_bytes(),
            backlog: false,
        }));
    }
    events
}

#[test]
fn a_rewritten_gemini_session_tells_only_what_is_new() {
    let text = std::fs::read_to_string(familiar_testkit::own_fixture("gemini-0.61.0/main.jsonl"))
        .expect("fixture");
    let lines: Vec<&str> = text.lines().collect();
    // The first run's lines (up to its last reply and the `$set` after it), then the whole
    // file as a new generation: the two resumed turns (each refused) are what is new.
    let first_run = lines
        .iter()
        .position(|line| line.contains("All done."))
        .expect("the last reply")
        + 2;
    let path = Path::new("/h/.gemini/tmp/project/chats/session-2026-11-28T02-01-x.jsonl");
    let mut model = SessionModel::new(ModelConfig::default());
    let before = feed(&mut model, path, &lines[..first_run]);
    let told = |kind| before.iter().filter(|e| e.kind == kind).count();
    assert_eq!(told(EventKind::Prompt), 1);
    assert_eq!(told(EventKind::Reading), 3);

    let after = feed(&mut model, path, &lines);
    let kinds: Vec<EventKind> = after
        .iter()
        .filter(|e| e.kind != EventKind::Status)
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            EventKind::Success,
            EventKind::Prompt,
            EventKind::Error,
            EventKind::Prompt,
            EventKind::Error
        ],
        "{after:#?}"
    );
    assert!(after.iter().all(|e| e.agent_kind == AgentKind::Gemini));
    let session = before[0].session.clone();
    assert!(session.is_some());
    assert!(after.iter().all(|e| e.session == session));
}

#[test]
fn a_gemini_session_moved_away_and_written_again_tells_only_what_is_new() {
    // The CLI's `rewriteConversationFile` renames the old file away (a backup) and a temporary
    // file in: the tailer says the path was removed, then opened as a new file.
    let text = std::fs::read_to_string(familiar_testkit::own_fixture("gemini-0.61.0/main.jsonl"))
        .expect("fixture");
    let lines: Vec<&str> = text.lines().collect();
    let first_run = lines
        .iter()
        .position(|line| line.contains("All done."))
        .expect("the last reply")
        + 2;
    let path = Path::new("/h/.gemini/tmp/project/chats/session-2026-11-28T02-01-y.jsonl");
    let mut model = SessionModel::new(ModelConfig::default());
    let before = feed(&mut model, path, &lines[..first_run]);
    assert_eq!(
        before
            .iter()
            .filter(|e| e.kind == EventKind::Prompt)
            .count(),
        1
    );
    let removed = model.events(Input::Removed { path });
    let after = feed(&mut model, path, &lines);
    let kinds: Vec<EventKind> = removed
        .iter()
        .chain(&after)
        .filter(|e| e.kind != EventKind::Status)
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            EventKind::Success,
            EventKind::Prompt,
            EventKind::Error,
            EventKind::Prompt,
            EventKind::Error
        ],
        "{after:#?}"
    );
}
