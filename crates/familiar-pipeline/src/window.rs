//! Which front end a pipeline command shows: the game window, or the terminal (`--headless`,
//! or no window possible: no display, no X server, no GPU driver, no window executable).
//!
//! The window is its own executable, `familiar-window` (`src/window/main.rs`, the only one
//! that links Bevy), found beside this one: the headless commands never load Bevy (issue 17),
//! and a crash in a GPU driver ends that process, not the tailer. It probes for a window
//! first and says whether one can open; then the pipeline body runs here and its feed
//! (`familiar_model::WindowFeed`, NDJSON) goes down the window's stdin, while the window's
//! stdout tells of the replay keys pressed in it (`WindowReport`). The game's sounds are not
//! the window's to choose: the stage chooses them from the events (`familiar_audio::GameCues`).
//! The window closing ends the run (the stop flag); the pipeline ending closes a live window
//! (the end of its input).

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitCode, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use familiar_model::{ReplayControl, WindowFeed, WindowReport};

/// The window's executable, beside `familiar`.
pub const WINDOW_EXE: &str = "familiar-window";

/// How a missing window executable is had (README's install; `doctor` says it too).
pub const WINDOW_EXE_HOW: &str = "`cargo install --path . --profile dist-window --bin \
     familiar-window` installs it, `cargo build --release` builds it there";

/// Set when the window closed: the pipeline body should finish.
#[derive(Debug, Clone, Default)]
pub struct StopFlag(Arc<AtomicBool>);

impl StopFlag {
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What the pipeline body gets: where the window's feed goes (none when headless), whether
/// actions should be printed (headless), and the stop flag.
pub struct Front {
    pub game: Option<Sender<WindowFeed>>,
    pub headless: bool,
    pub stop: StopFlag,
}

impl Front {
    /// No window: the terminal (a dry run, `--headless`, or a window that could not open).
    pub fn terminal() -> Front {
        Front {
            game: None,
            headless: true,
            stop: StopFlag::default(),
        }
    }
}

/// How the window should look and behave.
pub struct WindowSpec<'a> {
    pub title: &'a str,
    /// The replay's pause and speed, driven by the window's keys.
    pub replay: Option<ReplayControl>,
    /// Save a screenshot after some frames and close (tests, docs).
    pub screenshot: Option<PathBuf>,
    /// Close the window when the pipeline ends (live watching, where the pipeline ends on
    /// Ctrl-C), rather than leaving it open on the last scene (a finished replay).
    pub close_with_pipeline: bool,
}

/// Run `body` with a window unless `headless` or no window can open (then say why in one line
/// and run in the terminal).
pub fn run<E: From<crate::Error>>(
    headless: bool,
    window: WindowSpec<'_>,
    body: impl FnOnce(Front) -> Result<ExitCode, E>,
) -> Result<ExitCode, E> {
    if headless {
        return body(Front::terminal());
    }
    let stop = StopFlag::default();
    let shown = match Window::open(&window, &stop) {
        Ok(shown) => shown,
        Err(reason) => {
            crate::report::warning(format_args!(
                "{reason}; staying in the terminal (actions as NDJSON on stdout)"
            ));
            return body(Front::terminal());
        }
    };
    let outcome = body(Front {
        game: Some(shown.feed.clone()),
        headless: false,
        stop: stop.clone(),
    });
    // Live: the end of the feed closes the window. A replay's window stays on its last scene
    // until the user closes it.
    let status = shown.finish();
    match status {
        Some(status) if !status.success() && !window.close_with_pipeline => {
            outcome?;
            Err(crate::Error::Window(status.to_string()).into())
        }
        _ => outcome,
    }
}

/// A running window process and the threads that talk to it.
struct Window {
    feed: Sender<WindowFeed>,
    writer: JoinHandle<()>,
    waiter: JoinHandle<Option<ExitStatus>>,
}

