//! End-to-end: a watcher whose script is slow still answers Ctrl-C at once (issue 28: a batch
//! of lines went through the scripts whole before Ctrl-C was looked at; in the hostile soak
//! `familiar watch` took 8.7 s to stop). The real binary, a real file, a script busy for tens
//! of milliseconds on each event.

use std::fs;
use std::time::{Duration, Instant};

mod common;

use common::watch::*;

#[test]
fn ctrl_c_stops_a_busy_watcher_between_two_events() {
    let home = Project::new();
    let path = home.session(1, &sentinel("start"));
    // A handler that works for tens of milliseconds (busy, not asleep: scripts cannot sleep).
    let script = home.root.join("slow.rhai");
    fs::write(
        &script,
        "fn on_prompt(ev) { let n = 0; while n < 30000 { n += 1; } log(`done ${ev.line}`); }\n",
    )
    .expect("script");
    let script_arg = script.to_str().expect("UTF-8");

    let mut watch = Watch::start(&home.config, &home.project, &["--script", script_arg]);
    watch.wait_stderr("listening for Claude Code hooks");
    // A thousand prompts at once: one batch, far more than 5 s of work for the script.
    let prompts: String = (0..1000).map(|n| prompt_record(&format!("p{n}"))).collect();
    append(&path, prompts.as_bytes());
    watch.line_containing("done ");
    let asked = Instant::now();
    let status = watch.interrupt();
    let took = asked.elapsed();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
    assert!(
        took < Duration::from_secs(5),
        "Ctrl-C took {took:?} with a batch of slow events waiting"
    );
}
