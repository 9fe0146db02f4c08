//! End-to-end: a live `familiar watch` gives memory back after big records (issue 28: one 5 MB
//! record left it at 43 MB from 11, three 50 MB records at 230 MB). The real binary, inotify on
//! a real file; its resident memory read from /proc.

use std::fs;
use std::time::{Duration, Instant};

mod common;

use common::watch::*;

/// The resident set of `pid`, in bytes.
fn rss(pid: u32) -> u64 {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .expect("VmRSS")
}

const MB: u64 = 1_000_000;

#[test]
fn memory_comes_back_after_big_records() {
    let home = Project::new();
    let path = home.session(1, &sentinel("start"));

    let watch = Watch::start(&home.config, &home.project, &[]);
    watch.wait_stderr("listening for Claude Code hooks");
    // Settled: the start-up's own allocations are behind it.
    std::thread::sleep(Duration::from_millis(1500));
    let before = rss(watch.pid());

    for n in 0..3 {
        let big = prompt_record(&"x".repeat(20 << 20));
        append(&path, big.as_bytes());
        append(&path, sentinel(&format!("after-{n}")).as_bytes());
        watch.events_until(&format!("after-{n}"));
    }
    // Given back within a few seconds of going idle.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut after = rss(watch.pid());
    while after > before + 5 * MB && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
        after = rss(watch.pid());
    }
    assert!(
        after <= before + 5 * MB,
        "resident {} MB after three 20 MiB records, {} MB before",
        after / MB,
        before / MB
    );
}