impl Window {
    /// Start the window process and wait for its probe; `Err` says why no window opens.
    fn open(spec: &WindowSpec<'_>, stop: &StopFlag) -> Result<Window, String> {
        let exe = window_executable()?;
        let mut command = Command::new(&exe);
        command
            .args(window_args(spec, crate::report::log_level()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        // SAFETY: prctl is async-signal-safe and touches no memory of ours. Should familiar
        // die without closing the window (a signal), the window goes too, as it did when both
        // were one process.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|err| format!("cannot start {}: {err}", exe.display()))?;
        tracing::info!(pid = child.id(), "window process {}", exe.display());
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ended(&mut child, "without pipes"));
        };
        let mut reports = BufReader::new(stdout);
        let mut first = String::new();
        match reports.read_line(&mut first) {
            Ok(n) if n > 0 => {}
            _ => return Err(ended(&mut child, "before saying whether a window can open")),
        }
        match serde_json::from_str::<WindowReport>(&first) {
            Ok(WindowReport::Ready) => {}
            Ok(WindowReport::Unavailable { reason }) => {
                let _ = child.wait();
                return Err(reason);
            }
            _ => {
                let _ = child.kill();
                return Err(ended(&mut child, "after an unexpected first line"));
            }
        }
        // Bounded: a stalled window slows the pipeline down (the tailer then pauses reading
        // and loses nothing) instead of growing memory without end.
        let (feed, items) = crossbeam_channel::bounded(4096);
        let writer = spawn("familiar-window-feed", move || write_feed(&items, stdin))?;
        let replay = spec.replay.clone();
        spawn("familiar-window-reports", move || {
            read_reports(reports, replay.as_ref());
        })?;
        let stop = stop.clone();
        let live = spec.close_with_pipeline;
        let waiter = spawn("familiar-window-wait", move || wait(child, &stop, live))?;
        Ok(Window {
            feed,
            writer,
            waiter,
        })
    }

    /// End the feed (a live window closes on it) and wait for the window process to end; its
    /// exit status, when it could be had.
    fn finish(self) -> Option<ExitStatus> {
        drop(self.feed);
        let _ = self.writer.join();
        self.waiter.join().ok().flatten()
    }
}

fn spawn<T: Send + 'static>(
    name: &str,
    body: impl FnOnce() -> T + Send + 'static,
) -> Result<JoinHandle<T>, String> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(body)
        .map_err(|err| format!("cannot start a thread for the window: {err}"))
}

/// Why the window process gave no answer, with how it ended.
fn ended(child: &mut Child, when: &str) -> String {
    match child.wait() {
        Ok(status) => format!("the window process ended {when} ({status})"),
        Err(err) => format!("the window process ended {when} ({err})"),
    }
}

/// The window process's command line for `spec`.
fn window_args(spec: &WindowSpec<'_>, log_level: &str) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["--title".into(), spec.title.into()];
    if let Some(control) = &spec.replay {
        args.extend(["--replay".into(), control.speed().to_string().into()]);
    }
    if let Some(path) = &spec.screenshot {
        args.extend(["--screenshot".into(), path.into()]);
    }
    if spec.close_with_pipeline {
        args.push("--close-with-feed".into());
    }
    args.extend(["--log".into(), log_level.into()]);
    args
}

/// Feed items as NDJSON down the window's stdin, flushed whenever the channel runs dry; ends
/// (closing the window's stdin) when every sender is gone, or when the window is.
fn write_feed(items: &Receiver<WindowFeed>, stdin: ChildStdin) {
    let mut out = io::BufWriter::with_capacity(1 << 16, stdin);
    for item in items {
        let written = serde_json::to_writer(&mut out, &item)
            .map_err(io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| {
                if items.is_empty() {
                    out.flush()
                } else {
                    Ok(())
                }
            });
        if let Err(err) = written {
            // The window closed (a broken pipe): the stage carries on without it.
            tracing::info!("the window stopped reading: {err}");
            return;
        }
    }
    let _ = out.flush();
}

