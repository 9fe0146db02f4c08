//! The session model driven by hand: lines and ticks in, events and snapshots out. No files
//! are watched and no clock runs: every timer fires because a tick said the time had come.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use familiar_model::time::parse_timestamp;
use familiar_model::{Event, EventKind, Status};
use familiar_session::{FileInfo, FileKind, Input, ModelConfig, SessionModel};
use familiar_testkit::real_fixture;
use familiar_transcript::{NormalizerConfig, normalize_bytes};

fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    bytes
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .collect()
}

fn session_file(id: &str) -> FileInfo {
    FileInfo {
        kind: FileKind::Session,
        session_id: Some(id.to_owned()),
        agent_id: None,
        agent_type: None,
        cwd: None,
    }
}

/// Feed every line of `bytes`, all live or all backlog.
fn feed(model: &mut SessionModel, path: &Path, bytes: &[u8], backlog: bool) -> Vec<Event> {
    let mut events = Vec::new();
    for (index, line) in lines(bytes).into_iter().enumerate() {
        events.extend(model.events(Input::Line {
            path,
            number: index as u64 + 1,
            bytes: line,
            backlog,
        }));
    }
    events
}

fn last_timestamp(bytes: &[u8]) -> SystemTime {
    let (events, _) = normalize_bytes(bytes, &NormalizerConfig::default());
    events
        .iter()
        .rev()
        .find_map(|event| event.ts.as_deref().and_then(parse_timestamp))
        .expect("the fixture has timestamps")
}

#[test]
fn a_summary_first_transcript_is_one_session_not_a_phantom() {
    // Regression: a replay of a transcript that opens with `summary` records showed a second
    // familiar ("Lv 1 ?/200k") for the summaries, which carry no session id.
    let path = real_fixture("v2.0.65-slopometry-api-error-compact-summary.jsonl");
    let bytes = std::fs::read(&path).expect("fixture");
    let mut model = SessionModel::new(ModelConfig::default());
    model.apply(
        Input::Opened {
            path: &path,
            info: &FileInfo::unknown(),
        },
        &mut Vec::new(),
    );
    let events = feed(&mut model, &path, &bytes, false);
    let summaries = events
        .iter()
        .filter(|event| event.kind == EventKind::Summary)
        .count();
    assert!(summaries >= 3, "the fixture opens with summaries");
    let sessions: std::collections::BTreeSet<Option<&str>> = events
        .iter()
        .filter(|event| !event.sidechain)
        .map(|event| event.session.as_deref())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert!(sessions.iter().all(Option::is_some));
    assert_eq!(events.first().map(|e| e.kind), Some(EventKind::Summary));
    // The first event that went out after the session's cwd became known carries it.
    assert!(events.iter().any(|event| event.cwd.is_some()));
}

#[test]
fn existing_sessions_are_primed_silently_into_one_snapshot_each() {
    let first = real_fixture("v2.1.56-erk-api-error-turn-duration.jsonl");
    let second = real_fixture("v2.1.38-spotter-slash-command-queue.jsonl");
    let mut model = SessionModel::new(ModelConfig::default());
    let mut late = SystemTime::UNIX_EPOCH;
    let mut expected_context = Vec::new();
    for (n, path) in [&first, &second].into_iter().enumerate() {
        let bytes = std::fs::read(path).expect("fixture");
        late = late.max(last_timestamp(&bytes));
        let info = session_file(&format!("file-{n}"));
        model.apply(Input::Opened { path, info: &info }, &mut Vec::new());
        assert!(
            feed(&mut model, path, &bytes, true).is_empty(),
            "backlog is silent"
        );
        let (offline, _) = normalize_bytes(&bytes, &NormalizerConfig::default());
        let last_main = offline.iter().rev().find(|e| !e.sidechain).expect("events");
        expected_context.push((last_main.session.clone(), last_main.context_used));
    }
    let mut events = model.events(Input::Tick(late + Duration::from_secs(3600)));
    assert!(events.is_empty(), "no timer fires during a backlog");
    events.extend(model.events(Input::CaughtUp));
    assert_eq!(events.len(), 2, "{events:#?}");
    for event in &events {
        assert_eq!(event.kind, EventKind::Snapshot);
        assert_eq!(event.status, Status::Idle, "an hour-old session is idle");
        assert!(event.cwd.is_some(), "the project is known");
        assert!(event.duration_ms.is_some_and(|ms| ms >= 3_600_000));
        let expected = expected_context
            .iter()
            .find(|(session, _)| session == &event.session)
            .expect("a snapshot per fixture session");
        assert_eq!(event.context_used, expected.1);
        assert!(event.context_used.is_some());
    }
    // The snapshots agree with `snapshot()`, which `familiar sessions` prints.
    let table = model.snapshot();
    assert_eq!(table.len(), 2);
    for row in &table {
        let event = events
            .iter()
            .find(|e| e.session.as_deref() == Some(row.session.as_str()))
            .expect("same sessions");
        assert_eq!(&row.to_event(), event);
    }
}

