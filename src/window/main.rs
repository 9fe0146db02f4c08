//! `familiar-window`: the game window (`familiar-game`, Bevy) as its own executable, started by
//! `familiar` (`familiar_pipeline::window`) beside itself. Keeping Bevy out of the `familiar` binary
//! keeps every headless command small and quick to start (issue 17), and a crash in a GPU
//! driver ends this process only, never the tailer.
//!
//! The protocol is `familiar_model::window`: [`WindowFeed`] lines on stdin (their end ends the
//! feed), [`WindowReport`] lines on stdout — first `ready` or `unavailable` (the probe, before
//! Bevy starts), then the replay's pause and speed as the window's keys change them (the
//! game's sounds are chosen by `familiar`'s pipeline, not here). Exit
//! status: 0 when the window closed (or could not open), 1 when the game failed, 2 on bad
//! arguments, 101 on a panic (in any thread). Not meant to be run by hand.
//!
//! `FAMILIAR_FRAME_TRACE=<path>` in the environment (passed on by `familiar` with the rest of
//! it) writes the frame trace there: when each frame showing new feed input was drawn, and
//! which input (`familiar_game::frame_trace`; `bench/frame_latency.py`).

use std::io::{self, BufRead as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Sender;
use familiar_game::{GameFeed, GameOptions, ScreenshotOptions};
use familiar_model::{ReplayControl, WindowFeed, WindowReport};

/// Frames before a `--screenshot` capture: enough for the feed to arrive and animations to
/// settle.
const SCREENSHOT_AFTER_FRAMES: u32 = 90;

/// Where the frame trace goes, when set (benchmarks).
const FRAME_TRACE_VAR: &str = "FAMILIAR_FRAME_TRACE";

/// How often the replay's pause and speed are looked at, to tell `familiar` of key presses.
const REPLAY_POLL: Duration = Duration::from_millis(50);

const USAGE: &str = "usage: familiar-window [--title TEXT] [--replay SPEED] [--screenshot PNG] \
                     [--close-with-feed] [--log LEVEL] (started by `familiar`, fed on stdin)";

/// The command line `familiar` gives.
#[derive(Debug, Default, PartialEq)]
struct Options {
    title: Option<String>,
    /// A replay at this speed: its pause and speed are driven by the window's keys.
    replay: Option<f64>,
    screenshot: Option<PathBuf>,
    /// Close the window when the feed ends (live watching); otherwise it stays on the last
    /// scene (a finished replay) until closed.
    close_with_feed: bool,
    /// Log level when `RUST_LOG` is unset: `familiar`'s own (`-v`, `-q`).
    log: Option<String>,
}

fn parse(mut args: impl Iterator<Item = std::ffi::OsString>) -> Result<Options, String> {
    let mut options = Options::default();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match arg.to_str() {
            Some("--title") => options.title = Some(text(value("--title")?)?),
            Some("--replay") => {
                let speed = text(value("--replay")?)?;
                options.replay = Some(
                    speed
                        .parse::<f64>()
                        .ok()
                        .filter(|s| s.is_finite() && *s > 0.0)
                        .ok_or_else(|| format!("--replay {speed}: not a speed"))?,
                );
            }
            Some("--screenshot") => options.screenshot = Some(value("--screenshot")?.into()),
            Some("--close-with-feed") => options.close_with_feed = true,
            Some("--log") => options.log = Some(text(value("--log")?)?),
            _ => return Err(format!("unexpected argument {}", arg.to_string_lossy())),
        }
    }
    Ok(options)
}

fn text(value: std::ffi::OsString) -> Result<String, String> {
    value
        .into_string()
        .map_err(|v| format!("{} is not UTF-8", v.to_string_lossy()))
}

/// A panic, once told (its message and, with `RUST_BACKTRACE`, its backtrace), ends the process
/// with Rust's status for one, 101, whatever the thread. The installed window is built with
/// `panic = "abort"` (the `dist-window` profile), which would otherwise end it by SIGABRT, and
/// where core files are on that leaves one in the user's project directory, the window's working
/// directory.
fn exit_on_panic() {
    let tell = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tell(info);
        // `_exit`, not `exit`: as an abort would, it runs no exit handlers, which other threads
        // (the renderer's) may be inside of. The message went to stderr, which is unbuffered.
        // SAFETY: `_exit` ends the process at once; nothing after it runs.
        unsafe { libc::_exit(101) }
    }));
}

