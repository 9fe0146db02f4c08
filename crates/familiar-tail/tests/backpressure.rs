//! Many sessions changing at once while the consumer is behind (issue 28's hostile soak: 5,000
//! sessions written at 64 MB/s with a slow script took `familiar watch` to 1.5 GB). The tailer
//! reads a changed file only while what it read ahead of the consumer (its outbox and the
//! channel) is under a channel's worth of messages and [`MAX_AHEAD_BYTES`] of lines; what is
//! written waits on disk, and all of it arrives once the consumer reads on. Memory is measured
//! with a counting allocator, so the bound is exact and independent of timing.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use common::*;
use familiar_tail::{MAX_AHEAD_BYTES, Selector, TailMessage};

#[global_allocator]
static ALLOCATOR: familiar_testkit::Counting = familiar_testkit::Counting;

const FILES: usize = 400;
const MB: usize = 1_000_000;

#[test]
fn a_consumer_behind_holds_the_tailer_to_its_outbox_and_nothing_is_lost() {
    let env = Env::new();
    let dir = env.project_dir(Path::new("/p"));
    let paths: Vec<_> = (0..FILES)
        .map(|n| {
            let path = dir.join(format!("{n:08}-0000-4000-8000-000000000000.jsonl"));
            append(&path, &marker(&format!("start-{n}")));
            path
        })
        .collect();
    let handle = start(env.tailer_config(vec![Selector::All]));
    until_caught_up(&handle);

    // 400 sessions get 1 MB each at once; nobody reads for a while.
    let line = format!(
        "{{\"type\":\"summary\",\"summary\":\"{}\",\"leafUuid\":\"x\"}}\n",
        "y".repeat(1000)
    );
    let lines_each = MB / line.len();
    let base = familiar_testkit::Counting::reset_peak();
    for path in &paths {
        append(path, line.repeat(lines_each).as_bytes());
    }
    for (n, path) in paths.iter().enumerate() {
        append(path, &marker(&format!("end-{n}")));
    }
    std::thread::sleep(Duration::from_secs(2));
    let held = familiar_testkit::Counting::peak().saturating_sub(base);
    eprintln!("held at most {:.1} MB", held as f64 / MB as f64);
    // What was read ahead, and the one read on its way (a file's read budget and its batch).
    // Counted in messages alone, 34 MB were held here.
    assert!(
        held < MAX_AHEAD_BYTES + 2 * MB,
        "{} MB held while 400 MB waited on disk",
        held / MB
    );

    // Then everything arrives, in order, nothing lost.
    let mut got: HashMap<std::path::PathBuf, usize> = HashMap::new();
    let mut ends = 0;
    while ends < FILES {
        let message = handle
            .receiver()
            .recv_timeout(WAIT)
            .expect("the rest arrives once the consumer reads");
        if let TailMessage::Lines { path, lines, .. } = message {
            for got_line in &lines {
                if is_any_marker(&got_line.bytes) {
                    if std::str::from_utf8(&got_line.bytes).is_ok_and(|t| t.contains("end-")) {
                        ends += 1;
                    }
                } else {
                    *got.entry(path.to_path_buf()).or_default() += 1;
                }
            }
        }
    }
    assert_eq!(got.len(), FILES);
    assert!(
        got.values().all(|n| *n == lines_each),
        "every line of every file"
    );
}