#[test]
fn a_live_line_after_a_backlog_comes_after_its_snapshot() {
    let path = real_fixture("v2.1.38-spotter-slash-command-queue.jsonl");
    let bytes = std::fs::read(&path).expect("fixture");
    let all = lines(&bytes);
    let (head, tail) = all.split_at(all.len() - 3);
    let mut model = SessionModel::new(ModelConfig::default());
    model.events(Input::Tick(last_timestamp(&bytes)));
    let info = session_file("s");
    model.events(Input::Opened {
        path: &path,
        info: &info,
    });
    for (index, line) in head.iter().enumerate() {
        let events = model.events(Input::Line {
            path: &path,
            number: index as u64 + 1,
            bytes: line,
            backlog: true,
        });
        assert!(events.is_empty());
    }
    let mut live = Vec::new();
    for (index, line) in tail.iter().enumerate() {
        live.extend(model.events(Input::Line {
            path: &path,
            number: (head.len() + index) as u64 + 1,
            bytes: line,
            backlog: false,
        }));
    }
    assert_eq!(live.first().map(|e| e.kind), Some(EventKind::Snapshot));
    assert_eq!(
        live.iter()
            .filter(|e| e.kind == EventKind::Snapshot)
            .count(),
        1
    );
    assert!(model.events(Input::CaughtUp).is_empty(), "shown once");
}

/// The first two lines of the subagent fixture: a prompt and a text-only answer.
fn text_only_turn() -> (PathBuf, Vec<u8>) {
    let path = real_fixture("v2.1.39-spotter-subagent-agent-a881341.jsonl");
    let bytes = std::fs::read(&path).expect("fixture");
    let two: Vec<u8> = lines(&bytes)[..2].join(&b'\n');
    (path, two)
}

#[test]
fn a_quiet_text_only_turn_waits_for_input_then_goes_idle() {
    let (path, bytes) = text_only_turn();
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let at = |secs: u64| Input::Tick(t0 + Duration::from_secs(secs));
    let mut model = SessionModel::new(ModelConfig::default());
    model.events(at(0));
    let events = feed(&mut model, &path, &bytes, false);
    assert_eq!(events.last().map(|e| e.kind), Some(EventKind::Text));
    assert!(model.events(at(4)).is_empty());
    let waiting = model.events(at(6));
    assert_eq!(waiting.len(), 1);
    let waiting = &waiting[0];
    assert_eq!(waiting.kind, EventKind::Status);
    assert_eq!(waiting.status, Status::WaitingForInput);
    assert_eq!(waiting.previous_status, Some(Status::Working));
    assert_eq!(
        waiting.duration_ms,
        Some(6_000),
        "working since the text at t0"
    );
    assert_eq!(
        waiting.context_used,
        events.last().and_then(|e| e.context_used)
    );
    assert!(model.events(at(7)).is_empty(), "once per quiet spell");
    let idle = model.events(at(301));
    assert_eq!(idle.len(), 1);
    assert_eq!(idle[0].status, Status::Idle);
    assert_eq!(idle[0].previous_status, Some(Status::WaitingForInput));
    assert_eq!(idle[0].duration_ms, Some(295_000));
    assert!(model.events(at(900)).is_empty());
}

