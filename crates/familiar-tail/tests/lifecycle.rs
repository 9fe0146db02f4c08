//! What happens to followed files over their life, against real files and real inotify:
//! warm-up at start, `--from-start`, truncation and rewrite, replacement, deletion, new
//! sessions and subagents appearing, directories that appear later, unreadable entries,
//! a full channel, and the status timers driven by an injected clock.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use familiar_model::{EventKind, Status};
use familiar_tail::{
    ManualClock, ResetReason, Selector, TailMessage, TailerHandle, Timers, TranscriptKind,
};
use familiar_transcript::{Normalizer, NormalizerConfig, normalize_bytes};

const SUBAGENT: &str = "v2.1.39-spotter-subagent-agent-a881341.jsonl";
const SHORT: &str = "v2.1.38-spotter-local-command-tool-errors.jsonl";
const SLASH: &str = "v2.1.38-spotter-slash-command-queue.jsonl";
const COMPACT: &str = "v2.0.67-erk-ci-compact-boundary-queue.jsonl";

/// Byte offset just after the `n`-th newline.
fn after_lines(bytes: &[u8], n: usize) -> usize {
    bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(n - 1)
        .map(|(i, _)| i + 1)
        .expect("enough lines")
}

fn followed_paths(messages: &[TailMessage]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = messages
        .iter()
        .filter_map(|m| match m {
            TailMessage::Followed(f) => Some(f.info.path.clone()),
            _ => None,
        })
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

fn until_caught_up(handle: &TailerHandle) -> Vec<TailMessage> {
    until(handle, |m| matches!(m, TailMessage::CaughtUp)).expect("CaughtUp within the wait")
}

#[test]
fn live_mode_reads_existing_files_silently_then_emits_only_appends() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(COMPACT);
    let path = dir.join(format!("{}.jsonl", session_of(&bytes)));
    // Cut in the middle of a line: the line it completes later must be emitted once.
    let cut = after_lines(&bytes, 120) + 37;
    fs::write(&path, &bytes[..cut]).expect("write the first part");

    let handle = start(env.tailer_config(vec![Selector::All]));
    let startup = until_caught_up(&handle);
    assert!(
        events(startup.clone()).is_empty(),
        "no old events in live mode"
    );
    let followed = startup
        .iter()
        .find_map(|m| match m {
            TailMessage::Followed(f) => Some(f.clone()),
            _ => None,
        })
        .expect("the existing file is followed");
    // The warm-up state is the normalizer's after the complete lines of the first part.
    let mut normalizer = Normalizer::new(NormalizerConfig::default());
    let mut scratch = Vec::new();
    familiar_transcript::feed(
        &mut normalizer,
        &bytes[..after_lines(&bytes, 120)],
        &mut scratch,
        &mut Vec::new(),
    );
    assert_eq!(followed.lines, 120);
    assert_eq!(followed.context_used, normalizer.context_used());
    assert!(followed.context_used.is_some());
    assert_eq!(followed.context_limit, normalizer.context_limit());
    assert_eq!(followed.open_tool_uses, normalizer.open_tool_uses());
    assert_eq!(followed.session, normalizer.session().map(str::to_owned));
    // Records from 2025: long idle, not live.
    assert_eq!(followed.status, Status::Idle);
    assert!(!followed.live);

    append(&path, &bytes[cut..]);
    append(&path, &sentinel("s1"));
    let got = events_until_sentinel(&handle, "s1");
    let want: Vec<_> = reference(&path, &bytes)
        .into_iter()
        .filter(|event| event.line > 120)
        .collect();
    assert!(!want.is_empty());
    assert_same_events(&got, &want, "appended part");
}

#[test]
fn from_start_replays_existing_files() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(SHORT);
    let path = dir.join(format!("{}.jsonl", session_of(&bytes)));
    let mut content = bytes.clone();
    content.extend(sentinel("end"));
    fs::write(&path, &content).expect("write");
    let mut config = env.tailer_config(vec![Selector::All]);
    config.from_start = true;
    let handle = start(config);
    let got = events_until_sentinel(&handle, "end");
    assert_same_events(&got, &reference(&path, &bytes), "from start");
}

