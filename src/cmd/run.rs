//! `familiar run SCRIPT... --input FILE`: a dry run of scripts over a transcript, printing the
//! actions they produce as NDJSON (one `familiar_model::Action` per line) and nothing else on
//! stdout. Nothing is carried out: no notification, no sound, no program is run.
//!
//! Also home of what `check` and `test` share with it: loading scripts into a
//! `familiar_script::ScriptHost` with their diagnostics on stderr, and running a transcript
//! through it. Time for `once_per` comes from the events' timestamps, so a dry run is
//! deterministic.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use familiar_model::Action;
use familiar_model::time::parse_timestamp;
use familiar_script::{EventClock, HostConfig, ScriptDiagnostic, ScriptHost};

use super::{InputOptions, is_broken_pipe, read_transcript};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Scripts, loaded and called in this order.
    #[arg(value_name = "SCRIPT", required = true)]
    pub scripts: Vec<PathBuf>,
    /// Transcript to replay through the scripts (`-` reads stdin).
    #[arg(long, value_name = "FILE")]
    pub input: PathBuf,
    /// Let `run([...])` produce `run` actions (they are printed, never executed here).
    #[arg(long)]
    pub allow_run: bool,
    #[command(flatten)]
    pub options: InputOptions,
}

/// Load `scripts` in order into a host using event time. Warnings and errors go to stderr;
/// `None` when any script failed to load.
pub fn load_host(scripts: &[PathBuf], allow_run: bool) -> Option<ScriptHost> {
    let mut host = ScriptHost::new(HostConfig {
        allow_run,
        clock: Arc::new(EventClock::new()),
        ..HostConfig::default()
    });
    let mut ok = true;
    for path in scripts {
        match host.load_file(path) {
            Ok(report) => print_diagnostics(&report.warnings),
            Err(err) => {
                super::style::script_error(&err);
                ok = false;
            }
        }
    }
    ok.then_some(host)
}

pub fn print_diagnostics(diagnostics: &[ScriptDiagnostic]) {
    for diagnostic in diagnostics {
        super::style::diagnostic(diagnostic);
    }
}

/// Replay `input` through `host`, handing each action to `on_action`. Runtime errors are
/// printed on stderr as they happen; returns how many handler calls failed.
pub fn replay(
    host: &mut ScriptHost,
    input: &Path,
    options: &InputOptions,
    mut on_action: impl FnMut(&Action) -> io::Result<()>,
) -> anyhow::Result<u64> {
    let mut config = options.normalizer_config();
    // Keep each original record only when a script may read it as `ev.raw`.
    config.keep_raw = host.uses_raw();
    let mut actions = Vec::new();
    let mut diagnostics = Vec::new();
    read_transcript(input, &config, |event| {
        actions.clear();
        diagnostics.clear();
        // A dry run's clock is the transcript's own: timers fire at the events' times.
        if let Some(now) = event.ts.as_deref().and_then(parse_timestamp) {
            let (fired, errors) = host.tick(now);
            actions.extend(fired);
            diagnostics.extend(errors);
        }
        host.handle(&event, &mut actions, &mut diagnostics);
        print_diagnostics(&diagnostics);
        actions.iter().try_for_each(&mut on_action)
    })?;
    let failures = host.error_counts();
    for count in &failures {
        eprintln!(
            "familiar: {}: {} failed {} time(s)",
            count.script, count.handler, count.count
        );
    }
    Ok(failures.iter().map(|c| c.count).sum())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(mut host) = load_host(&args.scripts, args.allow_run) else {
        return Ok(ExitCode::from(1));
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = replay(&mut host, &args.input, &args.options, |action| {
        serde_json::to_writer(&mut out, action)?;
        out.write_all(b"\n")
    });
    let failures = match result {
        Ok(failures) => failures,
        Err(err) if is_broken_pipe(&err) => return Ok(ExitCode::SUCCESS),
        Err(err) => return Err(err),
    };
    match out.flush() {
        Err(err) if err.kind() == io::ErrorKind::BrokenPipe => return Ok(ExitCode::SUCCESS),
        other => other?,
    }
    Ok(if failures > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