#[test]
fn a_hook_signal_carries_the_session_state_and_a_new_line_clears_it() {
    let (path, bytes) = text_only_turn();
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let mut model = SessionModel::new(ModelConfig::default());
    model.events(Input::Tick(t0));
    let info = session_file("hooked");
    model.events(Input::Opened {
        path: &path,
        info: &info,
    });
    let events = feed(&mut model, &path, &bytes, false);
    let session = events.last().and_then(|e| e.session.clone());
    let mut signal = Event::new(EventKind::Status, 0);
    signal.session.clone_from(&session);
    signal.status = Status::WaitingForApproval;
    model.events(Input::Tick(t0 + Duration::from_secs(2)));
    let told = model.events(Input::Hook(&signal));
    assert_eq!(told.len(), 1);
    assert_eq!(told[0].status, Status::WaitingForApproval);
    assert_eq!(
        told[0].context_used,
        events.last().and_then(|e| e.context_used)
    );
    assert_eq!(told[0].previous_status, Some(Status::Working));
    assert_eq!(told[0].duration_ms, Some(2_000));
    // Like a timer's, a hook's status event is dated in the session's main transcript: the
    // last line read (the text-only turn's two lines), not the signal's 0.
    assert_eq!(told[0].line, lines(&bytes).len() as u64);
    assert_eq!(told[0].line, 2);
    assert!(model.events(Input::Hook(&signal)).is_empty(), "told once");
    // The approval wait is not "waiting for input" however long it lasts.
    assert!(
        model
            .events(Input::Tick(t0 + Duration::from_secs(60)))
            .is_empty()
    );
    let snapshot = model.snapshot();
    assert_eq!(snapshot[0].status, Status::WaitingForApproval);
    assert_eq!(snapshot[0].status_for, Some(Duration::from_secs(58)));
    // A hook for a session nobody follows passes through as it is: no transcript, line 0.
    let mut stranger = signal.clone();
    stranger.session = Some("elsewhere".into());
    let passed = model.events(Input::Hook(&stranger));
    assert_eq!(passed, vec![stranger]);
    assert_eq!(passed[0].line, 0);
}

#[test]
fn a_finished_subagent_does_not_wait_for_input() {
    // A subagent's last record is a text answer with stop_reason null; once its Task result
    // arrives in the parent, it is done, not waiting for input.
    let (sub_path, sub_bytes) = text_only_turn();
    let agent = "a881341";
    let parent = real_fixture("v2.1.39-spotter-compact-queue-progress.jsonl");
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let mut model = SessionModel::new(ModelConfig::default());
    model.events(Input::Tick(t0));
    let info = FileInfo {
        kind: FileKind::Subagent,
        session_id: Some("258c7280-ae70-4798-800f-63464d01a85d".into()),
        agent_id: Some(agent.into()),
        agent_type: None,
        cwd: None,
    };
    model.events(Input::Opened {
        path: &sub_path,
        info: &info,
    });
    feed(&mut model, &sub_path, &sub_bytes, false);
    // The real parent, up to the Task result that names this subagent (line 1480).
    let parent_bytes = std::fs::read(&parent).expect("fixture");
    model.events(Input::Opened {
        path: &parent,
        info: &session_file("258c7280-ae70-4798-800f-63464d01a85d"),
    });
    let parent_lines = lines(&parent_bytes);
    let mut parent_events = Vec::new();
    for (index, line) in parent_lines[..1480].iter().enumerate() {
        parent_events.extend(model.events(Input::Line {
            path: &parent,
            number: index as u64 + 1,
            bytes: line,
            backlog: false,
        }));
    }
    assert!(
        parent_events
            .iter()
            .any(|e| e.kind == EventKind::SubagentEnd),
        "the parent's Task result ends the subagent"
    );
    let later = model.events(Input::Tick(t0 + Duration::from_secs(10)));
    assert!(
        later
            .iter()
            .all(|e| !(e.agent.as_deref() == Some(agent) && e.status == Status::WaitingForInput)),
        "{later:#?}"
    );
    assert!(model.snapshot().iter().all(|s| s.subagents.is_empty()));
}

