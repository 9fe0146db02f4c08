//! End-to-end tests of `familiar watch --headless`: the built binary in a child process with a
//! temporary `CLAUDE_CONFIG_DIR`, while the test appends a real transcript; its NDJSON must be
//! exactly what `familiar events` prints for the finished file. Ctrl-C and a closed stdout
//! end it with status 0. Waits are generous (10 s) and nothing is timed.

use std::fs::{self, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

const WAIT: Duration = Duration::from_secs(10);
const FIXTURE: &str = "v2.1.38-spotter-slash-command-queue.jsonl";

fn real_fixture(name: &str) -> Vec<u8> {
    let dir = std::env::var_os("FAMILIAR_REAL_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/real")
        });
    let path = dir.join(name);
    fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Replace the `cwd` of every record: the records of a project's sessions name it.
fn with_cwd(bytes: &[u8], cwd: &Path) -> Vec<u8> {
    let text = std::str::from_utf8(bytes).expect("fixtures are UTF-8");
    let cwd_json = serde_json::to_string(&cwd.to_string_lossy()).expect("a JSON string");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\"cwd\":\"") {
        out.push_str(&rest[..at]);
        out.push_str("\"cwd\":");
        out.push_str(&cwd_json);
        let after = &rest[at + 7..];
        let end = after.find('"').expect("a closing quote");
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out.into_bytes()
}

fn sentinel(text: &str) -> String {
    format!("{{\"type\":\"summary\",\"summary\":\"{text}\",\"leafUuid\":\"sentinel\"}}\n")
}

fn append(path: &Path, bytes: &[u8]) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open for append");
    file.write_all(bytes).expect("append");
}

/// A running `familiar watch` with its stdout lines on a channel and its stderr kept.
struct Watch {
    child: Child,
    lines: Option<Receiver<String>>,
    stdout: Option<ChildStdout>,
    stderr: Arc<Mutex<String>>,
}

impl Watch {
    fn start(config: &Path, cwd: &Path, args: &[&str], read_stdout: bool) -> Watch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_familiar"))
            // Events as well as the shipped scripts' actions; the tests compare the events.
            .args(["-v", "watch", "--headless", "--events", "--no-notify"])
            .args(args)
            .env("CLAUDE_CONFIG_DIR", config)
            // Isolated from the user's config, desktop bus and other running Familiars.
            .env("HOME", config)
            .env("XDG_CONFIG_HOME", config.join(".config"))
            .env_remove("FAMILIAR_CONFIG")
            .env("FAMILIAR_SOCKET", config.join("hook.sock"))
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/familiar-test-bus",
            )
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start familiar watch");
        let stderr = Arc::new(Mutex::new(String::new()));
        let err_pipe = child.stderr.take().expect("stderr pipe");
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in BufReader::new(err_pipe).lines().map_while(Result::ok) {
                let mut text = sink.lock().unwrap_or_else(|p| p.into_inner());
                text.push_str(&line);
                text.push('\n');
            }
        });
        let mut watch = Watch {
            stdout: child.stdout.take(),
            child,
            lines: None,
            stderr,
        };
        if read_stdout {
            let out = watch.stdout.take().expect("stdout pipe");
            let (tx, rx) = crossbeam_channel::unbounded();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if line.starts_with("{\"action\":") {
                        continue;
                    }
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            watch.lines = Some(rx);
        }
        watch.wait_stderr("caught up");
        watch
    }

    fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn wait_stderr(&self, needle: &str) {
        let deadline = Instant::now() + WAIT;
        while !self.stderr().contains(needle) {
            assert!(
                Instant::now() < deadline,
                "no {needle:?} on stderr within {WAIT:?}: {}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stdout lines up to (without) the one containing `needle`.
    fn lines_until(&self, needle: &str) -> Vec<String> {
        let lines = self.lines.as_ref().expect("stdout is read");
        let deadline = Instant::now() + WAIT;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "{needle:?} not printed within {WAIT:?}; got {} lines; stderr: {}",
                    got.len(),
                    self.stderr()
                )
            });
            if line.contains(needle) {
                return got;
            }
            got.push(line);
        }
    }

    fn wait_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "familiar watch did not end within {WAIT:?}: {}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: sending a signal to our own child process.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `familiar events FILE` lines.
