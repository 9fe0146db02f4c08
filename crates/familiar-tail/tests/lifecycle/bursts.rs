//! Many writers at once, as at 200 live sessions: the tailer coalesces the inotify events of
//! a burst (one read per file per batch), and still every line arrives once, in order. Also
//! the watcher's own recursive watches: a directory moved into the tree is watched, one moved
//! out of it no longer reports under its old path.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::Write as _;

use super::*;

/// A line of writer `file`, round `round` (no fixture holds it).
fn burst_line(file: usize, round: usize) -> Vec<u8> {
    format!("{{\"type\":\"summary\",\"summary\":\"f{file} r{round}\",\"leafUuid\":\"burst\"}}\n")
        .into_bytes()
}

#[test]
fn a_burst_of_appends_to_50_files_arrives_in_order_once() {
    const FILES: usize = 50;
    const ROUNDS: usize = 40;
    for (poll, mode) in modes() {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/burst"));
        // Half of them exist at start (empty), half appear during the burst; a few are
        // subagents in directories created during the burst.
        let paths: Vec<PathBuf> = (0..FILES)
            .map(|n| {
                if n % 10 == 9 {
                    dir.join(format!("s{n}/subagents/agent-a{n}.jsonl"))
                } else {
                    dir.join(format!("s{n}.jsonl"))
                }
            })
            .collect();
        for path in paths.iter().take(FILES / 2) {
            fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
            fs::write(path, b"").expect("create");
        }
        let handle = start(config_for(&env, poll));
        until_caught_up(&handle);
        let mut writers: Vec<fs::File> = paths
            .iter()
            .map(|path| {
                fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .expect("open for append")
            })
            .collect();
        // Round-robin, one write per line (one inotify event each), some lines split in two
        // writes, so that many events per file pile up between two reads.
        for round in 0..ROUNDS {
            for (n, writer) in writers.iter_mut().enumerate() {
                let line = burst_line(n, round);
                if (n + round) % 7 == 0 {
                    let (head, tail) = line.split_at(line.len() / 2);
                    writer.write_all(head).expect("append");
                    writer.write_all(tail).expect("append");
                } else {
                    writer.write_all(&line).expect("append");
                }
            }
        }
        for writer in &mut writers {
            writer.write_all(&marker("end")).expect("append");
        }
        // Until every file's end marker came.
        let mut ended = 0;
        let messages = until(&handle, |m| {
            if let TailMessage::Lines { lines, .. } = m {
                ended += lines.iter().filter(|l| is_marker(&l.bytes, "end")).count();
            }
            ended == FILES
        })
        .unwrap_or_else(|| panic!("{mode}: not every end marker arrived"));
        let streams = collect(&messages);
        let mut seen: HashMap<&PathBuf, usize> = HashMap::new();
        for (n, path) in paths.iter().enumerate() {
            let stream = streams
                .get(path)
                .unwrap_or_else(|| panic!("{mode}: nothing from {}", path.display()));
            // Opened once, or before `CaughtUp` already (the files that existed).
            assert!(
                stream.opened.len() <= 1 && stream.lines.iter().all(|l| l.generation == 1),
                "{mode}: {} opened once: {:?}",
                path.display(),
                stream.opened
            );
            assert!(
                n < FILES / 2 || stream.opened.len() == 1,
                "{mode}: {n} opened"
            );
            let want: Vec<Vec<u8>> = (0..ROUNDS)
                .map(|round| {
                    let line = burst_line(n, round);
                    line[..line.len() - 1].to_vec()
                })
                .collect();
            assert_same_lines(&stream.lines_of_generation(1), &want, mode);
            let numbers: Vec<u64> = stream.lines.iter().map(|l| l.number).collect();
            let expected: Vec<u64> = (1..=ROUNDS as u64 + 1).collect();
            assert_eq!(
                numbers,
                expected,
                "{mode}: {} numbered once each",
                path.display()
            );
            assert!(
                stream.lines.iter().all(|l| !l.backlog),
                "{mode}: live lines"
            );
            *seen.entry(path).or_default() += 1;
        }
        assert_eq!(seen.len(), FILES);
        // Nothing more comes: no line was held back to be sent twice.
        append(&paths[0], &marker("after"));
        let stream = stream_of(&until_marker(&handle, "after"), &paths[0]);
        let after: Vec<u64> = stream.lines.iter().map(|l| l.number).collect();
        assert_eq!(after, [ROUNDS as u64 + 2], "{mode}: only the new line");
    }
}

#[test]
fn a_directory_moved_in_is_watched_and_one_moved_out_is_not_reported_under_its_old_path() {
    for (poll, mode) in modes() {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/moves"));
        let handle = start(config_for(&env, poll));
        until_caught_up(&handle);

        // Built outside the tree, then moved in: its file is followed from its first line,
        // and a later append to it (an event in a directory the watcher has to add) too.
        let outside = env.tmp.path().join("outside");
        fs::create_dir_all(outside.join("subagents")).expect("mkdir");
        let moved_file = outside.join("subagents/agent-a1.jsonl");
        append(&moved_file, &burst_line(1, 0));
        let inside = dir.join("s1");
        fs::rename(&outside, &inside).expect("move in");
        let path = inside.join("subagents/agent-a1.jsonl");
        append(&path, &marker("in"));
        let stream = stream_of(&until_marker(&handle, "in"), &path);
        let first = burst_line(1, 0);
        assert_same_lines(
            &stream.lines_of_generation(1),
            &[first[..first.len() - 1].to_vec()],
            mode,
        );
        append(&path, &marker("in again"));
        until_marker(&handle, "in again");

        // Moved out again: it is removed, and what is written there afterwards is not
        // reported under the old path; a file written in the tree still is.
        fs::rename(&inside, &outside).expect("move out");
        until(
            &handle,
            |m| matches!(m, TailMessage::Removed { path: p, .. } if **p == *path),
        )
        .unwrap_or_else(|| panic!("{mode}: the moved-out file was not removed"));
        append(&moved_file, &marker("outside"));
        let kept = dir.join("s2.jsonl");
        append(&kept, &marker("kept"));
        let messages = until_marker(&handle, "kept");
        let streams = collect(&messages);
        let old = streams.get(&path).cloned().unwrap_or_default();
        assert!(
            old.lines.iter().all(|l| !is_marker(&l.bytes, "outside")),
            "{mode}: a line written after the move was reported under the old path"
        );
        assert!(
            !streams.contains_key(&moved_file),
            "{mode}: a file outside the tree was followed"
        );
    }
}