#[test]
fn regression_a_subagent_read_last_does_not_change_the_sessions_model() {
    // `familiar sessions` and `watch` disagreed on a session's model when its subagent (on
    // another model) happened to be read after the main transcript.
    let main = real_fixture("v2.1.39-spotter-compact-queue-progress.jsonl");
    let sub = real_fixture("v2.1.39-spotter-subagent-agent-a881341.jsonl");
    let session = "258c7280-ae70-4798-800f-63464d01a85d";
    let mut model = SessionModel::new(ModelConfig::default());
    let main_info = session_file(session);
    let sub_info = FileInfo {
        kind: FileKind::Subagent,
        session_id: Some(session.into()),
        agent_id: Some("a881341".into()),
        agent_type: None,
        cwd: None,
    };
    model.events(Input::Opened {
        path: &main,
        info: &main_info,
    });
    feed(
        &mut model,
        &main,
        &std::fs::read(&main).expect("fixture"),
        true,
    );
    let main_model = model.snapshot_of(session).and_then(|s| s.model);
    model.events(Input::Opened {
        path: &sub,
        info: &sub_info,
    });
    let sub_events = feed(
        &mut model,
        &sub,
        &std::fs::read(&sub).expect("fixture"),
        true,
    );
    assert!(sub_events.is_empty());
    assert!(main_model.is_some());
    assert_eq!(model.snapshot_of(session).and_then(|s| s.model), main_model);
}

fn interactive_bytes() -> Vec<u8> {
    std::fs::read(familiar_testkit::own_fixture(
        "claude-2.1.197/interactive.jsonl",
    ))
    .expect("fixture")
}

/// The line of the interactive session's `end_turn` record, and the `durationMs` of the
/// `turn_duration` record that follows it (after `stop_hook_summary`).
fn interactive_turn_end() -> (u64, u64) {
    let bytes = interactive_bytes();
    let records: Vec<serde_json::Value> = lines(&bytes)
        .into_iter()
        .map(|line| serde_json::from_slice(line).expect("a record"))
        .collect();
    let end = records
        .iter()
        .position(|r| r["message"]["stop_reason"] == "end_turn")
        .expect("end_turn");
    assert_eq!(records[end + 1]["subtype"], "stop_hook_summary");
    assert_eq!(records[end + 2]["subtype"], "turn_duration");
    let duration = records[end + 2]["durationMs"].as_u64().expect("durationMs");
    (end as u64 + 1, duration)
}

/// The interactive 2.1.197 session fed live one line at a time, 300 ms apart, with a tick
/// after each; `pause` more seconds after line `pause_after`.
fn interactive_live(pause_after: u64, pause: u64) -> Vec<Event> {
    let bytes = interactive_bytes();
    let path = PathBuf::from("/live/interactive.jsonl");
    let mut model = SessionModel::new(ModelConfig::default());
    let mut now = SystemTime::UNIX_EPOCH + Duration::from_secs(2_000_000_000);
    let mut events = model.events(Input::Tick(now));
    events.extend(model.events(Input::Opened {
        path: &path,
        info: &FileInfo::unknown(),
    }));
    for (index, line) in lines(&bytes).into_iter().enumerate() {
        let number = index as u64 + 1;
        events.extend(model.events(Input::Line {
            path: &path,
            number,
            bytes: line,
            backlog: false,
        }));
        now += Duration::from_millis(300);
        if number == pause_after {
            now += Duration::from_secs(pause);
        }
        events.extend(model.events(Input::Tick(now)));
    }
    events
}