/// Apply the window's replay keys to the replay's control.
fn read_reports(reports: impl BufRead, replay: Option<&ReplayControl>) {
    for line in reports.lines() {
        let Ok(line) = line else { return };
        match serde_json::from_str::<WindowReport>(&line) {
            Ok(WindowReport::Replay { paused, speed }) => {
                if let Some(control) = replay {
                    control.set_paused(paused);
                    control.set_speed(speed);
                }
            }
            Ok(other) => tracing::debug!("window report {other:?}"),
            Err(err) => tracing::debug!("window said {line:?}: {err}"),
        }
    }
}

/// Wait for the window process. Closed by the user (or by its own Ctrl-C), it ends the run;
/// a crash ends a replay but not live watching, whose tailer, notifications and sounds go on.
fn wait(mut child: Child, stop: &StopFlag, live: bool) -> Option<ExitStatus> {
    let status = child.wait();
    match &status {
        Ok(status) if !status.success() && live => {
            crate::report::warning(format_args!(
                "the game window stopped ({status}); still following without it (Ctrl-C to stop)"
            ));
        }
        Ok(_) => stop.set(),
        Err(err) => {
            tracing::warn!("cannot wait for the window process: {err}");
            stop.set();
        }
    }
    status.ok()
}

/// This executable, and where its window executable belongs: beside it (`doctor` checks it).
pub fn window_beside_me() -> Result<(PathBuf, PathBuf), String> {
    let me = std::env::current_exe()
        .map_err(|err| format!("cannot tell where {WINDOW_EXE} is ({err})"))?;
    let exe = me.with_file_name(WINDOW_EXE);
    Ok((me, exe))
}

