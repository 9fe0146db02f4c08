//! What happens to followed files over their life, against real files and real inotify:
//! the backlog at start, `--from-start`, truncation and rewrite, replacement, deletion, new
//! sessions and subagents appearing, directories that appear later, unreadable entries, a
//! full channel. Assertions are on lines and lifecycle messages (the tailer parses nothing).

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use familiar_tail::{OpenReason, Selector, TailMessage, TranscriptKind};

const SUBAGENT: &str = "v2.1.39-spotter-subagent-agent-a881341.jsonl";
const SHORT: &str = "v2.1.38-spotter-local-command-tool-errors.jsonl";
const SLASH: &str = "v2.1.38-spotter-slash-command-queue.jsonl";
const COMPACT: &str = "v2.0.67-erk-ci-compact-boundary-queue.jsonl";

fn opened_paths(messages: &[TailMessage]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = messages
        .iter()
        .filter_map(|m| match m {
            TailMessage::Opened { path, .. } => Some(path.to_path_buf()),
            _ => None,
        })
        .collect();
    paths.sort();
    paths.dedup();
    paths
}

fn modes() -> [(bool, &'static str); 2] {
    [(false, "inotify"), (true, "poll")]
}

fn config_for(env: &Env, poll: bool) -> familiar_tail::TailerConfig {
    let mut config = env.tailer_config(vec![Selector::All]);
    if poll {
        config.mode = poll_mode();
    }
    config
}

#[test]
fn live_mode_sends_the_backlog_then_the_appends_with_exact_line_numbers() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(COMPACT);
    let path = dir.join(format!("{}.jsonl", session_of(&bytes)));
    // Cut in the middle of a line: the line it completes later is new, and sent once.
    let cut = after_lines(&bytes, 120) + 37;
    fs::write(&path, &bytes[..cut]).expect("write the first part");

    let handle = start(env.tailer_config(vec![Selector::All]));
    let startup = until_caught_up(&handle);
    let stream = stream_of(&startup, &path);
    assert_eq!(stream.opened, [(1, OpenReason::Existing)]);
    assert!(stream.lines.iter().all(|l| l.backlog));
    let all = lines_of(&bytes);
    let got: Vec<Vec<u8>> = stream.lines.iter().map(|l| l.bytes.clone()).collect();
    assert_same_lines(&got, &all[..120], "backlog");
    assert_eq!(stream.lines.first().map(|l| l.number), Some(1));

    append(&path, &bytes[cut..]);
    append(&path, &marker("m1"));
    let messages = until_marker(&handle, "m1");
    let stream = stream_of(&messages, &path);
    assert!(stream.opened.is_empty(), "no new generation");
    assert!(stream.lines.iter().all(|l| !l.backlog));
    assert_eq!(stream.lines.first().map(|l| l.number), Some(121));
    let got: Vec<Vec<u8>> = stream.lines.iter().map(|l| l.bytes.clone()).collect();
    let mut want = all[120..].to_vec();
    want.extend(lines_of(&marker("m1")));
    assert_same_lines(&got, &want, "appended part");
}

#[test]
fn the_backlog_starts_within_prime_bytes_at_a_line_start_with_its_real_number() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(COMPACT);
    let path = dir.join("s.jsonl");
    fs::write(&path, &bytes).expect("write");
    let mut config = env.tailer_config(vec![Selector::All]);
    config.prime_bytes = 100_000;
    let handle = start(config);
    let stream = stream_of(&until_caught_up(&handle), &path);
    let first = stream.lines.first().expect("some backlog");
    let all = lines_of(&bytes);
    let number = first.number as usize;
    assert!(number > 1, "started part-way");
    // The first line sent is the first one that starts within the last 100 000 bytes.
    let start = after_lines(&bytes, number - 1);
    assert!(bytes.len() - start <= 100_000);
    assert!(bytes.len() - after_lines(&bytes, number - 2) > 100_000);
    let got: Vec<Vec<u8>> = stream.lines.iter().map(|l| l.bytes.clone()).collect();
    assert_same_lines(&got, &all[number - 1..], "primed backlog");
}

#[test]
fn from_start_sends_existing_files_whole_and_not_as_backlog() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(SHORT);
    let path = dir.join(format!("{}.jsonl", session_of(&bytes)));
    fs::write(&path, &bytes).expect("write");
    let mut config = env.tailer_config(vec![Selector::All]);
    config.from_start = true;
    config.prime_bytes = 10; // ignored with from_start
    let handle = start(config);
    let stream = stream_of(&until_caught_up(&handle), &path);
    assert_eq!(stream.opened, [(1, OpenReason::Existing)]);
    assert!(stream.lines.iter().all(|l| !l.backlog));
    let got: Vec<Vec<u8>> = stream.lines.iter().map(|l| l.bytes.clone()).collect();
    assert_same_lines(&got, &lines_of(&bytes), "from start");
}

