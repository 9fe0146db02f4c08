//! The running-`familiar watch` harness shared by `tests/watch.rs` and `tests/faults.rs`: a
//! child process with its own temporary Claude dir, config, hook socket and bus, stdout lines on
//! a channel and stderr kept, plus helpers to write transcripts the way Claude Code does.

use std::fs::{self, OpenOptions};
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

/// Live lines as `familiar events` prints them: without the session model's own events
/// (`status` from timers and hooks, which come and go with timing; `snapshot` at start) and
/// without what the model adds to the normalizer's events (`offline_form`).
pub fn without_status(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .filter(|line| {
            !line.contains("\"kind\":\"status\"") && !line.contains("\"kind\":\"snapshot\"")
        })
        .map(|line| offline_form(&line))
        .collect()
}

/// One event line without what the session model adds to the normalizer's events, which
/// `familiar events` prints: the `cwd`/`git_branch` of a session's first event, the whole
/// `plan` on an event that changed it, and the turn's `think` carried onto `thinking` events.
pub fn offline_form(line: &str) -> String {
    let mut line = strip_field(&strip_field(line, "cwd"), "git_branch");
    line = strip_field(&line, "plan");
    if line.contains("\"kind\":\"thinking\"") {
        line = strip_field(&line, "think");
    }
    line
}

/// `line` without its `,"key":…` field, whatever its JSON value (string, number, array or
/// object; strings inside it may hold brackets and escaped quotes).
fn strip_field(line: &str, key: &str) -> String {
    let needle = format!(",\"{key}\":");
    let Some(start) = line.find(&needle) else {
        return line.to_owned();
    };
    let value = start + needle.len();
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    let mut end = line.len();
    for (i, c) in line[value..].char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
                if depth == 0 {
                    end = value + i + 1;
                    break;
                }
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '[' | '{' => depth += 1,
            ']' | '}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    end = value + i + 1;
                    break;
                }
            }
            // The end of a number, `true`, `false` or `null` at the top level.
            ',' | '}' if depth == 0 => {
                end = value + i;
                break;
            }
            _ => {}
        }
    }
    format!("{}{}", &line[..start], &line[end..])
}

/// How long to wait for something the binary should print. Generous: nothing is timed.
pub const WAIT: Duration = Duration::from_secs(20);
/// A small real transcript with prompts, tools and errors.
pub const FIXTURE: &str = "v2.1.38-spotter-slash-command-queue.jsonl";