fn familiar_events(file: &Path) -> Vec<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("events")
        .arg(file)
        .output()
        .expect("run familiar events");
    assert!(output.status.success());
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn watch_file_prints_what_familiar_events_prints_and_ends_on_ctrl_c() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("session.jsonl");
    let path_arg = path.to_str().expect("UTF-8 path");
    let mut watch = Watch::start(&config, tmp.path(), &["--file", path_arg], true);

    // Append in uneven chunks that cut lines (and multi-byte characters) anywhere.
    let bytes = real_fixture(FIXTURE);
    let mut at = 0;
    let mut step = 1;
    while at < bytes.len() {
        let end = (at + step).min(bytes.len());
        append(&path, &bytes[..end][at..]);
        at = end;
        step = (step * 7 + 3) % 9_000 + 1;
    }
    append(&path, sentinel("e2e-end").as_bytes());
    let got = watch.lines_until("e2e-end");

    let copy = tmp.path().join("session.jsonl");
    fs::write(&copy, &bytes).expect("copy");
    // The copy lives elsewhere; the events name sessions by their records, not the path.
    let want = familiar_events(&copy);
    assert!(!want.is_empty());
    assert_eq!(got, want);

    watch.signal(libc::SIGINT);
    let status = watch.wait_exit();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn a_closed_stdout_ends_it_cleanly() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let mut watch = Watch::start(&config, tmp.path(), &["--all"], false);
    let mut reader = BufReader::new(watch.stdout.take().expect("stdout"));
    append(&dir.join("s.jsonl"), &real_fixture(FIXTURE));
    let mut first = String::new();
    reader.read_line(&mut first).expect("read a line");
    assert!(first.starts_with("{\"kind\":"), "{first}");
    drop(reader); // the reader goes away, as with `| head -1`
    let status = watch.wait_exit();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn by_default_it_follows_the_current_directory_from_the_end() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let project = tmp.path().join("my proj.v2_x");
    fs::create_dir_all(&project).expect("mkdir");
    let project = project.canonicalize().expect("canonical");
    let encoded: String = project
        .to_string_lossy()
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                b as char
            } else {
                '-'
            }
        })
        .collect();
    let dir = config.join("projects").join(encoded);
    fs::create_dir_all(&dir).expect("mkdir");
    let other = config.join("projects").join("-elsewhere");
    fs::create_dir_all(&other).expect("mkdir");
    let bytes = with_cwd(&real_fixture(FIXTURE), &project);
    let path = dir.join("s.jsonl");
    let half = bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(20)
        .map(|(i, _)| i + 1)
        .expect("lines");
    fs::write(&path, &bytes[..half]).expect("first part");

    let mut watch = Watch::start(&config, &project, &[], true);
    append(&other.join("x.jsonl"), &bytes); // another project: not followed
    append(&path, &bytes[half..]);
    append(&path, sentinel("default-end").as_bytes());
    let got = watch.lines_until("default-end");

    fs::write(tmp.path().join("whole.jsonl"), &bytes).expect("copy");
    let want: Vec<String> = familiar_events(&tmp.path().join("whole.jsonl"))
        .into_iter()
        .filter(|line| {
            let event: serde_json::Value = serde_json::from_str(line).expect("JSON");
            event["line"].as_u64().is_some_and(|n| n > 21)
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(got, want, "only the appended part, only this project");

    watch.signal(libc::SIGTERM);
    let status = watch.wait_exit();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn a_hook_permission_prompt_becomes_a_status_event() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("session.jsonl");
    let path_arg = path.to_str().expect("UTF-8 path");
    let watch = Watch::start(&config, tmp.path(), &["--file", path_arg], true);
    watch.wait_stderr("listening for Claude Code hooks");

    // What Claude Code pipes into a Notification hook.
    let hook_json = format!(
        r#"{{"session_id":"hook-session","transcript_path":"{path_arg}","hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}}"#
    );
    let mut hook = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("hook")
        .env("FAMILIAR_SOCKET", config.join("hook.sock"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run familiar hook");
    hook.stdin
        .take()
        .expect("stdin")
        .write_all(hook_json.as_bytes())
        .expect("write hook input");
    let output = hook.wait_with_output().expect("familiar hook ends");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    append(&path, sentinel("after-hook").as_bytes());
    let got = watch.lines_until("after-hook");
    let status: Vec<serde_json::Value> = got
        .iter()
        .map(|line| serde_json::from_str(line).expect("NDJSON"))
        .filter(|event: &serde_json::Value| event["kind"] == "status")
        .collect();
    assert_eq!(status.len(), 1, "{got:?}");
    assert_eq!(status[0]["status"], "waiting_for_approval");
    assert_eq!(status[0]["session"], "hook-session");
    assert_eq!(
        status[0]["text"],
        "Claude needs your permission to use Bash"
    );
}

/// A user prompt record, as Claude Code writes it.
fn prompt_record(text: &str) -> String {
    format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"sessionId\":\"s-reload\",\"isSidechain\":false,\"timestamp\":\"2026-02-11T10:00:00.000Z\"}}\n"
    )
}

#[test]
fn scripts_hot_reload_while_watching_and_a_broken_change_keeps_the_old_one() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("session.jsonl");
    let script = tmp.path().join("mine.rhai");
    fs::write(
        &script,
        "fn on_prompt(ev) { emit(\"mine\", #{ version: 1, text: ev.text }); }\n",
    )
    .expect("script");
    let mut watch = Watch::start(
        &config,
        tmp.path(),
        &[
            "--file",
            path.to_str().expect("UTF-8"),
            "--script",
            script.to_str().expect("UTF-8"),
        ],
        false,
    );
    let (tx, lines) = crossbeam_channel::unbounded();
    let out = watch.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if line.contains("\"name\":\"mine\"") && tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = || -> serde_json::Value {
        let line = lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("no `mine` action in time: {}", watch.stderr()));
        serde_json::from_str(&line).expect("NDJSON")
    };

    append(&path, prompt_record("one").as_bytes());
    let first = next();
    assert_eq!(
        (first["data"]["version"].as_i64(), first["script"].as_str()),
        (Some(1), Some("mine.rhai"))
    );

    fs::write(
        &script,
        "fn on_prompt(ev) { emit(\"mine\", #{ version: 2, text: ev.text }); }\n",
    )
    .expect("script v2");
    watch.wait_stderr("reloaded");
    append(&path, prompt_record("two").as_bytes());
    assert_eq!(next()["data"]["version"], 2);

    fs::write(
        &script,
        "fn on_prompt(ev) { emit(\"mine\", #{ version: 3 }\n",
    )
    .expect("broken");
    watch.wait_stderr("the previous version keeps running");
    append(&path, prompt_record("three").as_bytes());
    let third = next();
    assert_eq!(
        (
            third["data"]["version"].as_i64(),
            third["data"]["text"].as_str()
        ),
        (Some(2), Some("three"))
    );
}