#[test]
fn truncation_to_zero_and_rewrite_reads_the_new_content_from_line_one() {
    for poll in [false, true] {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/p"));
        let first = real(SHORT);
        let second = real(SLASH);
        let path = dir.join("s.jsonl");
        let mut config = env.tailer_config(vec![Selector::All]);
        if poll {
            config.mode = poll_mode();
        }
        let handle = start(config);
        append(&path, &first);
        append(&path, &sentinel("one"));
        let got = events_until_sentinel(&handle, "one");
        assert_same_events(&got, &reference(&path, &first), "before truncation");

        let file = fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open");
        file.set_len(0).expect("truncate to zero");
        drop(file);
        append(&path, &second);
        append(&path, &sentinel("two"));
        let messages = until(
            &handle,
            |m| matches!(m, TailMessage::Event(e) if is_sentinel(e, "two")),
        )
        .expect("the rewritten content arrives");
        let reset = messages
            .iter()
            .position(|m| matches!(m, TailMessage::Reset { .. }))
            .expect("a reset is reported");
        // Whether the tailer saw the file short (truncated) or already rewritten past the old
        // offset (a different first line: replaced) depends on timing; both re-read it.
        assert!(matches!(
            messages[reset],
            TailMessage::Reset {
                reason: ResetReason::Truncated | ResetReason::Replaced,
                ..
            }
        ));
        assert!(events(messages[..reset].to_vec()).is_empty(), "poll={poll}");
        let got: Vec<_> = events(messages[reset..].to_vec())
            .into_iter()
            .filter(|e| !is_sentinel(e, "two"))
            .collect();
        assert_same_events(&got, &reference(&path, &second), "after truncation");
    }
}

#[test]
fn a_file_replaced_by_another_is_read_again_but_a_grown_copy_is_not() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let first = real(SHORT);
    let second = real(SLASH);
    let path = dir.join("s.jsonl");
    let handle = start(env.tailer_config(vec![Selector::All]));
    append(&path, &first);
    append(&path, &sentinel("one"));
    events_until_sentinel(&handle, "one");

    // A different transcript renamed over it: read from line one.
    let tmp = dir.join("s.jsonl.tmp");
    fs::write(&tmp, [&second[..], &sentinel("two")[..]].concat()).expect("write");
    fs::rename(&tmp, &path).expect("rename over");
    let messages = until(
        &handle,
        |m| matches!(m, TailMessage::Event(e) if is_sentinel(e, "two")),
    )
    .expect("the new file's events");
    assert!(messages.iter().any(|m| matches!(
        m,
        TailMessage::Reset {
            reason: ResetReason::Replaced,
            ..
        }
    )));
    let got: Vec<_> = events(messages)
        .into_iter()
        .filter(|e| !is_sentinel(e, "two"))
        .collect();
    assert_same_events(&got, &reference(&path, &second), "replacement");

    // The same transcript copied with more lines and renamed over: only the new lines.
    let mut grown = [&second[..], &sentinel("two")[..]].concat();
    let old_len = grown.len();
    grown.extend(sentinel("three"));
    fs::write(&tmp, &grown).expect("write");
    fs::rename(&tmp, &path).expect("rename over");
    let messages = until(
        &handle,
        |m| matches!(m, TailMessage::Event(e) if is_sentinel(e, "three")),
    )
    .expect("the appended line");
    assert!(
        !messages
            .iter()
            .any(|m| matches!(m, TailMessage::Reset { .. }))
    );
    assert_eq!(
        events(messages).len(),
        1,
        "only the new line, nothing repeated"
    );
    assert!(old_len > 0);
}

#[test]
fn deletion_is_reported_and_a_recreated_file_starts_over() {
    for poll in [false, true] {
        deletion_case(poll);
    }
}

fn deletion_case(poll: bool) {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(SHORT);
    let path = dir.join("s.jsonl");
    let mut config = env.tailer_config(vec![Selector::All]);
    if poll {
        config.mode = poll_mode();
    }
    let handle = start(config);
    append(&path, &bytes);
    append(&path, &sentinel("one"));
    events_until_sentinel(&handle, "one");
    fs::remove_file(&path).expect("delete");
    let messages = until(&handle, |m| matches!(m, TailMessage::Removed { .. }))
        .expect("the deletion is reported");
    assert!(matches!(messages.last(), Some(TailMessage::Removed { path: p }) if *p == path));

    append(&path, &bytes);
    append(&path, &sentinel("two"));
    let got = events_until_sentinel(&handle, "two");
    assert_same_events(&got, &reference(&path, &bytes), "recreated");
}

