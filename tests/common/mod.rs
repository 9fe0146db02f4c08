//! A small builder for end-to-end tests of the `familiar` binary, in the style of `just`'s:
//! `Test::new().args(["events", path]).stdout_contains("...").status(0).run()`.
//! Every test runs the real binary in a child process with its own temp `HOME` and
//! `CLAUDE_CONFIG_DIR`, so nothing on the machine (and nothing under `~/.claude`) is touched.
#![allow(dead_code)]

pub mod facts;
pub mod http;
pub mod interactive;
pub mod sshd;
pub mod statusline;
pub mod terminal;
pub mod watch;

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub struct Test {
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    env_remove: Vec<OsString>,
    stdin: Option<Vec<u8>>,
    current_dir: Option<PathBuf>,
    expected_status: Option<i32>,
    expected_stdout: Option<String>,
    expected_stderr: Option<String>,
    stdout_contains: Vec<String>,
    stderr_contains: Vec<String>,
    home: tempfile::TempDir,
}

impl Test {
    pub fn new() -> Test {
        Test {
            args: Vec::new(),
            env: Vec::new(),
            env_remove: Vec::new(),
            stdin: None,
            current_dir: None,
            expected_status: Some(0),
            expected_stdout: None,
            expected_stderr: None,
            stdout_contains: Vec::new(),
            stderr_contains: Vec::new(),
            home: tempfile::tempdir().expect("temp home"),
        }
    }

    /// The temp home directory (its `.claude` is the config dir unless overridden).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Test {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, args: I) -> Test {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Test {
        self.env
            .push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Run without this variable (e.g. `DISPLAY`), whatever the test's environment has.
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Test {
        self.env_remove.push(key.as_ref().to_owned());
        self
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Test {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Test {
        self.current_dir = Some(dir.into());
        self
    }

    pub fn status(mut self, code: i32) -> Test {
        self.expected_status = Some(code);
        self
    }

    pub fn stdout(mut self, expected: impl Into<String>) -> Test {
        self.expected_stdout = Some(expected.into());
        self
    }

    pub fn stderr(mut self, expected: impl Into<String>) -> Test {
        self.expected_stderr = Some(expected.into());
        self
    }

    pub fn stdout_contains(mut self, needle: impl Into<String>) -> Test {
        self.stdout_contains.push(needle.into());
        self
    }

    pub fn stderr_contains(mut self, needle: impl Into<String>) -> Test {
        self.stderr_contains.push(needle.into());
        self
    }

    /// Run the binary and check every expectation; returns the output for further checks.
    pub fn run(self) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_familiar"));
        command
            .args(&self.args)
            .env_remove("RUST_LOG")
            // The user's configured model is a source of the context window.
            .env_remove("ANTHROPIC_MODEL")
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("XDG_DATA_HOME", self.home.path().join(".local/share"))
            // `familiar stats` keeps what it read in the cache folder.
            .env("XDG_CACHE_HOME", self.home.path().join(".cache"))
            .env("CLAUDE_CONFIG_DIR", self.home.path().join(".claude"))
            // Codex's home defaults to the temporary HOME's `.codex` (Gemini CLI's dir to its
            // `.gemini`), never the user's.
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("QWEN_HOME")
            .env_remove("QWEN_RUNTIME_DIR")
            .env_remove("COPILOT_HOME")
            .env_remove("OPENCODE_DB")
            .env_remove("XDG_DATA_HOME")
            .env("NO_COLOR", "1")
            .stdin(if self.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for key in &self.env_remove {
            command.env_remove(key);
        }
        for (key, value) in &self.env {
            command.env(key, value);
        }
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        let mut child = command.spawn().expect("spawn familiar");
        if let Some(bytes) = &self.stdin {
            let mut stdin = child.stdin.take().expect("stdin piped");
            stdin.write_all(bytes).expect("write stdin");
        }
        let output = child.wait_with_output().expect("wait for familiar");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let context = || {
            format!(
                "familiar {:?}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                self.args
            )
        };
        if let Some(code) = self.expected_status {
            assert_eq!(
                output.status.code(),
                Some(code),
                "exit status\n{}",
                context()
            );
        }
        if let Some(expected) = &self.expected_stdout {
            assert_eq!(stdout, expected.as_str(), "stdout\n{}", context());
        }
        if let Some(expected) = &self.expected_stderr {
            assert_eq!(stderr, expected.as_str(), "stderr\n{}", context());
        }
        for needle in &self.stdout_contains {
            assert!(
                stdout.contains(needle.as_str()),
                "stdout lacks {needle:?}\n{}",
                context()
            );
        }
        for needle in &self.stderr_contains {
            assert!(
                stderr.contains(needle.as_str()),
                "stderr lacks {needle:?}\n{}",
                context()
            );
        }
        output
    }
}

/// `fixtures/NAME` of this repository.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// A real transcript from `shared/fixtures/real/` (override with `FAMILIAR_REAL_FIXTURES`).
pub fn real_fixture(name: &str) -> PathBuf {
    familiar_testkit::real_fixture(name)
}

/// Run `familiar ARGS` with its stdout closed before it writes (`familiar ... | head -1`) and
/// check that it ends quietly: nothing on stderr, exit 0.
pub fn assert_ends_quietly_with_stdout_closed<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_familiar"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn familiar");
    drop(child.stdout.take());
    let output = child.wait_with_output().expect("wait for familiar");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    assert_eq!(output.status.code(), Some(0));
}

