//! Fault tests of the built binary (issue 7, "Reliability"): each fault happens to a running
//! `familiar` in a child process, and the test checks that the pipeline keeps going and, where
//! the binary reports the fault, what it says. The project's transcript directory deleted and
//! recreated while watching; a script file deleted under hot reload; a closed stdout while
//! `events` still streams stdin and while `run` prints; the session bus dying mid-run, with a
//! real `dbus-daemon` and a notification server on it. A file replaced under the tailer is
//! covered by familiar-tail's `lifecycle.rs` and, at rate, by `bench/soak.sh`.
//! Every wait is generous and nothing is timed: the tests wait for what the binary prints.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

const WAIT: Duration = Duration::from_secs(20);
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

/// Replace the `cwd` of every record: a project's sessions name it, and the tailer checks it.
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

/// The project directory Claude Code uses for `project` (every other character a dash).
fn encoded_project_dir(config: &Path, project: &Path) -> PathBuf {
    config.join("projects").join(
        project
            .to_str()
            .expect("UTF-8")
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-"),
    )
}

/// A `summary` record naming a point in the test, as in `tests/watch.rs`.
fn sentinel(text: &str) -> String {
    format!("{{\"type\":\"summary\",\"summary\":\"{text}\",\"leafUuid\":\"sentinel\"}}\n")
}

/// A user prompt record, as Claude Code writes it.
fn prompt_record(text: &str) -> String {
    format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"sessionId\":\"s-faults\",\"isSidechain\":false,\"timestamp\":\"2026-02-11T10:00:00.000Z\"}}\n"
    )
}

fn append(path: &Path, bytes: &[u8]) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open for append");
    file.write_all(bytes).expect("append");
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