#[test]
fn a_new_session_appears_next_to_an_old_one() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let old = dir.join("old.jsonl");
    fs::write(&old, real(SLASH)).expect("write");
    let handle = start(env.tailer_config(vec![Selector::All]));
    until_caught_up(&handle);
    let bytes = real(COMPACT);
    let new = dir.join(format!("{}.jsonl", session_of(&bytes)));
    append(&new, &bytes);
    append(&new, &sentinel("new"));
    let messages = until(
        &handle,
        |m| matches!(m, TailMessage::Event(e) if is_sentinel(e, "new")),
    )
    .expect("the new session's events");
    assert_eq!(followed_paths(&messages), std::slice::from_ref(&new));
    let got: Vec<_> = events(messages)
        .into_iter()
        .filter(|e| !is_sentinel(e, "new"))
        .collect();
    assert_same_events(&got, &reference(&new, &bytes), "new session");
}

/// Remove every `"agentId":"…",` so the file name must say which agent it is.
fn without_agent_ids(bytes: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(bytes).expect("UTF-8");
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\"agentId\":\"") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 11..];
        let end = after.find('"').expect("closing quote");
        rest = after[end + 1..]
            .strip_prefix(',')
            .unwrap_or(&after[end + 1..]);
    }
    out.push_str(rest);
    out.into_bytes()
}

#[test]
fn subagent_transcripts_appear_under_their_session() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/home/USER/projects/spotter"));
    let sub = real(SUBAGENT);
    let sid = session_of(&sub);
    fs::write(dir.join(format!("{sid}.jsonl")), real(SHORT)).expect("write the session");
    let handle = start(env.tailer_config(vec![Selector::Session(sid.clone())]));
    until_caught_up(&handle);

    // The subagents dir does not exist yet: it appears with the first subagent.
    let subagents = dir.join(&sid).join("subagents");
    fs::create_dir_all(&subagents).expect("mkdir");
    fs::write(
        subagents.join("agent-a881341.meta.json"),
        br#"{"agentType":"general-purpose"}"#,
    )
    .expect("meta");
    let path = subagents.join("agent-a881341.jsonl");
    append(&path, &sub);
    append(&path, &sentinel("sub"));
    let messages = until(
        &handle,
        |m| matches!(m, TailMessage::Event(e) if is_sentinel(e, "sub")),
    )
    .expect("the subagent's events");
    let followed = messages
        .iter()
        .find_map(|m| match m {
            TailMessage::Followed(f) if f.info.path == path => Some(f.clone()),
            _ => None,
        })
        .expect("the subagent file is followed");
    assert_eq!(followed.info.kind, TranscriptKind::Subagent);
    assert_eq!(followed.info.agent_id.as_deref(), Some("a881341"));
    assert_eq!(followed.info.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(followed.info.agent_type.as_deref(), Some("general-purpose"));
    let got: Vec<_> = events(messages)
        .into_iter()
        .filter(|e| !is_sentinel(e, "sub"))
        .collect();
    assert!(got.iter().all(|e| e.agent.as_deref() == Some("a881341")));
    assert_same_events(&got, &reference(&path, &sub), "subagent");

    // Records without agentId: the agent comes from the file name.
    let bare = without_agent_ids(&sub);
    assert!(!String::from_utf8_lossy(&bare).contains("agentId"));
    let path = subagents.join("agent-b77.jsonl");
    append(&path, &bare);
    append(&path, &sentinel("bare"));
    let got = events_until_sentinel(&handle, "bare");
    assert!(!got.is_empty());
    assert!(got.iter().all(|e| e.agent.as_deref() == Some("b77")));
    assert!(
        got.iter()
            .all(|e| e.session.as_deref() == Some(sid.as_str()))
    );
    assert_same_events(&got, &reference(&path, &bare), "bare subagent");

    // A meta file that comes after its transcript: the subagent is announced again.
    fs::write(
        subagents.join("agent-b77.meta.json"),
        br#"{"agentType":"Explore"}"#,
    )
    .expect("meta");
    let messages = until(
        &handle,
        |m| matches!(m, TailMessage::Followed(f) if f.info.path == path),
    )
    .expect("announced again");
    let Some(TailMessage::Followed(again)) = messages.last() else {
        unreachable!("until stops on a Followed");
    };
    assert_eq!(again.info.agent_type.as_deref(), Some("Explore"));
    assert_eq!(again.info.agent_id.as_deref(), Some("b77"));
}

