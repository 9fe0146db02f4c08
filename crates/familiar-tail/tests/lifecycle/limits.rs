//! Limits and failures: over-long lines, unreadable entries, a full channel, stopping.

use super::*;

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
