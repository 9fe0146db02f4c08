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