#[test]
fn over_long_lines_are_skipped_like_familiar_events_skips_them() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(COMPACT);
    let path = dir.join("s.jsonl");
    let small = NormalizerConfig {
        max_line_bytes: 4096,
        ..NormalizerConfig::default()
    };
    let mut config = env.tailer_config(vec![Selector::All]);
    config.normalizer = small.clone();
    let handle = start(config);
    // Long lines arrive in small pieces: the tailer must skip them without holding them.
    for piece in bytes.chunks(1000) {
        append(&path, piece);
    }
    append(&path, &sentinel("long"));
    let got = events_until_sentinel(&handle, "long");
    let (mut want, diagnostics) = normalize_bytes(&bytes, &small);
    let info = familiar_tail::discovery::describe(&path).expect("transcript");
    for event in &mut want {
        familiar_tail::tag(event, &info);
    }
    let too_long = diagnostics
        .iter()
        .filter(|d| matches!(d.kind, familiar_transcript::DiagnosticKind::TooLong { .. }))
        .count();
    assert!(too_long > 10, "the fixture has long lines: {too_long}");
    assert_same_events(&got, &want, "with a 4 KiB line cap");
    assert_eq!(handle.stats().skipped_lines as usize, diagnostics.len());
}

#[test]
fn a_legacy_agent_file_is_matched_to_its_session_by_its_records() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let sub = real(SUBAGENT);
    let sid = session_of(&sub);
    let legacy = dir.join("agent-a881341.jsonl");
    fs::write(&legacy, &sub).expect("write");
    fs::write(dir.join("other-session.jsonl"), real(SHORT)).expect("write");
    let handle = start(env.tailer_config(vec![Selector::Session(sid)]));
    let startup = until_caught_up(&handle);
    assert_eq!(followed_paths(&startup), [legacy]);
}

#[test]
fn project_paths_with_spaces_dots_and_underscores_in_every_layout() {
    let env = Env::new();
    let project = env.tmp.path().join("my proj.v2_final");
    let twin = env.tmp.path().join("my-proj-v2-final"); // same dash encoding
    fs::create_dir_all(&project).expect("mkdir");
    let projects = env.config.join("projects");
    let bytes = real(SHORT);
    let mine = with_cwd(&bytes, &project);
    let theirs = with_cwd(&bytes, &twin);

    let dash = env.project_dir(&project);
    assert!(dash.to_string_lossy().ends_with("-my-proj-v2-final"));
    let b64 = projects.join(familiar_tail::discovery::base64url_encode(&project));
    let sessions = env.config.join("sessions");
    let other = projects.join("-somewhere-else");
    for dir in [&b64, &sessions, &other] {
        fs::create_dir_all(dir).expect("mkdir");
    }
    let expected = [
        dash.join("a.jsonl"),
        b64.join("b.jsonl"),
        projects.join("c.jsonl"),
        sessions.join("d.jsonl"),
    ];
    for path in &expected {
        fs::write(path, &mine).expect("write");
    }
    fs::write(dash.join("twin.jsonl"), &theirs).expect("write"); // lossy collision
    fs::write(projects.join("flat-other.jsonl"), &theirs).expect("write");
    fs::write(other.join("e.jsonl"), &mine).expect("write");

    let selectors = vec![Selector::Project(project.clone())];
    let handle = start(env.tailer_config(selectors.clone()));
    let mut want: Vec<PathBuf> = expected.to_vec();
    want.sort();
    assert_eq!(followed_paths(&until_caught_up(&handle)), want);

    let mut found: Vec<PathBuf> = familiar_tail::discovery::discover(&env.config, &selectors)
        .into_iter()
        .map(|info| info.path)
        .collect();
    found.sort();
    assert_eq!(found, want, "the one-shot discovery agrees");

    // And what the project writes next arrives, in any of its layouts.
    append(&expected[1], &sentinel("b64"));
    let got = events_until_sentinel(&handle, "b64");
    assert!(got.is_empty());
}

#[test]
fn directories_created_after_start_are_picked_up() {
    for poll in [false, true] {
        late_directory_case(poll);
    }
}

