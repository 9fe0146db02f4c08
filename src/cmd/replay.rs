//! `familiar replay FILE`: play a transcript by its own timestamps, scaled by a speed and (by
//! default) with idle gaps shortened, through the pipeline. `familiar demo` (see `demo.rs`)
//! replays the bundled transcript the same way.
//!
//! The transcript is read as `run` reads it (`familiar_pipeline::source::recorded`: through
//! the session model, its timers at the records' own times), so a replay shows the events a
//! watcher would have. Timing is `familiar_pipeline::source::pace` (recorded gaps, speed,
//! pause, the longest wait), read at every event so the window can pause or speed up a
//! replay while it runs. Each event goes through the one [`Stage`] (scripts → sinks, window).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use familiar_model::ReplayControl;
use familiar_pipeline::source::pace::Pacing;
use familiar_pipeline::source::recorded::Recorded;
use familiar_pipeline::source::{Pace, Source};
use familiar_pipeline::{Error, Stage, StageOptions, settings, window};
use familiar_script::EventClock;
use familiar_transcript::NormalizerConfig;

use super::InputOptions;
use super::pipeline::PipelineArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Transcript to replay (JSONL, stream-json or a JSON array).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    #[command(flatten)]
    pub pace: PaceArgs,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
    #[command(flatten)]
    pub input: InputOptions,
}

/// How fast a replay plays.
#[derive(Debug, Clone, clap::Args)]
pub struct PaceArgs {
    /// Play X times as fast as recorded (0.5 = half speed); pauses stay at most --max-gap.
    #[arg(long, value_name = "X", default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,
    /// Send desktop notifications too. Without it a replay (or the demo) shows its
    /// notifications in the window's log only: what it plays is not happening now.
    #[arg(long)]
    pub notify: bool,
    /// Keep the transcript's own timing, long idle pauses included.
    #[arg(long, conflicts_with_all = ["speed", "max_gap"])]
    pub realtime: bool,
    /// Longest pause between two events, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 2.0, value_parser = parse_gap)]
    pub max_gap: f64,
}

impl PaceArgs {
    pub fn pacing(&self) -> Pacing {
        Pacing {
            max_gap: (!self.realtime).then(|| Duration::from_secs_f64(self.max_gap)),
        }
    }

    pub fn control(&self) -> ReplayControl {
        ReplayControl::new(if self.realtime { 1.0 } else { self.speed })
    }
}

fn parse_speed(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(speed) if speed.is_finite() && (0.01..=1000.0).contains(&speed) => Ok(speed),
        _ => Err("a number from 0.01 to 1000 (2 = twice as fast)".to_owned()),
    }
}

fn parse_gap(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && (0.0..=86_400.0).contains(&secs) => Ok(secs),
        _ => Err("seconds from 0 to 86400".to_owned()),
    }
}

/// Replay a transcript through the scripts and sinks, with the window unless `--headless`;
/// shared by `replay` and `demo`. The transcript streams (memory does not grow with its size);
/// `once_per` and timers in scripts count the replay's own (recorded) time.
pub fn replay_events(
    source: Recorded,
    input: &InputOptions,
    normalizer: NormalizerConfig,
    pace: &PaceArgs,
    pipeline_args: &PipelineArgs,
    title: &str,
    end: &str,
) -> anyhow::Result<ExitCode> {
    let mut overrides = pipeline_args.overrides(input);
    if !pace.notify {
        // Nothing surprises the desktop: a replay is not happening now.
        overrides.notifications = Some(false);
    }
    let settings = settings::settings(&overrides)?;
    // A window from the flag or the config file, as every command reads it.
    let model = settings::model_config(&settings, normalizer, None);
    let control = pace.control();
    let name = source.name().to_owned();
    let source = Source::Recorded {
        transcript: source,
        pace: Pace::Timestamps {
            pacing: pace.pacing(),
            control: control.clone(),
        },
    };
    let print_events = pipeline_args.events;
    tracing::info!(speed = control.speed(), "replay starting");
    tracing::debug!(pacing = ?pace.pacing(), "replay pacing");
    let audio = settings::audio(&settings);
    let window = window::WindowSpec {
        title,
        replay: Some(control.clone()),
        screenshot: pipeline_args.screenshot.clone(),
        close_with_pipeline: false,
    };
    window::run(pipeline_args.headless, window, move |front| {
        let mut stage = Stage::new(
            &settings,
            StageOptions {
                print_events,
                print_actions: front.headless,
                game: front.game.clone(),
                clock: Arc::new(EventClock::new()),
                hot_reload: false,
                store_dir: None,
                audio,
                carry_out: true,
                collect: false,
                flush_each: true,
                // A replay must not count twice: it starts from level 1 and keeps nothing.
                progress: None,
            },
        )?;
        let ran = source.run(model, &mut stage, &front)?;
        if ran.read.is_some_and(|read| read.events == 0) {
            return Err(Error::NoEvents { name }.into());
        }
        if !front.stop.is_set() {
            // The window stays on the last scene: it says the replay is over.
            stage.tell_window(familiar_model::WindowFeed::Ended {
                text: end.to_owned(),
            });
        }
        Ok::<_, anyhow::Error>(ExitCode::SUCCESS)
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut config = NormalizerConfig {
        max_line_bytes: args.input.max_line_bytes,
        ..NormalizerConfig::default()
    };
    // Scripts may read `ev.raw`; the window labels familiars with the records' `cwd`.
    config.keep_raw = true;
    // Opened before any window: a missing file is said at once.
    let source = Recorded::open(&args.file)?;
    let title = format!("Familiar: {}", args.file.display());
    let end = format!(
        "The replay of {} is over. Close the window (q) when you are done.",
        familiar_model::text::printable_line(&args.file.display().to_string())
    );
    replay_events(
        source,
        &args.input,
        config,
        &args.pace,
        &args.pipeline,
        &title,
        &end,
    )
}