/// A running `familiar watch --headless --events` with its stdout lines on a channel (all of
/// them: events and actions) and its stderr kept.
struct Watch {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Watch {
    fn start(config: &Path, cwd: &Path, args: &[&str], bus: Option<&str>) -> Watch {
        let mut command = Command::new(env!("CARGO_BIN_EXE_familiar"));
        command
            .args(["-v", "watch", "--headless", "--events"])
            .args(args)
            .env("CLAUDE_CONFIG_DIR", config)
            // Isolated from the user's config, desktop bus and other running Familiars.
            .env("HOME", config)
            .env("XDG_CONFIG_HOME", config.join(".config"))
            .env_remove("FAMILIAR_CONFIG")
            .env("FAMILIAR_SOCKET", config.join("hook.sock"))
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        match bus {
            Some(address) => command.env("DBUS_SESSION_BUS_ADDRESS", address),
            None => command.arg("--no-notify").env(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/familiar-test-bus",
            ),
        };
        let mut child = command.spawn().expect("start familiar watch");
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
        let out: ChildStdout = child.stdout.take().expect("stdout pipe");
        let (tx, lines) = crossbeam_channel::unbounded();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let watch = Watch {
            child,
            lines,
            stderr,
        };
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

    /// Stdout lines up to (without) the first one containing `needle`.
    fn lines_until(&self, needle: &str) -> Vec<String> {
        let deadline = Instant::now() + WAIT;
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).unwrap_or_else(|_| {
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

    /// Only the events of [`Watch::lines_until`] (actions and timer status events left out).
    fn events_until(&self, needle: &str) -> Vec<String> {
        self.lines_until(needle)
            .into_iter()
            .filter(|line| line.starts_with("{\"kind\":") && !line.contains("\"kind\":\"status\""))
            .collect()
    }

    /// SIGINT, then the exit status (Ctrl-C is a normal way to stop watching).
    fn interrupt(&mut self) -> std::process::ExitStatus {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: sending a signal to our own child process.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
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
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_project_directory_deleted_and_recreated_is_followed_again() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let config = tmp.path().join("claude");
    let project = tmp.path().join("proj");
    fs::create_dir_all(&project).expect("mkdir");
    let project = project.canonicalize().expect("canonical");
    let dir = encoded_project_dir(&config, &project);
    fs::create_dir_all(&dir).expect("mkdir project dir");
    let project_arg = project.to_str().expect("UTF-8");
    let mut watch = Watch::start(&config, &project, &["--project", project_arg], None);

    let bytes = with_cwd(&real_fixture(FIXTURE), &project);
    let first = dir.join("first.jsonl");
    append(&first, &bytes);
    append(&first, sentinel("before-delete").as_bytes());
    assert!(!watch.events_until("before-delete").is_empty());

    // Claude Code's project directory goes away (the user cleaned ~/.claude/projects) ...
    fs::remove_dir_all(&dir).expect("delete the project dir");
    watch.wait_stderr("was deleted");
    // ... and comes back with a new session in it.
    fs::create_dir_all(&dir).expect("recreate the project dir");
    let second = dir.join("second.jsonl");
    append(&second, &bytes);
    append(&second, sentinel("after-recreate").as_bytes());
    let got = watch.events_until("after-recreate");

    let copy = tmp.path().join("second.jsonl");
    fs::write(&copy, &bytes).expect("copy");
    let want = familiar_events(&copy);
    assert!(!want.is_empty());
    assert_eq!(got, want, "every record of the new session, once");
    let status = watch.interrupt();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn a_script_deleted_while_watching_keeps_its_old_version_running() {
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
        None,
    );
    let mine = |needle: &str| -> serde_json::Value {
        let line = watch
            .lines_until(needle)
            .into_iter()
            .chain(std::iter::once(String::new()))
            .find(|line| line.contains("\"name\":\"mine\""))
            .unwrap_or_default();
        serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("no `mine` action before {needle:?}: {}", watch.stderr()))
    };

    append(&path, prompt_record("one").as_bytes());
    append(&path, sentinel("after-one").as_bytes());
    assert_eq!(mine("after-one")["data"]["text"], "one");

    fs::remove_file(&script).expect("delete the script");
    // Told clearly, once the deletion has settled...
    watch.wait_stderr("cannot read script");
    watch.wait_stderr("the previous version keeps running");
    // ...and a prompt after the deletion: the host must not have dropped (or half-reloaded) it.
    append(&path, prompt_record("two").as_bytes());
    append(&path, sentinel("after-two").as_bytes());
    let second = mine("after-two");
    assert_eq!(
        (
            second["data"]["version"].as_i64(),
            second["data"]["text"].as_str()
        ),
        (Some(1), Some("two")),
        "the old script still runs"
    );
    let status = watch.interrupt();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
}

#[test]
fn events_from_stdin_stop_quietly_when_the_reader_goes_away_mid_stream() {
    // `cat big.jsonl | familiar events - | head -1`: the reader closes while familiar is still
    // reading stdin and printing. (`tests/events_and_stats.rs` closes stdout before anything is
    // printed, on a file.)
    let bytes = real_fixture("v2.1.39-spotter-compact-queue-progress.jsonl");
    let mut child = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .args(["events", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        // Several copies: far more than a pipe buffer, so familiar is mid-stream when the
        // reader leaves. A write error here is familiar having ended, which is the point.
        for _ in 0..8 {
            if stdin.write_all(&bytes).is_err() {
                break;
            }
        }
    });
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    assert!(first.starts_with("{\"kind\":"), "{first}");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let status = child.wait().expect("wait");
    writer.join().expect("writer thread");
    assert_eq!(stderr, "", "no broken-pipe message");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn run_stops_quietly_when_the_reader_goes_away() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let input = tmp.path().join("big.jsonl");
    let bytes = real_fixture("v2.1.39-spotter-compact-queue-progress.jsonl");
    fs::write(&input, bytes.repeat(4)).expect("input");
    let script = tmp.path().join("every.rhai");
    // An action for every event: far more output than a pipe buffer holds.
    fs::write(
        &script,
        "fn on_event(ev) { emit(\"seen\", #{ kind: ev.kind }); }\n",
    )
    .expect("script");
    let mut child = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .arg("run")
        .arg(&script)
        .arg("--input")
        .arg(&input)
        .env("HOME", tmp.path())
        .env("XDG_CONFIG_HOME", tmp.path().join(".config"))
        .env_remove("FAMILIAR_CONFIG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    stdout.read_line(&mut first).expect("a first line");
    assert!(first.contains("\"seen\""), "{first}");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    let status = child.wait().expect("wait");
    assert!(
        !stderr.to_lowercase().contains("broken pipe"),
        "no broken-pipe message: {stderr}"
    );
    assert_eq!(status.code(), Some(0), "{stderr}");
}

/// A `dbus-daemon --session` on a socket in `dir`; killed on drop (as in familiar-sink's tests).
struct DbusDaemon {
    child: Child,
    address: String,
}

impl DbusDaemon {
    fn start(dir: &Path) -> DbusDaemon {
        let socket = dir.join("bus");
        let mut child = Command::new("dbus-daemon")
            .arg("--session")
            .arg("--nofork")
            .arg("--print-address=1")
            .arg(format!("--address=unix:path={}", socket.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("dbus-daemon runs (apt-get install dbus)");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("dbus-daemon prints its address");
        let address = line.trim().to_owned();
        assert!(address.starts_with("unix:"), "address: {address:?}");
        DbusDaemon { child, address }
    }

    /// The bus dies as a crashed session would: SIGKILL, no goodbye.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for DbusDaemon {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A minimal notification server: the body of each `Notify` call goes to the channel.
struct Server {
    bodies: crossbeam_channel::Sender<String>,
    next_id: u32,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Server {
    #[allow(clippy::too_many_arguments)]
    async fn notify(
        &mut self,
        _app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        _summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: HashMap<String, zbus::OwnedVariant>,
        _expire_timeout: i32,
    ) -> u32 {
        let _ = self.bodies.send(body);
        self.next_id += 1;
        self.next_id
    }

    async fn get_server_information(&self) -> (String, String, String, String) {
        (
            "familiar-faults-server".to_owned(),
            "familiar".to_owned(),
            "0.1".to_owned(),
            "1.2".to_owned(),
        )
    }

    async fn get_capabilities(&self) -> Vec<String> {
        vec!["body".to_owned()]
    }

    async fn close_notification(&self, _id: u32) {}
}

/// Serve notifications on the bus at `address` from a thread; returns once the name is owned.
fn start_notification_server(address: &str) -> Receiver<String> {
    let (bodies, received) = crossbeam_channel::unbounded();
    let (ready_tx, ready_rx) = crossbeam_channel::bounded(1);
    let address = address.to_owned();
    std::thread::spawn(move || {
        zbus::block_on(async move {
            let server = Server { bodies, next_id: 0 };
            let connection = zbus::connection::Builder::address(address.as_str())
                .name("org.freedesktop.Notifications")
                .serve_at("/org/freedesktop/Notifications", server)
                .build()
                .await
                .expect("the server connects to the test bus");
            ready_tx.send(()).expect("the test waits for the server");
            let _connection = connection;
            std::future::pending::<()>().await;
        });
    });
    ready_rx
        .recv_timeout(WAIT)
        .expect("notification server started");
    received
}

#[test]
fn the_session_bus_dying_mid_run_leaves_the_pipeline_running() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let mut daemon = DbusDaemon::start(tmp.path());
    let notified = start_notification_server(&daemon.address);
    let config = tmp.path().join("claude");
    let dir = config.join("projects").join("-work-x");
    fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("session.jsonl");
    // Notifies on every prompt: the shipped scripts debounce theirs by the wall clock.
    let script = tmp.path().join("loud.rhai");
    fs::write(
        &script,
        "fn on_prompt(ev) { notify(\"prompt\", ev.text); }\n",
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
        Some(&daemon.address),
    );

    append(&path, prompt_record("while-the-bus-lives").as_bytes());
    let body = notified
        .recv_timeout(WAIT)
        .unwrap_or_else(|_| panic!("no notification reached the server: {}", watch.stderr()));
    assert_eq!(body, "while-the-bus-lives");
    watch.lines_until("while-the-bus-lives");

    daemon.kill();
    for (i, text) in ["after-the-bus-died", "and-still-going"].iter().enumerate() {
        append(&path, prompt_record(text).as_bytes());
        let mark = format!("mark-{i}");
        append(&path, sentinel(&mark).as_bytes());
        let printed = watch.lines_until(&mark);
        assert!(
            printed
                .iter()
                .any(|line| line.starts_with("{\"action\":\"notify\"") && line.contains(*text)),
            "the notify action for {text:?} is still printed: {}",
            watch.stderr()
        );
    }
    watch.wait_stderr("desktop notifications unavailable");
    append(&path, sentinel("bus-end").as_bytes());
    watch.lines_until("bus-end");
    let status = watch.interrupt();
    assert!(status.success(), "{status:?}: {}", watch.stderr());
    assert!(notified.try_recv().is_err(), "nothing reached a dead bus");
}