fn late_directory_case(poll: bool) {
    let env = Env::new(); // not even the config dir exists
    let mut config = env.tailer_config(vec![Selector::All]);
    if poll {
        config.mode = poll_mode();
    }
    let handle = start(config);
    until_caught_up(&handle);
    let bytes = real(SHORT);
    let dir = env.project_dir(Path::new("/later"));
    let path = dir.join("s.jsonl");
    append(&path, &bytes);
    append(&path, &sentinel("later"));
    let got = events_until_sentinel(&handle, "later");
    assert_same_events(&got, &reference(&path, &bytes), "late directory");

    // A hook-named file in a directory that does not exist yet, outside the config dir.
    let elsewhere = env.tmp.path().join("elsewhere/deeper");
    let file = elsewhere.join("hooked.jsonl");
    let hook = format!(
        r#"{{"session_id":"x","transcript_path":{}}}"#,
        serde_json::to_string(&file.to_string_lossy()).expect("JSON")
    );
    let named = familiar_tail::transcript_path_from_hook(&hook).expect("a path");
    let mut config = env.tailer_config(vec![Selector::File(named)]);
    if poll {
        config.mode = poll_mode();
    }
    let handle = start(config);
    until_caught_up(&handle);
    fs::create_dir_all(&elsewhere).expect("mkdir");
    append(&file, &bytes);
    append(&file, &sentinel("hooked"));
    let got = events_until_sentinel(&handle, "hooked");
    assert_same_events(&got, &reference(&file, &bytes), "hook-named file");
}

#[test]
fn unreadable_entries_are_reported_and_skipped() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let denied = dir.join("denied.jsonl");
    fs::write(&denied, real(SLASH)).expect("write");
    let mut perms = fs::metadata(&denied).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o000);
    fs::set_permissions(&denied, perms).expect("chmod 000");
    // As root, mode 000 does not stop reads: then only the other kinds below are checked.
    let privileged = fs::File::open(&denied).is_ok();

    let fifo = dir.join("fifo.jsonl");
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("no NUL");
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a directory entry.
    let made = unsafe { libc::mkfifo(c_path.as_ptr(), 0o644) };
    assert_eq!(made, 0, "mkfifo");
    let dangling = dir.join("dangling.jsonl");
    std::os::unix::fs::symlink(dir.join("nowhere"), &dangling).expect("symlink");
    let good = dir.join("good.jsonl");

    let mut config = env.tailer_config(vec![Selector::All]);
    config.from_start = true;
    let handle = start(config);
    let bytes = real(SHORT);
    append(&good, &bytes);
    append(&good, &sentinel("good"));
    let messages = until(
        &handle,
        |m| matches!(m, TailMessage::Event(e) if is_sentinel(e, "good")),
    )
    .expect("the readable file still flows");
    let mut problems: Vec<(PathBuf, String)> = messages
        .iter()
        .filter_map(|m| match m {
            TailMessage::Problem { path, error } => Some((path.clone(), error.clone())),
            _ => None,
        })
        .collect();
    problems.sort();
    let paths: Vec<&PathBuf> = problems.iter().map(|(p, _)| p).collect();
    assert!(paths.contains(&&fifo), "{problems:?}");
    assert!(paths.contains(&&dangling), "{problems:?}");
    if privileged {
        eprintln!("running as root: mode 000 is readable, checked FIFO and dangling symlink");
    } else {
        let (_, error) = problems
            .iter()
            .find(|(p, _)| *p == denied)
            .expect("the mode-000 file is reported");
        assert!(error.contains("ermission denied"), "{error}");
    }
    // (As root the mode-000 file is followed too: it holds another session.)
    let want = reference(&good, &bytes);
    let got: Vec<_> = events(messages)
        .into_iter()
        .filter(|e| e.session == want[0].session && !is_sentinel(e, "good"))
        .collect();
    assert_same_events(&got, &want, "the readable file");
    assert_eq!(handle.stats().problems as usize, problems.len());
}

#[test]
fn a_full_channel_pauses_reading_and_loses_nothing() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(COMPACT);
    let path = dir.join("s.jsonl");
    let mut config = env.tailer_config(vec![Selector::All]);
    config.channel_capacity = 8;
    let handle = start(config);
    append(&path, &bytes);
    append(&path, &sentinel("full"));
    // Nobody reads until the tailer has had to pause.
    let deadline = Instant::now() + WAIT;
    while handle.stats().read_pauses == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let stats = handle.stats();
    assert!(stats.read_pauses > 0, "{stats:?}");
    assert!(stats.channel_full > 0, "{stats:?}");
    let got = events_until_sentinel(&handle, "full");
    assert_same_events(&got, &reference(&path, &bytes), "after backpressure");
}