fn main() -> ExitCode {
    exit_on_panic();
    let options = match parse(std::env::args_os().skip(1)) {
        Ok(options) => options,
        Err(err) => {
            eprintln!("familiar-window: {err}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    init_logging(options.log.as_deref().unwrap_or("warn"));
    // Probe before Bevy starts: a missing X server or GPU driver would otherwise panic inside
    // winit or the renderer. `familiar` then says why and stays in the terminal.
    let probed = match familiar_game::window_available() {
        Ok(probed) => probed,
        Err(err) => {
            report(&WindowReport::Unavailable {
                reason: err.to_string(),
            });
            return ExitCode::SUCCESS;
        }
    };
    if !report(&WindowReport::Ready) {
        // Nobody to feed us.
        return ExitCode::SUCCESS;
    }
    // Bounded: a stalled window stops reading stdin, which fills the pipe and pauses the
    // pipeline (the tailer then pauses reading and loses nothing).
    let (feed_tx, feed_rx) = crossbeam_channel::bounded(4096);
    // Ctrl-C in the terminal reaches both processes, and SIGTERM comes when `familiar` dies
    // (its PR_SET_PDEATHSIG): close as the close button does, with success. Installed before
    // Bevy's own handler (which then steps aside), whose exit status 130 `familiar` would take
    // for a crash.
    let on_signal = feed_tx.clone();
    if let Err(err) = ctrlc::set_handler(move || {
        if on_signal.try_send(GameFeed::Quit).is_err() {
            // The game is far behind its feed (or gone): no point waiting for it.
            std::process::exit(0);
        }
    }) {
        tracing::warn!("cannot handle Ctrl-C: {err}");
    }
    let close_with_feed = options.close_with_feed;
    if let Err(err) = std::thread::Builder::new()
        .name("familiar-window-feed".to_owned())
        .spawn(move || read_feed(&feed_tx, close_with_feed))
    {
        eprintln!("familiar-window: cannot start the feed thread: {err}");
        return ExitCode::FAILURE;
    }
    let replay = options.replay.map(ReplayControl::new);
    if let Some(control) = replay.clone() {
        // Detached: it ends with the process, or when `familiar` stops listening.
        let _ = std::thread::Builder::new()
            .name("familiar-window-replay".to_owned())
            .spawn(move || report_replay(&control));
    }
    let game = GameOptions {
        replay,
        title: options.title.unwrap_or_else(|| "Familiar".to_owned()),
        // A screenshot run draws every frame: under Xvfb no window manager focuses the window,
        // and a reactive window would draw too few frames to reach the capture.
        continuous: options.screenshot.is_some(),
        screenshot: options.screenshot.map(|path| ScreenshotOptions {
            path,
            after_frames: SCREENSHOT_AFTER_FRAMES,
        }),
        frame_trace: familiar_game::frame_trace::trace_path(std::env::var_os(FRAME_TRACE_VAR)),
        largest_window: Some(probed.largest_window()),
        screen: probed.screen,
        ..GameOptions::default()
    };
    match familiar_game::run_game(feed_rx, game) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("familiar: the game window: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Feed lines from stdin into the game, in order, until stdin ends or the game is gone.
fn read_feed(feed: &Sender<GameFeed>, close_with_feed: bool) {
    for (number, line) in io::stdin().lock().lines().enumerate() {
        let Ok(line) = line else { break };
        let item = match serde_json::from_str::<WindowFeed>(&line) {
            Ok(WindowFeed::Event(event)) => GameFeed::Event(Arc::unwrap_or_clone(event)),
            Ok(WindowFeed::Action(action)) => GameFeed::Action(action),
            Ok(WindowFeed::Waiting { looked_in }) => GameFeed::Waiting(looked_in),
            Ok(WindowFeed::Ended { text }) => GameFeed::Ended(text),
            Ok(WindowFeed::Progress(update)) => GameFeed::Progress(update),
            Ok(WindowFeed::Remote { host, connected }) => GameFeed::Remote { host, connected },
            Err(err) => {
                // Only `familiar` writes here: a bad line is a bug, not a reason to stop.
                tracing::warn!("feed line {}: {err}", number + 1);
                continue;
            }
        };
        if feed.send(item).is_err() {
            return;
        }
    }
    if close_with_feed {
        // The pipeline ended (Ctrl-C while watching live): close the window too.
        let _ = feed.send(GameFeed::Quit);
    }
}

/// Tell `familiar` whenever the window's keys pause, resume or change the speed of a replay.
fn report_replay(control: &ReplayControl) {
    let mut told = (control.paused(), control.speed());
    loop {
        std::thread::sleep(REPLAY_POLL);
        let now = (control.paused(), control.speed());
        if now != told {
            told = now;
            if !report(&WindowReport::Replay {
                paused: now.0,
                speed: now.1,
            }) {
                return;
            }
        }
    }
}

/// One report line on stdout; false when `familiar` is gone.
fn report(report: &WindowReport) -> bool {
    let Ok(line) = serde_json::to_string(report) else {
        return false;
    };
    let mut out = io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
}

/// Logs on stderr (inherited from `familiar`) at `familiar`'s level, in its plain lines (no
/// clock; the module only when debugging); `RUST_LOG` still wins.
fn init_logging(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .without_time()
        .with_target(matches!(level, "debug" | "trace"))
        .with_writer(io::stderr)
        .with_ansi(anstream::AutoStream::choice(&io::stderr()) != anstream::ColorChoice::Never)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> impl Iterator<Item = std::ffi::OsString> {
        list.iter()
            .map(std::ffi::OsString::from)
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn the_command_line_familiar_gives() {
        let options = parse(args(&[
            "--title",
            "Familiar: demo",
            "--replay",
            "2",
            "--screenshot",
            "/tmp/x.png",
            "--close-with-feed",
            "--log",
            "info",
        ]))
        .expect("parses");
        assert_eq!(
            options,
            Options {
                title: Some("Familiar: demo".to_owned()),
                replay: Some(2.0),
                screenshot: Some(PathBuf::from("/tmp/x.png")),
                close_with_feed: true,
                log: Some("info".to_owned()),
            }
        );
        assert_eq!(parse(args(&[])), Ok(Options::default()));
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(parse(args(&["--replay", "fast"])).is_err());
        assert!(parse(args(&["--replay", "0"])).is_err());
        assert!(parse(args(&["--title"])).is_err());
        assert!(parse(args(&["watch"])).is_err());
    }
}
