//! Dormant files (`TailerConfig::dormant_after`): a file not written for a while when
//! following begins is not read at start; once written again, or named by a hook, it is read
//! as it would have been at start (backlog with exact line numbers, then `CaughtUp` again)
//! and followed from there.

use super::*;
use familiar_tail::WatchMode;
use std::time::SystemTime;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// Write `bytes` to `path` and date its last write `ago`.
fn write_aged(path: &Path, bytes: &[u8], ago: Duration) {
    fs::write(path, bytes).expect("write");
    let file = fs::File::options()
        .write(true)
        .open(path)
        .expect("open to date");
    file.set_modified(SystemTime::now() - ago)
        .expect("set the mtime");
}

struct Tree {
    env: Env,
    old: PathBuf,
    old_bytes: Vec<u8>,
    recent: PathBuf,
}

/// One session last written a week ago, one an hour ago.
fn tree() -> Tree {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let old_bytes = real(COMPACT);
    let old = dir.join(format!("{}.jsonl", session_of(&old_bytes)));
    write_aged(&old, &old_bytes, 7 * DAY);
    let recent_bytes = real(SHORT);
    let recent = dir.join(format!("{}.jsonl", session_of(&recent_bytes)));
    write_aged(&recent, &recent_bytes, DAY / 24);
    Tree {
        env,
        old,
        old_bytes,
        recent,
    }
}

fn config(tree: &Tree, mode: WatchMode) -> familiar_tail::TailerConfig {
    let mut config = tree.env.tailer_config(vec![Selector::All]);
    config.dormant_after = Some(DAY);
    config.mode = mode;
    config
}

fn a_dormant_file_is_not_read_until_it_is_written_again(mode: WatchMode) {
    let tree = tree();
    let handle = start(config(&tree, mode));
    let startup = until_caught_up(&handle);
    assert_eq!(
        opened_paths(&startup),
        std::slice::from_ref(&tree.recent),
        "only the recent one"
    );
    assert_eq!(handle.stats().dormant, 1);
    assert_eq!(handle.stats().files, 1);

    append(&tree.old, &marker("again"));
    let woken = until(&handle, |m| matches!(m, TailMessage::CaughtUp))
        .expect("the woken file's backlog, then CaughtUp again");
    let stream = stream_of(&woken, &tree.old);
    assert_eq!(stream.opened, [(1, OpenReason::Existing)]);
    // What it held at start is backlog, numbered from its first line; the new line is not.
    let all = lines_of(&tree.old_bytes);
    let backlog: Vec<Vec<u8>> = stream
        .lines
        .iter()
        .filter(|l| l.backlog)
        .map(|l| l.bytes.clone())
        .collect();
    assert_same_lines(&backlog, &all, "backlog of the woken file");
    assert_eq!(stream.lines.first().map(|l| l.number), Some(1));
    let mut rest = woken;
    if !stream.lines.iter().any(|l| is_marker(&l.bytes, "again")) {
        rest.extend(until_marker(&handle, "again"));
    }
    let stream = stream_of(&rest, &tree.old);
    let new: Vec<&Got> = stream.lines.iter().filter(|l| !l.backlog).collect();
    assert_eq!(new.len(), 1, "only the line written after start is new");
    assert!(is_marker(&new[0].bytes, "again"));
    assert_eq!(new[0].number, all.len() as u64 + 1, "its exact number");
    assert_eq!(handle.stats().dormant, 0);
}

#[test]
fn a_dormant_file_is_not_read_until_it_is_written_again_inotify() {
    a_dormant_file_is_not_read_until_it_is_written_again(WatchMode::Inotify);
}

#[test]
fn a_dormant_file_is_not_read_until_it_is_written_again_polled() {
    a_dormant_file_is_not_read_until_it_is_written_again(poll_mode());
}

#[test]
fn a_dormant_file_named_by_a_hook_is_read_at_once() {
    let tree = tree();
    let handle = start(config(&tree, WatchMode::Inotify));
    until_caught_up(&handle);
    handle.follow(tree.old.clone());
    let read = until_caught_up(&handle);
    let stream = stream_of(&read, &tree.old);
    assert_eq!(stream.opened, [(1, OpenReason::Existing)]);
    assert!(stream.lines.iter().all(|l| l.backlog));
    assert_same_lines(
        &stream.lines_of_generation(1),
        &lines_of(&tree.old_bytes),
        "the whole file as backlog",
    );
}

