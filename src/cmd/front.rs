//! Which front end a pipeline command shows: the game window, or the terminal (`--headless`,
//! or no window possible: no display, no X server, no GPU driver; `familiar_game::window_available`). The window must own the main thread (winit), so with a window the pipeline
//! body runs on a worker thread and stops when the window closes.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;
use crossbeam_channel::Sender;
use std::path::PathBuf;

use familiar_game::{GameFeed, GameOptions, ScreenshotOptions};
use familiar_model::ReplayControl;

/// Frames before a `--screenshot` capture: enough for the feed to arrive and animations to
/// settle.
const SCREENSHOT_AFTER_FRAMES: u32 = 90;

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

/// What the pipeline body gets: where the game feed goes (none when headless), whether
/// actions should be printed (headless), and the stop flag.
pub struct Front {
    pub game: Option<Sender<GameFeed>>,
    pub headless: bool,
    pub stop: StopFlag,
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
    /// Where the user's XP, level and unlocks are kept between runs: live watching only (a
    /// replay or the demo must not count twice); `None` starts fresh and saves nothing.
    pub progress: Option<PathBuf>,
}

/// Run `body` with a window unless `headless` or no display is available (then say so and
/// run in the terminal).
pub fn run(
    headless: bool,
    window: WindowSpec<'_>,
    body: impl FnOnce(Front) -> anyhow::Result<ExitCode> + Send + 'static,
) -> anyhow::Result<ExitCode> {
    let stop = StopFlag::default();
    if headless {
        return body(Front {
            game: None,
            headless: true,
            stop,
        });
    }
    // Probe before Bevy starts: a missing X server or GPU driver would otherwise panic
    // inside winit or the renderer, losing the run.
    if let Err(err) = familiar_game::window_available() {
        super::style::warning(format_args!(
            "{err}; staying in the terminal (actions as NDJSON on stdout)"
        ));
        return body(Front {
            game: None,
            headless: true,
            stop,
        });
    }
    // Bounded: a stalled window slows the pipeline down (the tailer then pauses reading and
    // loses nothing) instead of growing memory without end.
    let (feed_tx, feed_rx) = crossbeam_channel::bounded(4096);
    let worker_stop = stop.clone();
    let close_with_pipeline = window.close_with_pipeline;
    let quit = feed_tx.clone();
    let worker = std::thread::Builder::new()
        .name("familiar-pipeline".to_owned())
        .spawn(move || {
            let outcome = body(Front {
                game: Some(feed_tx),
                headless: false,
                stop: worker_stop.clone(),
            });
            if close_with_pipeline && !worker_stop.is_set() {
                // The pipeline ended on its own (Ctrl-C): close the window too. A full feed
                // only delays this; a window already gone makes it moot.
                let _ = quit.send(GameFeed::Quit);
            }
            outcome
        })
        .context("starting the pipeline thread")?;
    let options = GameOptions {
        replay: window.replay,
        title: window.title.to_owned(),
        // A screenshot run draws every frame: under Xvfb no window manager focuses the window,
        // and a reactive window would draw too few frames to reach the capture.
        continuous: window.screenshot.is_some(),
        screenshot: window.screenshot.map(|path| ScreenshotOptions {
            path,
            after_frames: SCREENSHOT_AFTER_FRAMES,
        }),
        progress: window.progress,
        ..GameOptions::default()
    };
    let shown = familiar_game::run_game(feed_rx, options);
    stop.set();
    let outcome = worker
        .join()
        .map_err(|_| anyhow::anyhow!("the pipeline thread panicked"))?;
    shown.context("the game window")?;
    outcome
}
