//! `RunSink`: carries out `run([argv...])` actions, and only when the user allowed it
//! (`--allow-run` or `allow_run = true` in the config).
//!
//! The argv goes straight to `std::process::Command`: the first element is the program, the
//! rest its arguments, and no shell ever sees them, so transcript content that reaches a script
//! (quotes, `;`, `$(...)`) stays plain data. Each program runs on its own waiter thread with a
//! time limit; its exit status is logged, and one that runs too long is killed. Its stdout goes
//! to our stderr so an NDJSON stream on stdout stays clean.

use std::io;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use familiar_model::{Action, ActionKind};
use wait_timeout::ChildExt as _;

use crate::{FailureCounter, Sink};

/// Whether and how `run` actions are carried out.
#[derive(Debug, Clone)]
pub struct RunPolicy {
    /// Off unless the user said so.
    pub allowed: bool,
    /// A program still running after this is killed.
    pub timeout: Duration,
    /// Programs running at once; more are refused (and counted) until one ends.
    pub max_running: usize,
    pub output: ChildOutput,
}

impl Default for RunPolicy {
    fn default() -> RunPolicy {
        RunPolicy {
            allowed: false,
            timeout: Duration::from_secs(30),
            max_running: 4,
            output: ChildOutput::Stderr,
        }
    }
}

/// Where a started program's stdout and stderr go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildOutput {
    /// Both to our stderr (the default: stdout may carry NDJSON).
    Stderr,
    /// Discarded.
    Null,
}

/// How one started program ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// It exited by itself; `code` is `None` when a signal ended it.
    Exited {
        argv: Vec<String>,
        code: Option<i32>,
    },
    /// It outlived the time limit and was killed.
    Killed { argv: Vec<String> },
    /// It could not be started (not found, not executable).
    NotStarted { argv: Vec<String>, error: String },
}

/// Runs allowed `run` actions.
pub struct RunSink {
    policy: RunPolicy,
    waiters: Vec<JoinHandle<()>>,
    failures: FailureCounter,
    refused: u64,
    outcomes: Arc<Mutex<Vec<RunOutcome>>>,
}

impl RunSink {
    pub fn new(policy: RunPolicy) -> RunSink {
        RunSink {
            policy,
            waiters: Vec::new(),
            failures: FailureCounter::new(),
            refused: 0,
            outcomes: Arc::new(Mutex::new(Vec::new())),
        }
    }

    /// `run` actions refused because running programs is not allowed.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// How the programs started so far ended (those still running are missing; see `flush`).
    pub fn outcomes(&self) -> Vec<RunOutcome> {
        match self.outcomes.lock() {
            Ok(outcomes) => outcomes.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn refuse(&mut self, action: &Action) {
        self.refused += 1;
        if self.refused == 1 {
            tracing::warn!(
                sink = "run",
                script = %action.script,
                "a script asked to run a program, but running programs is off; enable it with \
                 --allow-run or `allow_run = true` in the config (further refusals are logged \
                 at debug level)"
            );
        } else {
            tracing::debug!(sink = "run", script = %action.script, "run action refused");
        }
    }

    fn start(&mut self, argv: &[String]) -> io::Result<()> {
        let Some((program, args)) = argv.split_first() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "run action with an empty argv",
            ));
        };
        let (stdout, stderr) = match self.policy.output {
            ChildOutput::Stderr => (Stdio::from(dup_stderr()?), Stdio::inherit()),
            ChildOutput::Null => (Stdio::null(), Stdio::null()),
        };
        let spawned = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(err) => {
                self.push_outcome(RunOutcome::NotStarted {
                    argv: argv.to_vec(),
                    error: err.to_string(),
                });
                return Err(io::Error::new(
                    err.kind(),
                    format!("cannot start {program:?}: {err}"),
                ));
            }
        };
        tracing::info!(sink = "run", program = %program, pid = child.id(), "started");
        let timeout = self.policy.timeout;
        let failures = self.failures.clone();
        let outcomes = Arc::clone(&self.outcomes);
        let argv = argv.to_vec();
        let waiter = std::thread::Builder::new()
            .name("familiar-run".to_owned())
            .spawn(move || {
                let outcome = wait(&mut child, timeout, argv, &failures);
                match outcomes.lock() {
                    Ok(mut list) => list.push(outcome),
                    Err(poisoned) => poisoned.into_inner().push(outcome),
                }
            })?;
        self.waiters.push(waiter);
        Ok(())
    }

    fn push_outcome(&self, outcome: RunOutcome) {
        match self.outcomes.lock() {
            Ok(mut list) => list.push(outcome),
            Err(poisoned) => poisoned.into_inner().push(outcome),
        }
    }

    fn reap(&mut self) {
        let (done, running): (Vec<_>, Vec<_>) =
            self.waiters.drain(..).partition(JoinHandle::is_finished);
        self.waiters = running;
        for waiter in done {
            let _ = waiter.join();
        }
    }
}

/// Wait for a started program within the time limit; log and count how it ended.
fn wait(
    child: &mut std::process::Child,
    timeout: Duration,
    argv: Vec<String>,
    failures: &FailureCounter,
) -> RunOutcome {
    let program = argv.first().cloned().unwrap_or_default();
    match child.wait_timeout(timeout) {
        Ok(Some(status)) => {
            if status.success() {
                tracing::info!(sink = "run", program = %program, "exited with {status}");
            } else {
                failures.record("run", &format_args!("{program:?} exited with {status}"));
            }
            RunOutcome::Exited {
                argv,
                code: status.code(),
            }
        }
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            failures.record(
                "run",
                &format_args!(
                    "{program:?} still running after {:.1} s; killed",
                    timeout.as_secs_f64()
                ),
            );
            RunOutcome::Killed { argv }
        }
        Err(err) => {
            let _ = child.kill();
            let _ = child.wait();
            failures.record("run", &format_args!("cannot wait for {program:?}: {err}"));
            RunOutcome::Killed { argv }
        }
    }
}

/// Our stderr as an owned descriptor, to hand to a child as its stdout.
fn dup_stderr() -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsFd as _;
    io::stderr().as_fd().try_clone_to_owned()
}

impl Sink for RunSink {
    fn name(&self) -> &str {
        "run"
    }

    fn handle(&mut self, action: &Action) {
        let ActionKind::Run { argv } = &action.kind else {
            return;
        };
        if !self.policy.allowed {
            self.refuse(action);
            return;
        }
        self.reap();
        if self.waiters.len() >= self.policy.max_running {
            self.failures.record(
                "run",
                &format_args!(
                    "{} programs already running; not starting {:?}",
                    self.waiters.len(),
                    argv.first().map(String::as_str).unwrap_or_default()
                ),
            );
            return;
        }
        if let Err(err) = self.start(argv) {
            self.failures.record("run", &err);
        }
    }

    fn flush(&mut self) {
        for waiter in self.waiters.drain(..) {
            let _ = waiter.join();
        }
    }

    fn failures(&self) -> u64 {
        self.failures.get()
    }
}

impl Drop for RunSink {
    fn drop(&mut self) {
        // Waiters end by themselves within the time limit; joining keeps exit statuses logged.
        self.flush();
    }
}