/// Parse NDJSON output into JSON values, failing on any line that is not JSON.
pub fn ndjson(output: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect()
}

/// A real agent CLI installed from npm at the version `tests/agents/<agent>/package.json`
/// pins (`npm ci --prefix tests/agents/<agent>`, as `.ci/run` does), or the one the
/// environment variable `override_var` names (to test against the newest release).
/// One generation of an agent CLI under test (users run more than one, so CI drives each):
/// its npm folder under `tests/agents/`, its command, the version that folder pins, and the
/// variable that points the tests at another CLI with this generation's facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generation {
    pub dir: &'static str,
    pub command: &'static str,
    pub pinned: &'static str,
    pub override_var: &'static str,
}

impl Generation {
    pub fn bin(self) -> PathBuf {
        agent_cli(self.dir, self.command, self.override_var)
    }

    /// The version of the CLI that runs (its `--version`'s first word that is one: `2.1.332
    /// (Claude Code)`, `codex-cli 0.171.0`), checked against the pin unless overridden.
    pub fn version(self) -> String {
        let output = Command::new(self.bin())
            .arg("--version")
            .env("DISABLE_AUTOUPDATER", "1")
            .output()
            .expect("--version");
        let version = String::from_utf8_lossy(&output.stdout)
            .split_whitespace()
            .find(|word| word.starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or("")
            .to_owned();
        if std::env::var_os(self.override_var).is_none() {
            assert_eq!(
                version, self.pinned,
                "tests/agents/{} is not at the pinned version",
                self.dir
            );
        }
        version
    }
}

/// Where a real-CLI harness saves what the CLI wrote, in a folder named `name`
/// (`claude-2.1.332`): under `FAMILIAR_DRIFT_DIR` for the drift check
/// (`tests/agents/drift.sh`), else `fixtures/` with `FAMILIAR_UPDATE_FIXTURES` set, else
/// nowhere.
pub fn save_dir(name: &str) -> Option<PathBuf> {
    let base = match std::env::var_os("FAMILIAR_DRIFT_DIR") {
        Some(dir) => PathBuf::from(dir),
        None if std::env::var_os("FAMILIAR_UPDATE_FIXTURES").is_some() => {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
        }
        None => return None,
    };
    let dir = base.join(name);
    std::fs::create_dir_all(&dir).expect("save dir");
    Some(dir)
}

pub fn agent_cli(agent: &str, command: &str, override_var: &str) -> PathBuf {
    if let Some(bin) = std::env::var_os(override_var) {
        return PathBuf::from(bin);
    }
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/agents")
        .join(agent)
        .join("node_modules/.bin")
        .join(command);
    assert!(
        bin.exists(),
        "{} is missing: run `npm ci --prefix tests/agents/{agent}` first",
        bin.display()
    );
    bin
}

/// Waits for `child` at most `limit` (a hang guard, never a timing test): its exit status, or
/// a panic naming `what` after killing it.
pub fn wait_within(
    child: &mut std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("waits for the child") {
            return status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Wait for `child` (a real agent CLI) to end, its output kept; killed and failed after
/// `limit` (`what` names it in the failure).
pub fn wait_bounded(
    mut child: std::process::Child,
    limit: std::time::Duration,
    what: &str,
) -> std::process::Output {
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().expect("wait for the CLI").is_some() {
            return child.wait_with_output().expect("the CLI's output");
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{what} did not finish within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
