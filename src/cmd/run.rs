//! `familiar run SCRIPT... --input FILE`: a dry run of scripts over a transcript, printing the
//! actions they produce as NDJSON (one `familiar_model::Action` per line) and nothing else on
//! stdout. Nothing is carried out: no notification, no sound, no program is run.
//!
//! A dry run is the real run: the transcript goes through the session model and the [`Stage`]
//! as in `watch` and `replay` (`familiar_pipeline::source::recorded`), so the scripts get the
//! same events with the same fields (`ev.plan`, `cwd`, `think`, the status events), their
//! timers and `once_per` counted in the transcript's own time. Also home of what `test` shares
//! with it ([`dry_run`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use familiar_model::Action;
use familiar_pipeline::source::recorded::Recorded;
use familiar_pipeline::source::{Pace, Source};
use familiar_pipeline::window::Front;
use familiar_pipeline::{Error, Stage, StageOptions, settings};

use super::InputOptions;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub dry_run: DryRunArgs,
}

/// What `run` and `test` both read: the scripts, the transcript, the reading flags.
#[derive(Debug, clap::Args)]
pub struct DryRunArgs {
    /// Scripts, loaded and called in this order.
    #[arg(value_name = "SCRIPT", required = true)]
    pub scripts: Vec<PathBuf>,
    /// Transcript to replay through the scripts (`-` reads stdin).
    #[arg(long, value_name = "FILE")]
    pub input: PathBuf,
    /// Let `run([...])` produce `run` actions (they are printed, never executed).
    #[arg(long)]
    pub allow_run: bool,
    #[command(flatten)]
    pub options: InputOptions,
}

/// How a dry run ended.
pub enum DryRun {
    /// A script did not load (its diagnostic is on stderr).
    NotLoaded,
    /// Every event went through: how many handler calls failed.
    Ran { failures: u64 },
}

/// `scripts` (only those: not the shipped ones, nor the configured) over `input`, through the
/// session model and a dry-run [`Stage`]: actions printed as NDJSON when `print`, and handed
/// to `on_actions` as they come when `collect`.
pub fn dry_run(
    args: &DryRunArgs,
    print: bool,
    on_actions: Option<&mut dyn FnMut(Vec<Action>)>,
) -> anyhow::Result<DryRun> {
    let DryRunArgs {
        scripts,
        input,
        allow_run,
        options,
    } = args;
    let mut settings = settings::settings(&options.overrides())?;
    settings.scripts = scripts.to_vec();
    settings.allow_run = *allow_run;
    let mut stage_options = StageOptions::dry_run(print);
    stage_options.collect = on_actions.is_some();
    // A pipe may be written live: its actions go out as they come.
    stage_options.flush_each = input.as_path() == Path::new("-");
    let mut stage = match Stage::with_scripts(&settings, stage_options, false) {
        Ok(stage) => stage,
        Err(Error::Script(_)) => return Ok(DryRun::NotLoaded),
        Err(err) => return Err(err.into()),
    };
    let mut normalizer = options.normalizer_config(&settings);
    // Keep each original record only when a script may read it as `ev.raw`.
    normalizer.keep_raw = stage.uses_raw();
    let model = settings::model_config(&settings, normalizer, None);
    let source = Source::Recorded {
        transcript: Recorded::open(input)?,
        pace: Pace::AsRead,
    };
    let ran = source.run(model, &mut stage, &Front::terminal())?;
    if let Some(on_actions) = on_actions {
        on_actions(stage.take_collected());
    }
    let failures = ran.failures;
    Ok(DryRun::Ran { failures })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let outcome = dry_run(&args.dry_run, true, None)?;
    Ok(match outcome {
        DryRun::Ran { failures: 0 } => ExitCode::SUCCESS,
        DryRun::Ran { .. } | DryRun::NotLoaded => ExitCode::from(1),
    })
}
