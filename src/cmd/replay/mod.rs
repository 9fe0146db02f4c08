//! `familiar replay FILE`: play a transcript by its own timestamps, scaled by a speed and (by
//! default) with idle gaps shortened, through the pipeline. `familiar demo` (see `demo.rs`)
//! replays the bundled transcript the same way.
//!
//! The transcript's lines go through the session model (`familiar-session`), as live lines
//! do, so a replay shows the same events a watcher would have (without timers). Timing is in
//! `pace` (pure: recorded gaps, speed, pause, the longest wait), read at every tick so the
//! window can pause or speed up a replay while it runs. Each event goes through the shared
//! [`Stage`] (scripts → sinks and window).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use std::sync::Arc;

use std::io;

use familiar_model::{Event, ReplayControl};
use familiar_script::EventClock;
use familiar_transcript::NormalizerConfig;

mod pace;

pub use pace::{Pacer, Pacing, RealSleep};

use super::front;
use anyhow::Context as _;
use familiar_session::{
    FileInfo, Input as SessionInput, ModelConfig, Output, SessionModel, Timers,
};
use familiar_transcript::ReadLine;

use super::InputOptions;
use super::pipeline::{self, PipelineArgs, Stage, StageOptions};

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

/// Where a replay's records come from.
pub enum ReplaySource {
    File(PathBuf),
    /// A transcript built into the binary (the demo).
    Bytes(&'static [u8]),
}

/// Replay a transcript through the scripts and sinks, with the window unless `--headless`;
/// shared by `replay` and `demo`. The transcript streams (memory does not grow with its size);
/// `once_per` in scripts counts the replay's own (recorded) time.
pub fn replay_events(
    source: ReplaySource,
    input: &InputOptions,
    mut normalizer: NormalizerConfig,
    pace: &PaceArgs,
    pipeline_args: &PipelineArgs,
    title: &str,
) -> anyhow::Result<ExitCode> {
    let mut overrides = pipeline_args.overrides(input);
    if !pace.notify {
        // Nothing surprises the desktop: a replay is not happening now.
        overrides.notifications = Some(false);
    }
    let settings = pipeline::settings(&overrides)?;
    // A window from the flag or the config file, as every command reads it.
    normalizer.context_limit = settings.context_limit;
    let control = pace.control();
    let pacing = pace.pacing();
    let print_events = pipeline_args.events;
    tracing::info!(speed = control.speed(), "replay starting");
    tracing::debug!(?pacing, "replay pacing");
    let audio = pipeline::audio(&settings);
    let window = front::WindowSpec {
        title,
        sound: audio.clone(),
        replay: Some(control.clone()),
        screenshot: pipeline_args.screenshot.clone(),
        close_with_pipeline: false,
        progress: None,
    };
    let name = match &source {
        ReplaySource::File(path) => path.display().to_string(),
        ReplaySource::Bytes(_) => "the demo".to_owned(),
    };
    front::run(pipeline_args.headless, window, move |front| {
        let mut stage = Stage::new(
            &settings,
            StageOptions {
                print_events,
                print_actions: front.headless,
                game: front.game,
                clock: Arc::new(EventClock::new()),
                hot_reload: false,
                timers_from_events: true,
                store_dir: None,
                audio,
            },
        )?;
        let mut pacer = Pacer::new(pacing, &control);
        let mut played = 0u64;
        let mut on_event = |event: Event| -> io::Result<()> {
            pacer.wait_before(&event, &mut RealSleep);
            played += 1;
            if front.stop.is_set() || stage.on_event(&event).is_break() {
                // Stop reading: the window closed or stdout went away.
                return Err(io::Error::new(io::ErrorKind::Interrupted, StopReplay));
            }
            Ok(())
        };
        let read = model_events(source, &normalizer, &name, &mut on_event);
        stage.finish();
        if let Some(err) = stage.output_error() {
            return Err(err).context("cannot write to stdout");
        }
        match read {
            Err(err) if !stopped(&err) => return Err(err),
            _ => {}
        }
        if played == 0 {
            anyhow::bail!("{name} has no events to replay (is it a Claude Code transcript?)");
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// Stream a transcript's lines through the session model, which tags every event with its
/// session (a summary written before its session's first record included) and tells the
/// project once: the same events a live watcher would see, without timers.
fn model_events(
    source: ReplaySource,
    normalizer: &NormalizerConfig,
    name: &str,
    on_event: &mut dyn FnMut(Event) -> io::Result<()>,
) -> anyhow::Result<()> {
    let path = match &source {
        ReplaySource::File(path) => path.clone(),
        ReplaySource::Bytes(_) => PathBuf::from("demo.jsonl"),
    };
    let reader: Box<dyn io::Read> = match source {
        ReplaySource::File(file) => {
            Box::new(std::fs::File::open(&file).with_context(|| format!("cannot open {name}"))?)
        }
        ReplaySource::Bytes(bytes) => Box::new(bytes),
    };
    let mut model = SessionModel::new(ModelConfig {
        normalizer: normalizer.clone(),
        timers: Timers::default(),
    });
    let mut out = Vec::new();
    model.apply(
        SessionInput::Opened {
            path: &path,
            info: &FileInfo::unknown(),
        },
        &mut out,
    );
    // Skipped lines are told as every command tells them: the first few, then how many.
    let skipped = std::cell::RefCell::new(super::SkippedLines::new(name));
    let skip = |diagnostic: &familiar_transcript::Diagnostic| {
        if let Some(warning) = skipped.borrow_mut().skip(diagnostic) {
            super::style::warning(warning);
        }
    };
    let mut deliver = |out: &mut Vec<Output>| -> io::Result<()> {
        for output in out.drain(..) {
            match output {
                Output::Event(event) => on_event(event)?,
                Output::Skipped { diagnostic, .. } => skip(&diagnostic),
                Output::Unknown { what, .. } => {
                    tracing::info!(
                        "{name}: {} not known to Familiar",
                        familiar_model::text::printable_line(&what)
                    );
                }
            }
        }
        Ok(())
    };
    let cap = normalizer.max_line_bytes;
    familiar_transcript::read_lines(reader, cap, |line| {
        match line {
            ReadLine::Line { number, bytes } => model.apply(
                SessionInput::Line {
                    path: &path,
                    number,
                    bytes,
                    backlog: false,
                },
                &mut out,
            ),
            ReadLine::TooLong { number, len } => skip(&familiar_transcript::Diagnostic {
                line: number,
                kind: familiar_transcript::DiagnosticKind::TooLong {
                    len,
                    cap: cap as u64,
                },
            }),
            ReadLine::Unfinished { number, len } => skip(&familiar_transcript::Diagnostic {
                line: number,
                kind: familiar_transcript::DiagnosticKind::Unfinished { len },
            }),
        }
        deliver(&mut out)
    })
    .with_context(|| format!("reading {name}"))?;
    model.apply(SessionInput::Removed { path: &path }, &mut out);
    deliver(&mut out).with_context(|| format!("reading {name}"))?;
    if let Some(summary) = skipped.borrow().summary() {
        super::style::warning(summary);
    }
    Ok(())
}

/// Marks the error that ends a replay early on purpose.
#[derive(Debug)]
struct StopReplay;

impl std::fmt::Display for StopReplay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("replay stopped")
    }
}

impl std::error::Error for StopReplay {}

fn stopped(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .and_then(|io| io.get_ref())
            .is_some_and(|inner| inner.is::<StopReplay>())
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut config = NormalizerConfig {
        max_line_bytes: args.input.max_line_bytes,
        ..NormalizerConfig::default()
    };
    // Scripts may read `ev.raw`; the window labels familiars with the records' `cwd`.
    config.keep_raw = true;
    if let Err(err) = std::fs::File::open(&args.file) {
        anyhow::bail!("cannot open {}: {err}", args.file.display());
    }
    let title = format!("Familiar: {}", args.file.display());
    replay_events(
        ReplaySource::File(args.file.clone()),
        &args.input,
        config,
        &args.pace,
        &args.pipeline,
        &title,
    )
}