#[test]
fn with_no_session_yet_it_says_where_it_looked_and_picks_one_up_when_it_appears() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let project = tmp.path().join("fresh_project");
    fs::create_dir_all(&project).expect("mkdir");
    let watch = Watch::start(&config, &project, &[], true);
    let encoded = config.join("projects").join(
        project
            .to_str()
            .expect("UTF-8")
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-"),
    );
    watch.wait_stderr(&format!(
        "no Claude Code session yet in {}",
        encoded.display()
    ));
    watch.wait_stderr("the config dir comes from CLAUDE_CONFIG_DIR");
    // Claude Code starts: the project dir and its first transcript appear. (The dash encoding
    // is lossy, so the tailer confirms the project by the records' own `cwd`.)
    fs::create_dir_all(&encoded).expect("mkdir project dir");
    let record = format!(
        "{{\"type\":\"user\",\"cwd\":{},\"sessionId\":\"s-new\",\"message\":{{\"role\":\"user\",\"content\":\"first-record\"}},\"timestamp\":\"2026-02-11T10:00:00.000Z\"}}\n",
        serde_json::to_string(project.to_str().expect("UTF-8")).expect("JSON string")
    );
    append(&encoded.join("new-session.jsonl"), record.as_bytes());
    let before = watch.lines_until("first-record");
    assert!(
        before
            .iter()
            .any(|line| line.contains("\"session_start\"") && line.contains("s-new")),
        "{before:?}"
    );
}