#[test]
fn truncation_to_zero_and_rewrite_starts_a_new_generation_at_line_one() {
    for (poll, mode) in modes() {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/p"));
        let first = real(SHORT);
        let second = real(SLASH);
        let path = dir.join("s.jsonl");
        let handle = start(config_for(&env, poll));
        append(&path, &first);
        append(&path, &marker("one"));
        let stream = stream_of(&until_marker(&handle, "one"), &path);
        assert_eq!(stream.opened, [(1, OpenReason::Appeared)], "{mode}");
        assert_same_lines(&stream.lines_of_generation(1), &lines_of(&first), mode);

        fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open")
            .set_len(0)
            .expect("truncate to zero");
        append(&path, &second);
        append(&path, &marker("two"));
        let stream = stream_of(&until_marker(&handle, "two"), &path);
        // Seen short, or already rewritten past the old offset: either way the first bytes
        // changed, and nothing unread was cut.
        assert_eq!(
            stream.opened,
            [(2, OpenReason::Truncated { lost_bytes: 0 })],
            "{mode}"
        );
        assert_eq!(stream.lines.first().map(|l| l.number), Some(1), "{mode}");
        assert_same_lines(&stream.lines_of_generation(2), &lines_of(&second), mode);
    }
}

#[test]
fn a_file_renamed_over_the_path_is_a_new_generation_even_with_the_same_content() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let first = real(SHORT);
    let path = dir.join("s.jsonl");
    let handle = start(env.tailer_config(vec![Selector::All]));
    append(&path, &first);
    append(&path, &marker("one"));
    until_marker(&handle, "one");

    // Another inode, even one that starts the same: read from line one.
    let tmp = dir.join("s.jsonl.tmp");
    let content = [&first[..], &marker("one")[..], &marker("two")[..]].concat();
    fs::write(&tmp, &content).expect("write");
    fs::rename(&tmp, &path).expect("rename over");
    let stream = stream_of(&until_marker(&handle, "two"), &path);
    assert_eq!(stream.opened, [(2, OpenReason::Replaced)]);
    assert!(stream.removed.is_empty());
    let got: Vec<Vec<u8>> = stream.lines.iter().map(|l| l.bytes.clone()).collect();
    assert_same_lines(&got, &lines_of(&content), "replacement");
}

#[test]
fn deletion_is_reported_and_a_recreated_file_starts_over() {
    for (poll, mode) in modes() {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/p"));
        let bytes = real(SHORT);
        let path = dir.join("s.jsonl");
        let handle = start(config_for(&env, poll));
        append(&path, &bytes);
        append(&path, &marker("one"));
        until_marker(&handle, "one");
        fs::remove_file(&path).expect("delete");
        let messages = until(&handle, |m| matches!(m, TailMessage::Removed { .. }))
            .expect("the deletion is reported");
        assert_eq!(stream_of(&messages, &path).removed, [1], "{mode}");

        append(&path, &bytes);
        append(&path, &marker("two"));
        let stream = stream_of(&until_marker(&handle, "two"), &path);
        assert_eq!(stream.opened, [(2, OpenReason::Appeared)], "{mode}");
        assert_same_lines(&stream.lines_of_generation(2), &lines_of(&bytes), mode);
    }
}

/// Write 300 lines, then rename or delete the file at once: every line must arrive, then
/// `Removed` (the old descriptor is drained before the path is looked at).
fn gone_right_after_write(poll: bool, delete: bool) {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let path = dir.join("s.jsonl");
    let handle = start(config_for(&env, poll));
    let lines: Vec<Vec<u8>> = (0..300)
        .map(|n| format!("{{\"type\":\"user\",\"n\":{n}}}").into_bytes())
        .collect();
    append(&path, b"{\"first\":true}\n");
    until(&handle, |m| matches!(m, TailMessage::Lines { .. })).expect("the first line");
    let mut file = fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .expect("open");
    for line in &lines {
        std::io::Write::write_all(&mut file, &[&line[..], b"\n"].concat()).expect("write");
    }
    if delete {
        fs::remove_file(&path).expect("delete");
    } else {
        fs::rename(&path, dir.join("s.rotated")).expect("rename away");
    }
    let messages = until(&handle, |m| matches!(m, TailMessage::Removed { .. }))
        .expect("the removal is reported");
    let stream = stream_of(&messages, &path);
    let what = format!("poll={poll} delete={delete}");
    assert_same_lines(&stream.lines_of_generation(1), &lines, &what);
    assert_eq!(stream.removed, [1], "{what}");
}

#[test]
fn regression_rename_right_after_the_last_write_loses_no_lines() {
    gone_right_after_write(false, false);
}

