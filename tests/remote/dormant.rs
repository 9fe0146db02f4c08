//! Dormant sessions on a remote host: the feed leaves a transcript not written for a day
//! unread, as `watch` does here, and the local cursor keeps it so across a dropped link: one
//! written while the link was down wakes (its old lines backlog, the new one an event),
//! rather than being read all as new.

use std::time::SystemTime;

use super::*;

const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// A remote session written with `records`, last written `ago`.
fn aged_remote_session(
    sshd: &Sshd,
    name: &str,
    records: &str,
    ago: Duration,
) -> std::path::PathBuf {
    let path = remote_session(sshd, name);
    fs::write(&path, records).expect("write");
    let file = fs::File::options()
        .write(true)
        .open(&path)
        .expect("open to date");
    file.set_modified(SystemTime::now() - ago)
        .expect("set the mtime");
    path
}

/// `familiar sessions --json --remote` with `extra` arguments: the sessions' ids, and what
/// it said on stderr.
fn remote_session_ids(project: &Project, sshd: &Sshd, extra: &[&str]) -> (Vec<String>, String) {
    let output = remote_sessions(project, sshd)
        .args(extra)
        .output()
        .expect("run familiar sessions");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let sessions: serde_json::Value = serde_json::from_slice(&output.stdout).expect("a JSON array");
    let mut ids: Vec<String> = (sessions.as_array().expect("an array").iter())
        .filter_map(|session| session["session"].as_str().map(str::to_owned))
        .collect();
    ids.sort();
    (ids, stderr.into_owned())
}

#[test]
fn sessions_leaves_an_old_remote_session_unread_unless_asked_since_when() {
    let sshd = Sshd::start();
    let project = Project::new();
    let record = |id: &str| prompt_record("hello").replace("s-watch", id);
    aged_remote_session(&sshd, "old.jsonl", &record("s-old"), 3 * DAY);
    aged_remote_session(&sshd, "new.jsonl", &record("s-new"), DAY / 24);
    let (ids, said) = remote_session_ids(&project, &sshd, &[]);
    assert_eq!(ids, ["s-new"]);
    assert_eq!(
        said,
        "familiar: 1 transcript not written in the last 1d was not read (`familiar sessions \
         --since 30d`, or `--since all`, reads them)\n"
    );
    for since in ["4d", "all"] {
        let (ids, said) = remote_session_ids(&project, &sshd, &["--since", since]);
        assert_eq!(ids, ["s-new", "s-old"], "--since {since}");
        assert!(!said.contains("not read"), "{said}");
    }
}

#[test]
fn an_old_remote_session_written_while_the_link_was_down_tells_only_what_is_new() {
    let sshd = Sshd::start();
    let project = Project::new();
    let old = aged_remote_session(&sshd, "old.jsonl", &prompt_record("old-news"), 3 * DAY);
    let watch = start_watch(&project, &sshd, &[]);
    let connections = sshd.connections();
    let latest = *connections.last().expect("a connection");
    // SAFETY: kill(2) of a pid this test's ssh wrapper wrote; at worst it is gone.
    unsafe { libc::kill(latest, libc::SIGKILL) };
    append(&old, prompt_record("written-meanwhile").as_bytes());
    let deadline = Instant::now() + WAIT;
    while !watch.stderr().contains("connected again") {
        assert!(Instant::now() < deadline, "{}", watch.stderr());
        std::thread::sleep(Duration::from_millis(10));
    }
    append(&old, sentinel("after-the-link").as_bytes());
    let prompts: Vec<String> = watch
        .events_until("after-the-link")
        .into_iter()
        .filter(|line| line.contains("\"kind\":\"prompt\""))
        .collect();
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    assert!(prompts[0].contains("written-meanwhile"), "{prompts:?}");
}