/// The bytes of a real transcript.
pub fn real_fixture_bytes(name: &str) -> Vec<u8> {
    let path = familiar_testkit::real_fixture(name);
    fs::read(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// Replace the `cwd` of every record: a project's sessions name it, and the tailer checks it.
pub fn with_cwd(bytes: &[u8], cwd: &Path) -> Vec<u8> {
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
pub fn encoded_project_dir(config: &Path, project: &Path) -> PathBuf {
    config.join("projects").join(
        project
            .to_str()
            .expect("UTF-8")
            .replace(|c: char| !c.is_ascii_alphanumeric(), "-"),
    )
}

/// The bundled demo session, as Claude Code would have written it while working in `project`
/// (its records name it as their `cwd`), under the config dir `config`.
pub fn demo_session_in(config: &Path, project: &Path) {
    fs::create_dir_all(project).expect("project");
    let dir = encoded_project_dir(config, project);
    fs::create_dir_all(&dir).expect("project dir");
    fs::write(
        dir.join("d3m0d3m0-0000-4000-8000-00000000f00d.jsonl"),
        with_cwd(
            &fs::read(super::fixture("demo.jsonl")).expect("demo"),
            project,
        ),
    )
    .expect("session");
}

/// A temporary home for a watch test: a Claude config dir (`config`), a project directory
/// (`project`, where `familiar` runs) and the project's sessions directory (`sessions`), all
/// made, under a canonical temporary directory (`root`) kept as long as this lives.
pub struct Project {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub config: PathBuf,
    pub project: PathBuf,
    pub sessions: PathBuf,
}

impl Project {
    pub fn new() -> Project {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let config = root.join("claude");
        let project = root.join("app");
        fs::create_dir_all(&project).expect("mkdir");
        let sessions = encoded_project_dir(&config, &project);
        fs::create_dir_all(&sessions).expect("mkdir");
        Project {
            _tmp: tmp,
            root,
            config,
            project,
            sessions,
        }
    }

    /// A session file named by a UUID built from `n`, holding `first`.
    pub fn session(&self, n: usize, first: &str) -> PathBuf {
        let path = self
            .sessions
            .join(format!("{n:08}-0000-4000-8000-000000000000.jsonl"));
        fs::write(&path, first).expect("write");
        path
    }
}

/// A `summary` record naming a point in the test, as in `tests/watch.rs`.
pub fn sentinel(text: &str) -> String {
    format!("{{\"type\":\"summary\",\"summary\":\"{text}\",\"leafUuid\":\"sentinel\"}}\n")
}

/// A user prompt record, as Claude Code writes it.
pub fn prompt_record(text: &str) -> String {
    format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{text}\"}},\"sessionId\":\"s-watch\",\"isSidechain\":false,\"timestamp\":\"2026-02-11T10:00:00.000Z\"}}\n"
    )
}

pub fn append(path: &Path, bytes: &[u8]) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("open for append");
    file.write_all(bytes).expect("append");
}

/// `familiar events FILE` lines.
pub fn familiar_events(file: &Path) -> Vec<String> {
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

/// How [`Watch::start_with`] starts it.
#[derive(Default)]
pub struct Options<'a> {
    /// A session bus (notifications on); none: `--no-notify` and a bus that is not there.
    pub bus: Option<&'a str>,
    /// Stdout left to the test ([`Watch::take_stdout`]).
    pub raw: bool,
    /// At most this many open files, soft and hard.
    pub open_files: Option<u64>,
    /// More environment (after the harness's own).
    pub env: Vec<(&'static str, std::ffi::OsString)>,
}

/// A running `familiar watch --headless --events` with its stdout lines on a channel (all of
/// them: events and actions) and its stderr kept.
pub struct Watch {
    child: Child,
    lines: Option<Receiver<String>>,
    stdout: Option<ChildStdout>,
    stderr: Arc<Mutex<String>>,
}

impl Watch {
    /// Start watching with stdout read line by line ([`Watch::lines_until`]).
    pub fn start(config: &Path, cwd: &Path, args: &[&str]) -> Watch {
        Watch::start_with(config, cwd, args, Options::default())
    }

    /// Start with at most `limit` open files, soft and hard (so Familiar cannot raise it).
    pub fn start_with_open_files(config: &Path, cwd: &Path, args: &[&str], limit: u64) -> Watch {
        let options = Options {
            open_files: Some(limit),
            ..Options::default()
        };
        Watch::start_with(config, cwd, args, options)
    }

    /// Start on a session bus at `address` (notifications on).
    pub fn start_on_bus(config: &Path, cwd: &Path, args: &[&str], address: &str) -> Watch {
        let options = Options {
            bus: Some(address),
            ..Options::default()
        };
        Watch::start_with(config, cwd, args, options)
    }

    /// Start with stdout left to the test ([`Watch::take_stdout`]).
    pub fn start_raw(config: &Path, cwd: &Path, args: &[&str]) -> Watch {
        let options = Options {
            raw: true,
            ..Options::default()
        };
        Watch::start_with(config, cwd, args, options)
    }

    pub fn start_with(config: &Path, cwd: &Path, args: &[&str], options: Options<'_>) -> Watch {
        let Options {
            bus,
            raw,
            open_files,
            env,
        } = options;
        let read = !raw;
        let mut command = Command::new(env!("CARGO_BIN_EXE_familiar"));
        if let Some(limit) = open_files {
            use std::os::unix::process::CommandExt as _;
            let limit = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        }
        command
            .args(["-v", "watch", "--headless", "--events"])
            .args(args)
            .env("CLAUDE_CONFIG_DIR", config)
            .env_remove("ANTHROPIC_MODEL")
            // Codex's home is then `config/.codex`, Gemini CLI's dir `config/.gemini`, never
            // the user's.
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
            // Qwen Code's dir is then `config/.qwen`.
            .env_remove("QWEN_HOME")
            .env_remove("QWEN_RUNTIME_DIR")
            .env_remove("COPILOT_HOME")
            // opencode's database is then `config/.local/share/opencode/opencode.db`.
            .env_remove("OPENCODE_DB")
            .env_remove("XDG_DATA_HOME")
            // Isolated from the user's config, desktop bus and other running Familiars.
            .env("HOME", config)
            .env("XDG_CONFIG_HOME", config.join(".config"))
            .env_remove("FAMILIAR_CONFIG")
            .env("FAMILIAR_SOCKET", config.join("run/hook.sock"))
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .envs(env)
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
        let mut stdout = child.stdout.take();
        let mut lines = None;
        if read {
            let out: ChildStdout = stdout.take().expect("stdout pipe");
            let (tx, rx) = crossbeam_channel::unbounded();
            std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            lines = Some(rx);
        }
        let watch = Watch {
            child,
            lines,
            stdout,
            stderr,
        };
        watch.wait_stderr("caught up");
        watch
    }

    /// The raw stdout of a watch started with [`Watch::start_raw`].
    pub fn take_stdout(&mut self) -> ChildStdout {
        self.stdout.take().expect("started with start_raw")
    }

    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn wait_stderr(&self, needle: &str) {
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

    /// Stdout lines (events and actions) up to (without) the first one containing `needle`.
    pub fn lines_until(&self, needle: &str) -> Vec<String> {
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

    /// The first stdout line containing `needle` (the lines before it are skipped).
    pub fn line_containing(&self, needle: &str) -> String {
        let lines = self.lines.as_ref().expect("stdout is read");
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = lines.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "{needle:?} not printed within {WAIT:?}; stderr: {}",
                    self.stderr()
                )
            });
            if line.contains(needle) {
                return line;
            }
        }
    }

    /// The next `count` stdout lines.
    pub fn next_lines(&self, count: usize) -> Vec<String> {
        let lines = self.lines.as_ref().expect("stdout is read");
        let deadline = Instant::now() + WAIT;
        (0..count)
            .map(|n| {
                let left = deadline.saturating_duration_since(Instant::now());
                lines.recv_timeout(left).unwrap_or_else(|_| {
                    panic!(
                        "only {n} of {count} lines within {WAIT:?}: {}",
                        self.stderr()
                    )
                })
            })
            .collect()
    }

    /// Only the events of [`Watch::lines_until`] (actions left out).
    pub fn events_until(&self, needle: &str) -> Vec<String> {
        self.lines_until(needle)
            .into_iter()
            .filter(|line| line.starts_with("{\"kind\":"))
            .collect()
    }

    /// SIGINT, then the exit status (Ctrl-C is a normal way to stop watching).
    pub fn interrupt(&mut self) -> std::process::ExitStatus {
        self.signal(libc::SIGINT);
        self.wait_exit()
    }

    /// The process id of the running `familiar`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).expect("a pid");
        // SAFETY: sending a signal to our own child process.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }

    /// Wait for the process to end (after a signal, or on its own).
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
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