/// `familiar-window` beside this executable. Started by `cargo run`, which builds only the
/// `familiar` binary, it is built first with the same cargo and profile (once; later runs
/// find it).
fn window_executable() -> Result<PathBuf, String> {
    let (me, exe) = window_beside_me()?;
    if exe.is_file() {
        return Ok(exe);
    }
    if let Some(mut build) = cargo_build(&me, |key| std::env::var_os(key)) {
        if !crate::report::quiet() {
            eprintln!(
                "familiar: building the game window's executable (once): cargo {}",
                build
                    .get_args()
                    .map(|arg| arg.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        match build.stdout(Stdio::null()).status() {
            Ok(status) if status.success() && exe.is_file() => return Ok(exe),
            Ok(status) => tracing::warn!("building {WINDOW_EXE}: {status}"),
            Err(err) => tracing::warn!("cannot run cargo to build {WINDOW_EXE}: {err}"),
        }
    }
    Err(format!(
        "no {WINDOW_EXE} beside {} ({WINDOW_EXE_HOW})",
        me.display()
    ))
}

/// The `cargo build` that puts `familiar-window` beside `me`, when `me` was started by
/// `cargo run` from this package (cargo sets `CARGO`, `CARGO_MANIFEST_DIR` and
/// `CARGO_PKG_NAME` for the program it runs) out of a cargo target directory.
fn cargo_build(me: &Path, var: impl Fn(&str) -> Option<OsString>) -> Option<Command> {
    let cargo = var("CARGO")?;
    let manifest_dir = PathBuf::from(var("CARGO_MANIFEST_DIR")?);
    if var("CARGO_PKG_NAME")? != "familiar" {
        return None;
    }
    let profile_dir = me.parent()?;
    let target_dir = profile_dir.parent()?;
    // Cargo keeps its fingerprints in every profile directory it builds into.
    if !profile_dir.join(".fingerprint").is_dir() {
        return None;
    }
    let mut command = Command::new(cargo);
    command.current_dir(&manifest_dir).arg("build");
    match profile_dir.file_name()?.to_str()? {
        "debug" => {}
        "release" => {
            command.arg("--release");
        }
        profile => {
            command.args(["--profile", profile]);
        }
    }
    command
        .arg("--bin")
        .arg(WINDOW_EXE)
        .arg("--manifest-path")
        .arg(manifest_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir);
    if crate::report::quiet() {
        command.arg("--quiet");
    }
    Some(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args_of(command: &Command) -> Vec<String> {
        command
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn cargo_run_builds_the_window_beside_familiar_with_the_same_profile() {
        let target = tempfile::tempdir().expect("temp dir");
        for profile in ["release", "debug", "profiling"] {
            std::fs::create_dir_all(target.path().join(profile).join(".fingerprint"))
                .expect("dirs");
        }
        let env = |key: &str| match key {
            "CARGO" => Some(OsString::from("/usr/bin/cargo")),
            "CARGO_MANIFEST_DIR" => Some(OsString::from("/src/familiar")),
            "CARGO_PKG_NAME" => Some(OsString::from("familiar")),
            _ => None,
        };
        let release = cargo_build(&target.path().join("release/familiar"), env).expect("a build");
        assert_eq!(release.get_program(), "/usr/bin/cargo");
        let target_dir = target.path().display().to_string();
        assert_eq!(
            args_of(&release),
            [
                "build",
                "--release",
                "--bin",
                "familiar-window",
                "--manifest-path",
                "/src/familiar/Cargo.toml",
                "--target-dir",
                &target_dir
            ]
        );
        let debug = cargo_build(&target.path().join("debug/familiar"), env).expect("a build");
        assert_eq!(args_of(&debug)[..3], ["build", "--bin", "familiar-window"]);
        let custom = cargo_build(&target.path().join("profiling/familiar"), env).expect("a build");
        assert_eq!(args_of(&custom)[..3], ["build", "--profile", "profiling"]);
    }

    #[test]
    fn only_cargo_run_of_this_package_from_a_target_dir_builds_the_window() {
        let target = tempfile::tempdir().expect("temp dir");
        let me = target.path().join("release/familiar");
        let env = |name: &'static str| {
            move |key: &str| match key {
                "CARGO" => Some(OsString::from("cargo")),
                "CARGO_MANIFEST_DIR" => Some(OsString::from("/src/x")),
                "CARGO_PKG_NAME" => Some(OsString::from(name)),
                _ => None,
            }
        };
        // No fingerprints: an installed copy, not a cargo target directory.
        assert!(cargo_build(&me, env("familiar")).is_none());
        std::fs::create_dir_all(target.path().join("release/.fingerprint")).expect("dirs");
        assert!(cargo_build(&me, env("familiar")).is_some());
        // Another package's `cargo run` (or test) that runs familiar.
        assert!(cargo_build(&me, env("other")).is_none());
        assert!(cargo_build(&me, |_: &str| None).is_none());
    }

    #[test]
    fn the_window_is_told_its_title_replay_screenshot_and_when_to_close() {
        let spec = WindowSpec {
            title: "Familiar: demo",
            replay: Some(ReplayControl::new(2.0)),
            screenshot: Some(PathBuf::from("/tmp/shot.png")),
            close_with_pipeline: false,
        };
        let args: Vec<String> = window_args(&spec, "info")
            .into_iter()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "--title",
                "Familiar: demo",
                "--replay",
                "2",
                "--screenshot",
                "/tmp/shot.png",
                "--log",
                "info"
            ]
        );
        let live = WindowSpec {
            title: "Familiar",
            replay: None,
            screenshot: None,
            close_with_pipeline: true,
        };
        assert!(
            window_args(&live, "warn")
                .iter()
                .any(|arg| arg == "--close-with-feed")
        );
    }

    /// A replay key line from the window reaches the replay's control; a line it does not
    /// know is passed over.
    #[test]
    fn the_windows_replay_keys_reach_the_replay() {
        let lines = [
            "\"ready\"".to_owned(),
            serde_json::to_string(&WindowReport::Replay {
                paused: true,
                speed: 4.0,
            })
            .expect("serializes"),
            "{\"something\":\"new\"}".to_owned(),
        ]
        .join("\n");
        let control = ReplayControl::new(1.0);
        read_reports(lines.as_bytes(), Some(&control));
        assert!(control.paused());
        assert_eq!(control.speed(), 4.0);
    }
}
