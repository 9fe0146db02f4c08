//! Generations: truncation and rewrite, replacement by another file, deletion and
//! re-creation; a rename or delete right after the last write loses nothing.

use super::*;

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
        // Seen short, or already rewritten past the old offset: either way the first bytes
        // changed, and nothing unread was cut.
        let stream = stream_of(&until_marker(&handle, "two"), &path);
        assert_second_generation_from_line_one(&stream, &second, mode);
    }
}

/// The stream after a rewrite: a second generation, nothing unread cut, its lines (but the
/// marker) from line 1 those of `written`.
fn assert_second_generation_from_line_one(stream: &Stream, written: &[u8], mode: &str) {
    assert_eq!(
        stream.opened,
        [(2, OpenReason::Truncated { lost_bytes: 0 })],
        "{mode}"
    );
    assert_eq!(stream.lines.first().map(|l| l.number), Some(1), "{mode}");
    assert_same_lines(&stream.lines_of_generation(2), &lines_of(written), mode);
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
fn a_rewrite_in_place_that_keeps_the_first_bytes_starts_a_new_generation() {
    // Longer than the first bytes a generation is known by (4 KiB): only the bytes just
    // before the offset tell this rewrite from an append.
    let header = format!(
        "{{\"type\":\"summary\",\"summary\":\"{}\",\"leafUuid\":\"h\"}}\n",
        "x".repeat(5000)
    );
    for (poll, mode) in modes() {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/p"));
        let path = dir.join("s.jsonl");
        let handle = start(config_for(&env, poll));
        let old = [
            header.as_bytes(),
            b"{\"type\":\"user\",\"n\":\"old\"}\n",
            &marker("one"),
        ]
        .concat();
        append(&path, &old);
        let stream = stream_of(&until_marker(&handle, "one"), &path);
        assert_eq!(stream.opened, [(1, OpenReason::Appeared)], "{mode}");

        // Written over from the start in one write, longer than before and with the same
        // first 5 KB, as a program that saves in place does.
        let new = [
            header.as_bytes(),
            b"{\"type\":\"user\",\"n\":\"new\"}\n",
            b"{\"type\":\"user\",\"n\":\"more\"}\n",
            &marker("two"),
        ]
        .concat();
        let file = fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .expect("open");
        std::os::unix::fs::FileExt::write_all_at(&file, &new, 0).expect("write over");
        let stream = stream_of(&until_marker(&handle, "two"), &path);
        assert_second_generation_from_line_one(
            &stream,
            &new[..new.len() - marker("two").len()],
            mode,
        );
    }
}