#[test]
fn live_success_never_carried_duration_ms() {
    // `end_turn`, `stop_hook_summary`, `turn_duration` written 300 ms apart: the success
    // waits for the duration, live as offline, and is told once.
    let (end, duration) = interactive_turn_end();
    let events = interactive_live(0, 0);
    let success: Vec<&Event> = events
        .iter()
        .filter(|e| e.kind == EventKind::Success)
        .collect();
    assert_eq!(success.len(), 1);
    assert_eq!(success[0].duration_ms, Some(duration));
    assert_eq!(success[0].line, end);
    // No timer said the turn was over before the success did.
    let first_waiting = events
        .iter()
        .position(|e| e.status == Status::WaitingForInput)
        .expect("waiting");
    assert_eq!(events[first_waiting].kind, EventKind::Success);
}

#[test]
fn a_success_waits_for_turn_duration_only_while_the_file_is_quiet_briefly() {
    // The CLI paused past the quiet-turn time after `end_turn` (a slow Stop hook): the
    // success goes out then, without a duration, and the late `turn_duration` adds nothing.
    let (end, duration) = interactive_turn_end();
    let events = interactive_live(end, 6);
    let success: Vec<&Event> = events
        .iter()
        .filter(|e| e.kind == EventKind::Success)
        .collect();
    assert_eq!(success.len(), 1);
    assert_eq!(success[0].duration_ms, None);
    let at = events
        .iter()
        .position(|e| e.kind == EventKind::Success)
        .expect("success");
    assert!(events[..at].iter().all(|e| e.line <= end));
    // A shorter pause keeps it waiting for the duration.
    let events = interactive_live(end, 4);
    let success = events
        .iter()
        .find(|e| e.kind == EventKind::Success)
        .expect("success");
    assert_eq!(success.duration_ms, Some(duration));
}

/// On the records' own clock (a replay, a dry run), no tick is needed: a text-only turn whose
/// next record came a minute later waits for input in between, dated when the quiet showed,
/// before that record's events; records a second apart wait for nothing.
#[test]
fn on_the_records_clock_a_quiet_turn_waits_for_input_before_the_next_record() {
    let (path, bytes) = text_only_turn();
    let text_at = last_timestamp(&bytes);
    let stamp = familiar_model::time::format_timestamp;
    let next = |at: SystemTime| {
        format!(
            r#"{{"type":"user","sessionId":"s","timestamp":"{}","message":{{"role":"user","content":"again"}}}}"#,
            stamp(at)
        )
    };
    for (pause, waits) in [(60, true), (1, false)] {
        let mut model = SessionModel::new(ModelConfig {
            recorded_clock: true,
            ..ModelConfig::default()
        });
        feed(&mut model, &path, &bytes, false);
        let later = next(text_at + Duration::from_secs(pause));
        let events = model.events(Input::Line {
            path: &path,
            number: 3,
            bytes: later.as_bytes(),
            backlog: false,
        });
        let kinds: Vec<(EventKind, Status)> = events.iter().map(|e| (e.kind, e.status)).collect();
        if waits {
            assert_eq!(
                kinds.first(),
                Some(&(EventKind::Status, Status::WaitingForInput)),
                "{kinds:?}"
            );
            assert!(
                events[0].duration_ms.is_some_and(|ms| ms > 55_000),
                "working since the turn began: {:?}",
                events[0].duration_ms
            );
        } else {
            assert!(
                kinds.iter().all(|(kind, _)| *kind != EventKind::Status),
                "{kinds:?}"
            );
        }
        assert!(
            kinds.iter().any(|(kind, _)| *kind == EventKind::Prompt),
            "{kinds:?}"
        );
    }
}
