//! A tailer that goes on where an earlier one stopped ([`familiar_tail::TailerConfig::resume`],
//! what `familiar feed` does after a dropped link): nothing sent twice, nothing lost, files
//! changed meanwhile read whole.

use std::collections::HashMap;
use std::sync::Arc;

use familiar_tail::ResumePoint;

use super::*;

/// Where each path's stream stands after `messages`: its device and inode, and the last
/// resume point sent.
fn points(messages: &[TailMessage]) -> familiar_tail::ResumeFrom {
    let mut identities = HashMap::new();
    let mut points = HashMap::new();
    for message in messages {
        match message {
            TailMessage::Opened { path, identity, .. } => {
                identities.insert(path.to_path_buf(), *identity);
            }
            TailMessage::Lines {
                path,
                resume: Some(at),
                ..
            } => {
                points.insert(path.to_path_buf(), (identities[&path.to_path_buf()], *at));
            }
            _ => {}
        }
    }
    points
}

#[test]
fn a_resumed_tailer_sends_only_what_is_new_and_rereads_what_changed() {
    for (poll, mode) in modes() {
        let env = Env::new();
        let dir = env.project_dir(Path::new("/p"));
        let bytes = real(COMPACT);
        let all = lines_of(&bytes);
        let kept = dir.join("kept.jsonl");
        let cut = dir.join("cut.jsonl");
        let replaced = dir.join("replaced.jsonl");
        let deleted = dir.join("deleted.jsonl");
        let half = after_lines(&bytes, 40);
        // `cut` ends in an unfinished line: it is completed while no tailer runs.
        fs::write(&kept, &bytes[..half]).expect("write");
        fs::write(&cut, &bytes[..half + 25]).expect("write");
        fs::write(&replaced, &bytes[..half]).expect("write");
        fs::write(&deleted, &bytes[..half]).expect("write");

        let first = start(config_for(&env, poll));
        let startup = until_caught_up(&first);
        first.stop();
        let stopped_at = points(&startup);
        assert_eq!(stopped_at.len(), 4, "{mode}: a point for every file");
        assert_eq!(
            stopped_at[&cut].1,
            ResumePoint {
                offset: half as u64,
                line: 41
            },
            "{mode}: the unfinished line is not passed"
        );

        // While no tailer runs.
        append(&kept, &bytes[half..after_lines(&bytes, 45)]);
        append(&cut, &bytes[half + 25..after_lines(&bytes, 42)]);
        fs::remove_file(&replaced).expect("remove");
        fs::write(&replaced, &bytes[..after_lines(&bytes, 3)]).expect("write anew");
        fs::remove_file(&deleted).expect("delete");
        let appeared = dir.join("appeared.jsonl");
        fs::write(&appeared, &bytes[..after_lines(&bytes, 2)]).expect("write");

        let mut config = config_for(&env, poll);
        config.resume = Some(Arc::new(stopped_at));
        let second = start(config);
        let messages = until_caught_up(&second);
        let lines = |path: &Path| {
            let stream = stream_of(&messages, path);
            assert!(
                stream.lines.iter().all(|l| !l.backlog),
                "{mode}: {}: what the first never sent is new",
                path.display()
            );
            let numbers: Vec<u64> = stream.lines.iter().map(|l| l.number).collect();
            (
                stream.opened.iter().map(|o| o.1).collect::<Vec<_>>(),
                numbers,
            )
        };
        assert_eq!(
            lines(&kept),
            (vec![OpenReason::Resumed], (41..=45).collect()),
            "{mode}"
        );
        assert_eq!(
            lines(&cut),
            (vec![OpenReason::Resumed], (41..=42).collect()),
            "{mode}"
        );
        assert_eq!(
            stream_of(&messages, &cut).lines[0].bytes,
            all[40],
            "{mode}: the line finished meanwhile is read whole"
        );
        assert_eq!(
            lines(&replaced),
            (vec![OpenReason::Existing], (1..=3).collect()),
            "{mode}: another file under the name is read whole"
        );
        assert_eq!(
            lines(&appeared),
            (vec![OpenReason::Existing], (1..=2).collect()),
            "{mode}: a file that appeared meanwhile is read whole"
        );
        assert!(stream_of(&messages, &deleted).opened.is_empty(), "{mode}");

        // And it follows on as usual.
        append(&kept, &marker("after"));
        let later = until_marker(&second, "after");
        let stream = stream_of(&later, &kept);
        assert_eq!(stream.lines.last().map(|l| l.number), Some(46), "{mode}");
        second.stop();
    }
}
