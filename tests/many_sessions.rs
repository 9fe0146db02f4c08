//! End-to-end: a project with more sessions than Familiar may hold files open (issue 28: with
//! the common limit of 1,024, 997 of 5,000 sessions were followed, 82 % of appends never seen,
//! and nothing was said). The real binary under a hard limit it cannot raise, real files,
//! inotify: every session's append is seen, and stderr says once how they are followed.

mod common;

use common::watch::*;

/// Descriptors Familiar may hold (soft and hard), far fewer than the sessions.
const OPEN_FILES: u64 = 96;
const SESSIONS: usize = 300;

/// A user prompt record naming the project it was written in.
fn prompt_in(project: &std::path::Path, text: &str) -> String {
    let cwd = serde_json::to_string(&project.to_string_lossy()).expect("JSON");
    prompt_record(text).replace("\"isSidechain\"", &format!("\"cwd\":{cwd},\"isSidechain\""))
}

/// The next event (not action) printed with `needle` in it.
fn event_containing(watch: &Watch, needle: &str) -> String {
    loop {
        let line = watch.line_containing(needle);
        if line.starts_with("{\"kind\":") {
            return line;
        }
    }
}

#[test]
fn every_session_is_followed_past_the_open_file_limit() {
    let home = Project::new();
    let project = &home.project;
    let paths: Vec<_> = (0..SESSIONS)
        .map(|n| home.session(n, &prompt_in(project, &format!("hello {n}"))))
        .collect();

    let mut watch = Watch::start_with_open_files(&home.config, project, &[], OPEN_FILES);
    watch.wait_stderr("listening for Claude Code hooks");
    for (n, path) in paths.iter().enumerate() {
        append(path, prompt_in(project, &format!("ping {n}")).as_bytes());
    }
    let mut seen = vec![false; SESSIONS];
    for _ in 0..SESSIONS {
        let line = event_containing(&watch, "\"text\":\"ping ");
        let event: serde_json::Value = serde_json::from_str(&line).expect("NDJSON");
        let n: usize = event["text"]
            .as_str()
            .and_then(|text| text.strip_prefix("ping "))
            .and_then(|n| n.parse().ok())
            .expect("a ping");
        assert!(!seen[n], "ping {n} twice");
        seen[n] = true;
    }
    assert!(seen.iter().all(|s| *s));

    // And once more, now that every file has been parked at least once.
    for (n, path) in paths.iter().enumerate().step_by(7) {
        append(path, prompt_in(project, &format!("again {n}")).as_bytes());
    }
    for _ in (0..SESSIONS).step_by(7) {
        event_containing(&watch, "\"text\":\"again ");
    }

    let stderr = watch.stderr();
    assert_eq!(
        stderr
            .matches("more than this process may hold open (limit 96 (hard 96))")
            .count(),
        1,
        "said once: {stderr}"
    );
    assert!(!stderr.contains("skipping"), "{stderr}");
    watch.signal(libc::SIGTERM);
    assert!(watch.wait_exit().success(), "{}", watch.stderr());
}
