//! The start-up backlog: existing files read up to their end at start (within
//! `prime_bytes`, at a line start with its real number), and `from_start`, which sends them
//! whole as new lines.

use super::*;

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

/// Regression: the start-up backlog of every file was read at once into the outbox and the
/// channel (14 MiB of lines in memory for 14 MiB of transcripts before the first was parsed).
/// Now a consumer that takes nothing finds only a few messages waiting, and then every line.
#[test]
fn a_backlog_waits_for_the_consumer_instead_of_piling_up_in_memory() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let bytes = real(COMPACT);
    let mut paths = Vec::new();
    for n in 0..4 {
        let path = dir.join(format!("s{n}.jsonl"));
        // Over a MiB each: several messages' worth.
        fs::write(&path, bytes.repeat((1 << 20) / bytes.len() + 1)).expect("write");
        paths.push(path);
    }
    let handle = start(env.tailer_config(vec![Selector::All]));
    std::thread::sleep(Duration::from_millis(500));
    let waiting = handle.receiver().len();
    assert!(
        (1..=16).contains(&waiting),
        "{waiting} messages waiting for a consumer that took none"
    );
    let streams = collect(&until_caught_up(&handle));
    for path in &paths {
        let want = lines_of(&fs::read(path).expect("read"));
        let got: Vec<Vec<u8>> = streams[path]
            .lines
            .iter()
            .map(|l| l.bytes.clone())
            .collect();
        assert_same_lines(&got, &want, "backlog read in steps");
    }
}