#[test]
fn idle_and_quiet_timers_follow_the_injected_clock() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let sub = real(SUBAGENT);
    let path = dir.join("s.jsonl");
    let clock = Arc::new(ManualClock::new());
    let mut config = with_clock(env.tailer_config(vec![Selector::All]), clock.clone());
    config.timers = Timers::default();
    let handle = start(config);
    until_caught_up(&handle);

    // A prompt and a text-only answer with no turn-end marker.
    append(&path, &sub[..after_lines(&sub, 2)]);
    let messages = until(
        &handle,
        |m| matches!(m, TailMessage::Event(e) if e.kind == EventKind::Text),
    )
    .expect("the text event");
    let text = events(messages).pop().expect("text");
    assert_eq!(text.status, Status::Working);

    clock.advance(Duration::from_secs(6));
    let messages = until(&handle, |m| matches!(m, TailMessage::Event(_))).expect("a status");
    let status = events(messages).pop().expect("an event");
    assert_eq!(status.kind, EventKind::Status);
    assert_eq!(status.status, Status::WaitingForInput);
    assert_eq!(status.line, 2);
    assert_eq!(status.session, text.session);
    assert_eq!(status.context_used, text.context_used);

    clock.advance(Duration::from_secs(300));
    let messages = until(&handle, |m| matches!(m, TailMessage::Event(_))).expect("idle");
    let status = events(messages).pop().expect("an event");
    assert_eq!(
        (status.kind, status.status),
        (EventKind::Status, Status::Idle)
    );

    // New records wake it up: the next event is the record's, not another timer's.
    append(&path, &sub[after_lines(&sub, 2)..after_lines(&sub, 3)]);
    let messages = until(&handle, |m| matches!(m, TailMessage::Event(_))).expect("an event");
    let next = events(messages).pop().expect("an event");
    assert_ne!(next.kind, EventKind::Status);
    assert_eq!(next.line, 3);
}

#[test]
fn stopping_ends_the_thread() {
    let env = Env::new();
    env.project_dir(Path::new("/p"));
    let handle = start(env.tailer_config(vec![Selector::All]));
    let stopper = handle.stopper();
    stopper.stop();
    let deadline = Instant::now() + WAIT;
    while !handle.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(handle.is_finished());
}

#[test]
fn subagents_are_linked_to_the_tool_use_that_spawned_them() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/home/USER/projects/spotter"));
    let main = real("v2.1.39-spotter-compact-queue-progress.jsonl");
    let sid = session_of(&main);
    let path = dir.join(format!("{sid}.jsonl"));
    // Links are state: the silent warm-up finds them too.
    fs::write(&path, &main).expect("write");
    let handle = start(env.tailer_config(vec![Selector::Session(sid.clone())]));
    let startup = until_caught_up(&handle);
    let links: Vec<(String, String)> = startup
        .iter()
        .filter_map(|m| match m {
            TailMessage::SubagentLink {
                session,
                agent_id,
                tool_use_id,
            } => {
                assert_eq!(session.as_deref(), Some(sid.as_str()));
                Some((agent_id.clone(), tool_use_id.clone()))
            }
            _ => None,
        })
        .collect();
    assert!(
        links.contains(&(
            "a881341".to_owned(),
            "toolu_01VmaERAwhb19LGUwu9GenaK".to_owned()
        )),
        "{links:?}"
    );
    // Each link names a real Task/Agent call of the session.
    let starts: Vec<String> = reference(&path, &main)
        .into_iter()
        .filter(|e| e.kind == EventKind::SubagentStart)
        .filter_map(|e| e.tool_use_id)
        .collect();
    for (agent, tool_use) in &links {
        assert!(
            starts.contains(tool_use),
            "{agent} → {tool_use} not a subagent_start"
        );
    }
    // Sidechain records carry agentId and toolUseResult too, but link nothing.
    let sub = real(SUBAGENT);
    assert!(
        sub.split(|&b| b == b'\n')
            .all(|line| familiar_tail::subagent_link(line).is_none())
    );
}
