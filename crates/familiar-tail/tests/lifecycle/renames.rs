//! A transcript renamed to another transcript name within the watched directories (issue 28):
//! every line arrives exactly once, whether the tailer had the file open under its old name
//! (it goes on by device and inode, under the new name, where the old one stopped) or had not
//! opened it yet (the new name is read from its start).

use super::*;

/// The lines received, in order, whatever path they came under (markers left out).
fn all_lines(messages: &[TailMessage]) -> Vec<Vec<u8>> {
    messages
        .iter()
        .filter_map(|m| match m {
            TailMessage::Lines { lines, .. } => Some(lines),
            _ => None,
        })
        .flatten()
        .filter(|line| !is_any_marker(&line.bytes))
        .map(|line| line.bytes.clone())
        .collect()
}

fn numbered(from: usize, to: usize) -> Vec<Vec<u8>> {
    (from..to)
        .map(|n| format!("{{\"type\":\"user\",\"n\":{n}}}").into_bytes())
        .collect()
}

fn joined(lines: &[Vec<u8>]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|l| [&l[..], b"\n"].concat())
        .collect()
}

#[test]
fn a_followed_file_renamed_to_another_transcript_name_goes_on_where_it_stopped() {
    for (poll, mode) in modes() {
        for round in 0..10 {
            let env = Env::new();
            let dir = env.project_dir(Path::new("/p"));
            let old = dir.join("a.jsonl");
            let new = dir.join("b.jsonl");
            let handle = start(config_for(&env, poll));
            let first = numbered(0, 50);
            append(&old, &joined(&first));
            append(&old, &marker("one"));
            let mut messages = until_marker(&handle, "one");

            // More lines and half of one, then the rename, then the rest under the new name:
            // the tailer may look at the two names in either order.
            let second = numbered(50, 300);
            let mut bytes = joined(&second);
            let cut = bytes.len() - 7;
            let tail = bytes.split_off(cut);
            append(&old, &bytes);
            fs::rename(&old, &new).expect("rename");
            append(&new, &tail);
            let third = numbered(300, 320);
            append(&new, &joined(&third));
            append(&new, &marker("two"));
            messages.extend(until_marker(&handle, "two"));
            // All of that may have come through the old name's descriptor; this comes under
            // the new name, once the old one was seen gone.
            let fourth = numbered(320, 330);
            append(&new, &joined(&fourth));
            append(&new, &marker("three"));
            messages.extend(until_marker(&handle, "three"));

            let want = [first.clone(), second, third, fourth].concat();
            let what = format!("{mode}, round {round}");
            assert_same_lines(&all_lines(&messages), &want, &what);
            let streams = collect(&messages);
            let old_stream = &streams[&old];
            let new_stream = &streams[&new];
            assert_eq!(old_stream.removed, [1], "{what}");
            assert_eq!(new_stream.opened, [(1, OpenReason::Renamed)], "{what}");
            // Numbered on from where the old name stopped.
            let first_new = new_stream.lines.first().expect("lines under the new name");
            let last_old = old_stream.lines.last().expect("lines under the old name");
            assert_eq!(first_new.number, last_old.number + 1, "{what}");
        }
    }
}

#[test]
fn a_file_renamed_before_it_was_opened_is_read_once_under_its_new_name() {
    for (poll, mode) in modes() {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/p"));
        let handle = start(config_for(&env, poll));
        let mut want = Vec::new();
        for n in 0..20 {
            let old = dir.join(format!("tmp-{n}.jsonl"));
            let new = dir.join(format!("s-{n}.jsonl"));
            let lines = numbered(n * 100, n * 100 + 30);
            append(&old, &joined(&lines));
            fs::rename(&old, &new).expect("rename");
            append(&new, &marker(&format!("m{n}")));
            want.push((old, new, lines));
        }
        let mut left: Vec<String> = (0..20).map(|n| format!("m{n}")).collect();
        let messages = until(&handle, |m| {
            if let TailMessage::Lines { lines, .. } = m {
                left.retain(|text| !lines.iter().any(|l| is_marker(&l.bytes, text)));
            }
            left.is_empty()
        })
        .expect("every marker within the wait");
        for (old, new, lines) in &want {
            // Under the old name only if it was opened before the rename: then first.
            let got = all_lines(
                &messages
                    .iter()
                    .filter(|m| m.path() == Some(old) || m.path() == Some(new))
                    .cloned()
                    .collect::<Vec<_>>(),
            );
            assert_same_lines(&got, lines, &format!("{mode}: {}", new.display()));
        }
    }
}

/// splitmix64, so a failing seed replays.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n.max(1)
    }
}

/// One file written in pieces cut anywhere (mid-line too) and renamed from transcript name to
/// transcript name many times, at random moments (before the tailer opened it, while a line is
/// half written, twice within a poll interval): every line arrives once, in order, whatever
/// name it came under.
#[test]
fn a_file_renamed_again_and_again_while_written_gives_each_line_once_in_order() {
    for (poll, mode) in modes() {
        for seed in 0..12u64 {
            let mut rng = Rng(seed);
            let env = Env::new();
            let dir = env.project_dir(Path::new("/p"));
            let handle = start(config_for(&env, poll));
            let lines = numbered(0, 400);
            let bytes = joined(&lines);
            let mut name = dir.join("s-0.jsonl");
            let mut at = 0;
            let mut renames = 0;
            while at < bytes.len() {
                let piece = (1 + rng.below(600) as usize).min(bytes.len() - at);
                append(&name, &bytes[at..at + piece]);
                at += piece;
                if rng.below(3) == 0 {
                    renames += 1;
                    let next = dir.join(format!("s-{renames}.jsonl"));
                    fs::rename(&name, &next).expect("rename");
                    name = next;
                }
                if rng.below(4) == 0 {
                    std::thread::sleep(Duration::from_micros(rng.below(3000)));
                }
            }
            append(&name, &marker("end"));
            let messages = until_marker(&handle, "end");
            let what = format!("{mode}, seed {seed}, {renames} renames");
            assert_same_lines(&all_lines(&messages), &lines, &what);
            // Each name's stream keeps the contract (collect checks it) and numbers on.
            let streams = collect(&messages);
            let mut numbers: Vec<u64> = messages
                .iter()
                .filter_map(|m| match m {
                    TailMessage::Lines { lines, .. } => Some(lines.iter().map(|l| l.number)),
                    _ => None,
                })
                .flatten()
                .collect();
            let want: Vec<u64> = (1..=numbers.len() as u64).collect();
            assert_eq!(numbers, want, "{what}: numbered on across names");
            numbers.clear();
            assert!(!streams.is_empty());
        }
    }
}