#[test]
fn a_dormant_file_replaced_by_another_is_read_whole_as_new() {
    let tree = tree();
    let handle = start(config(&tree, WatchMode::Inotify));
    until_caught_up(&handle);
    fs::remove_file(&tree.old).expect("remove");
    let fresh = [marker("first"), marker("second")].concat();
    fs::write(&tree.old, &fresh).expect("write another file there");
    let messages = until_marker(&handle, "second");
    let stream = stream_of(&messages, &tree.old);
    assert_eq!(stream.opened, [(1, OpenReason::Appeared)]);
    assert!(stream.lines.iter().all(|l| !l.backlog));
    assert_eq!(stream.lines.len(), 2);
}

#[test]
fn without_dormancy_and_with_from_start_every_file_is_read() {
    for from_start in [false, true] {
        let tree = tree();
        let mut config = config(&tree, WatchMode::Inotify);
        if from_start {
            config.from_start = true;
        } else {
            config.dormant_after = None;
        }
        let handle = start(config);
        let startup = until_caught_up(&handle);
        let mut want = vec![tree.old.clone(), tree.recent.clone()];
        want.sort();
        assert_eq!(opened_paths(&startup), want, "from_start: {from_start}");
        assert_eq!(handle.stats().dormant, 0);
    }
}

/// A later tailer told of the dormant files at line 0 (`familiar feed` after a dropped link):
/// one unchanged stays dormant (told again), one written while no tailer ran wakes as it
/// would have (what it held then backlog, numbered from its first line; the new line new),
/// instead of being read all as new.
#[test]
fn a_resumed_tailer_keeps_dormant_files_dormant_unless_written_meanwhile() {
    let tree = tree();
    let dir = tree.old.parent().expect("project dir").to_path_buf();
    let other_bytes = real(SHORT);
    let other = dir.join("other-old.jsonl");
    write_aged(&other, &other_bytes, 3 * DAY);
    let first = start(config(&tree, WatchMode::Inotify));
    let startup = until_caught_up(&first);
    first.stop();
    let mut points = familiar_tail::ResumeFrom::new();
    let mut told = Vec::new();
    for message in &startup {
        match message {
            TailMessage::Dormant {
                path,
                identity,
                size,
                ..
            } => {
                told.push(path.to_path_buf());
                assert_eq!(*size, fs::metadata(path).expect("stat").len());
                let at = familiar_tail::ResumePoint {
                    offset: *size,
                    line: 0,
                };
                points.insert(path.to_path_buf(), (*identity, at));
            }
            TailMessage::Opened { path, identity, .. } => {
                let at = familiar_tail::ResumePoint {
                    offset: fs::metadata(path).expect("stat").len(),
                    line: lines_of(&fs::read(path).expect("read")).len() as u64 + 1,
                };
                points.insert(path.to_path_buf(), (*identity, at));
            }
            _ => {}
        }
    }
    told.sort();
    let mut want = vec![tree.old.clone(), other.clone()];
    want.sort();
    assert_eq!(told, want, "each dormant file is told of");

    // While no tailer runs, one of them is written.
    append(&tree.old, &marker("meanwhile"));
    let mut config = config(&tree, WatchMode::Inotify);
    config.resume = Some(std::sync::Arc::new(points));
    let second = start(config);
    let mut messages = until_caught_up(&second);
    if !stream_of(&messages, &tree.old)
        .lines
        .iter()
        .any(|l| is_marker(&l.bytes, "meanwhile"))
    {
        messages.extend(until_marker(&second, "meanwhile"));
    }
    assert!(
        stream_of(&messages, &other).opened.is_empty(),
        "still dormant"
    );
    assert!(
        messages.iter().any(
            |m| matches!(m, TailMessage::Dormant { path, .. } if path.as_ref() == other.as_path())
        ),
        "and told of again"
    );
    let woken = stream_of(&messages, &tree.old);
    assert_eq!(woken.opened, [(1, OpenReason::Existing)]);
    let all = lines_of(&tree.old_bytes);
    let backlog: Vec<Vec<u8>> = (woken.lines.iter().filter(|l| l.backlog))
        .map(|l| l.bytes.clone())
        .collect();
    assert_same_lines(&backlog, &all, "what it held then is backlog");
    let new: Vec<&Got> = woken.lines.iter().filter(|l| !l.backlog).collect();
    assert_eq!(new.len(), 1, "only the line written meanwhile is new");
    assert_eq!(new[0].number, all.len() as u64 + 1);
    let recent = stream_of(&messages, &tree.recent);
    assert_eq!(recent.opened, [(1, OpenReason::Resumed)]);
    assert!(recent.lines.is_empty(), "nothing new in the recent one");
}