#[test]
fn regression_delete_right_after_the_last_write_loses_no_lines() {
    gone_right_after_write(false, true);
}

#[test]
fn regression_rename_or_delete_within_the_poll_interval_loses_no_lines_in_poll_mode() {
    gone_right_after_write(true, false);
    gone_right_after_write(true, true);
}

/// Wait until the tailer has read `bytes` bytes in all.
fn wait_for_bytes(handle: &familiar_tail::TailerHandle, bytes: u64) {
    let deadline = Instant::now() + WAIT;
    while handle.stats().bytes < bytes {
        assert!(
            Instant::now() < deadline,
            "the tailer read {:?}",
            handle.stats()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn regression_replacement_while_the_first_line_is_half_read_does_not_splice_generations() {
    for (poll, mode) in modes() {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/p"));
        let path = dir.join("s.jsonl");
        let handle = start(config_for(&env, poll));
        let old = b"{\"type\":\"user\",\"sessionId\":\"old\",\"mess";
        append(&path, old);
        until(&handle, |m| matches!(m, TailMessage::Opened { .. })).expect("opened");
        wait_for_bytes(&handle, old.len() as u64);

        let new = [
            &b"{\"type\":\"user\",\"sessionId\":\"new\",\"message\":{}}\n"[..],
            &marker("new")[..],
        ]
        .concat();
        let tmp = dir.join("s.tmp");
        fs::write(&tmp, &new).expect("write");
        fs::rename(&tmp, &path).expect("rename over");
        let stream = stream_of(&until_marker(&handle, "new"), &path);
        assert_eq!(stream.opened, [(2, OpenReason::Replaced)], "{mode}");
        let got: Vec<Vec<u8>> = stream.lines.iter().map(|l| l.bytes.clone()).collect();
        assert_same_lines(&got, &lines_of(&new), mode);
        assert_eq!(stream.lines[0].number, 1);
    }
}

#[test]
fn regression_truncation_before_a_full_line_was_read_starts_a_new_generation() {
    for (poll, mode) in modes() {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/p"));
        let path = dir.join("s.jsonl");
        let handle = start(config_for(&env, poll));
        let old = b"{\"type\":\"user\",\"sessionId\":\"old\",\"mess";
        append(&path, old);
        until(&handle, |m| matches!(m, TailMessage::Opened { .. })).expect("opened");
        wait_for_bytes(&handle, old.len() as u64);

        // Cut and rewritten in place, longer than before: only the first bytes tell.
        let new = [
            &b"{\"type\":\"user\",\"sessionId\":\"new\",\"message\":{}}\n"[..],
            &marker("new")[..],
        ]
        .concat();
        let file = fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open");
        file.set_len(0).expect("truncate");
        std::os::unix::fs::FileExt::write_all_at(&file, &new, 0).expect("rewrite");
        let stream = stream_of(&until_marker(&handle, "new"), &path);
        // The half-read line is what the truncation cut before it could be read.
        assert_eq!(
            stream.opened,
            [(
                2,
                OpenReason::Truncated {
                    lost_bytes: old.len() as u64
                }
            )],
            "{mode}"
        );
        let got: Vec<Vec<u8>> = stream.lines.iter().map(|l| l.bytes.clone()).collect();
        assert_same_lines(&got, &lines_of(&new), mode);
        assert_eq!(handle.stats().lost_bytes, old.len() as u64);
    }
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
    append(&new, &marker("new"));
    let messages = until_marker(&handle, "new");
    assert_eq!(opened_paths(&messages), std::slice::from_ref(&new));
    let stream = stream_of(&messages, &new);
    assert_eq!(stream.opened, [(1, OpenReason::Appeared)]);
    assert_same_lines(&stream.lines_of_generation(1), &lines_of(&bytes), "new");
}

#[test]
fn subagent_transcripts_appear_under_their_session_with_their_meta() {
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
    append(&path, &marker("sub"));
    let messages = until_marker(&handle, "sub");
    let info = messages
        .iter()
        .find_map(|m| match m {
            TailMessage::Opened { path: p, info, .. } if **p == *path => Some(info.clone()),
            _ => None,
        })
        .expect("the subagent file is opened");
    assert_eq!(info.kind, TranscriptKind::Subagent);
    assert_eq!(info.agent_id.as_deref(), Some("a881341"));
    assert_eq!(info.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(info.agent_type.as_deref(), Some("general-purpose"));
    let stream = stream_of(&messages, &path);
    assert_same_lines(&stream.lines_of_generation(1), &lines_of(&sub), "subagent");

    // A meta file that comes after its transcript: a `Meta` message.
    let later = subagents.join("agent-b77.jsonl");
    append(&later, &sub);
    append(&later, &marker("b77"));
    until_marker(&handle, "b77");
    fs::write(
        subagents.join("agent-b77.meta.json"),
        br#"{"agentType":"Explore"}"#,
    )
    .expect("meta");
    let messages = until(&handle, |m| matches!(m, TailMessage::Meta { .. })).expect("Meta");
    let Some(TailMessage::Meta {
        path: meta_for,
        agent_type,
    }) = messages.last()
    else {
        unreachable!("until stops on a Meta");
    };
    assert_eq!(**meta_for, *later);
    assert_eq!(agent_type.as_deref(), Some("Explore"));
}

#[test]
fn over_long_lines_are_skipped_in_order_and_their_numbers_kept() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(COMPACT);
    let path = dir.join("s.jsonl");
    let mut config = env.tailer_config(vec![Selector::All]);
    config.max_line_bytes = 4096;
    let handle = start(config);
    // Long lines arrive in small pieces: the tailer must skip them without holding them.
    for piece in bytes.chunks(1000) {
        append(&path, piece);
    }
    append(&path, &marker("long"));
    let stream = stream_of(&until_marker(&handle, "long"), &path);
    let all = lines_of(&bytes);
    let long: Vec<(u64, u64)> = all
        .iter()
        .enumerate()
        .filter(|(_, line)| line.len() > 4096)
        .map(|(index, line)| (index as u64 + 1, line.len() as u64))
        .collect();
    assert!(
        long.len() > 10,
        "the fixture has long lines: {}",
        long.len()
    );
    let skipped: Vec<(u64, u64)> = stream
        .too_long
        .iter()
        .map(|&(_, n, len)| (n, len))
        .collect();
    assert_eq!(skipped, long);
    for line in stream.lines.iter().filter(|l| !is_any_marker(&l.bytes)) {
        assert_eq!(
            line.bytes,
            all[line.number as usize - 1],
            "line {}",
            line.number
        );
    }
    assert_eq!(handle.stats().too_long as usize, long.len());
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
    assert_eq!(opened_paths(&startup), [legacy]);
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
    assert_eq!(opened_paths(&until_caught_up(&handle)), want);

    let mut found: Vec<PathBuf> = familiar_tail::discovery::discover(&env.config, &selectors)
        .into_iter()
        .map(|info| info.path)
        .collect();
    found.sort();
    assert_eq!(found, want, "the one-shot discovery agrees");

    // And what the project writes next arrives, in any of its layouts.
    append(&expected[1], &marker("b64"));
    let stream = stream_of(&until_marker(&handle, "b64"), &expected[1]);
    assert!(stream.lines.iter().all(|l| !l.backlog));
}

#[test]
fn directories_created_after_start_are_picked_up() {
    for (poll, mode) in modes() {
        let env = Env::new(); // not even the config dir exists
        let handle = start(config_for(&env, poll));
        until_caught_up(&handle);
        let bytes = real(SHORT);
        let dir = env.project_dir(Path::new("/later"));
        let path = dir.join("s.jsonl");
        append(&path, &bytes);
        append(&path, &marker("later"));
        let stream = stream_of(&until_marker(&handle, "later"), &path);
        assert_same_lines(&stream.lines_of_generation(1), &lines_of(&bytes), mode);

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
        append(&file, &marker("hooked"));
        let stream = stream_of(&until_marker(&handle, "hooked"), &file);
        assert_same_lines(&stream.lines_of_generation(1), &lines_of(&bytes), mode);
    }
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
    append(&good, &marker("good"));
    let messages = until_marker(&handle, "good");
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
    let stream = stream_of(&messages, &good);
    assert_same_lines(&stream.lines_of_generation(1), &lines_of(&bytes), "good");
    assert_eq!(handle.stats().problems as usize, problems.len());
}

#[test]
fn a_full_channel_pauses_reading_and_loses_nothing() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(COMPACT);
    let path = dir.join("s.jsonl");
    let mut config = env.tailer_config(vec![Selector::All]);
    config.channel_capacity = 2;
    let handle = start(config);
    // One line per write, so the lines come in many messages.
    for line in lines_of(&bytes).iter().take(400) {
        append(&path, &[&line[..], b"\n"].concat());
    }
    append(&path, &marker("full"));
    // Nobody reads until the tailer has had to pause.
    let deadline = Instant::now() + WAIT;
    while handle.stats().read_pauses == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let stats = handle.stats();
    assert!(stats.read_pauses > 0, "{stats:?}");
    assert!(stats.channel_full > 0, "{stats:?}");
    let stream = stream_of(&until_marker(&handle, "full"), &path);
    let want: Vec<Vec<u8>> = lines_of(&bytes).into_iter().take(400).collect();
    assert_same_lines(&stream.lines_of_generation(1), &want, "after backpressure");
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
