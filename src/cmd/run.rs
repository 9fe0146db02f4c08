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

use familiar_model::time::parse_timestamp;
use familiar_model::{Action, Event};
use familiar_script::{EventClock, HostConfig, ScriptDiagnostic, ScriptHost};

use super::{InputOptions, is_broken_pipe, read_transcript, style};
use familiar_transcript::Threads;

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

/// Events the reading thread hands to the scripts at once when the input is a file; a pipe
/// (`-`), which may be written live, hands over each event as it comes.
const BATCH: usize = 128;

/// Replay `input` through `host`, handing each action to `on_action`. Runtime errors are
/// printed on stderr as they happen; returns how many handler calls failed.
///
/// The transcript is read and normalized on a thread of its own while this one runs the
/// scripts and `on_action`, in event order: the two stages overlap instead of taking turns
/// (issue 17). A bounded channel of batches keeps memory flat whatever the input's size.
pub fn replay(
    host: &mut ScriptHost,
    input: &Path,
    options: &InputOptions,
    mut on_action: impl FnMut(&Action) -> io::Result<()>,
) -> anyhow::Result<u64> {
    let mut config = options.load_normalizer_config()?;
    // Keep each original record only when a script may read it as `ev.raw`.
    config.keep_raw = host.uses_raw();
    let batch_size = if input == Path::new("-") { 1 } else { BATCH };
    let (send, receive) = crossbeam_channel::bounded::<Vec<Event>>(4);
    let (read, handled) = std::thread::scope(|scope| {
        let reader = scope.spawn(move || {
            let mut batch = Vec::with_capacity(batch_size);
            // While batches wait for the scripts, they keep a core busy: the reader then
            // parses on its own thread and leaves them the other (on an event-dense
            // transcript, 1.14x the events per second); otherwise it parses on two.
            let scripts_keep_up = || send.len() < 2;
            let threads = Threads::TwoWhile(&scripts_keep_up);
            let read = read_transcript(input, &config, threads, style::warning, |event| {
                batch.push(event);
                if batch.len() >= batch_size {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(batch_size));
                    // The scripts' side stopped (its output closed): stop reading too.
                    send.send(full)
                        .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))?;
                }
                Ok(())
            });
            // Events read before a failure are still handled, as they were read.
            if !batch.is_empty() {
                let _ = send.send(batch);
            }
            read
        });
        let handled = handle_all(host, &receive, &mut on_action);
        drop(receive);
        let read = reader
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (read, handled)
    });
    // The output's failure first: a reader stopped by it only reports a closed channel.
    handled?;
    read?;
    let failures = host.error_counts();
    for count in &failures {
        eprintln!(
            "familiar: {}: {} failed {} time(s)",
            count.script, count.handler, count.count
        );
    }
    Ok(failures.iter().map(|c| c.count).sum())
}

/// The scripts' side of [`replay`]: every event received, in order, through `host`.
fn handle_all(
    host: &mut ScriptHost,
    receive: &crossbeam_channel::Receiver<Vec<Event>>,
    on_action: &mut impl FnMut(&Action) -> io::Result<()>,
) -> io::Result<()> {
    let mut actions = Vec::new();
    let mut diagnostics = Vec::new();
    for batch in receive {
        for event in batch {
            actions.clear();
            diagnostics.clear();
            // A dry run's clock is the transcript's own: timers fire at the events' times.
            if host.has_timers()
                && let Some(now) = event.ts.as_deref().and_then(parse_timestamp)
            {
                let (fired, errors) = host.tick(now);
                actions.extend(fired);
                diagnostics.extend(errors);
            }
            host.handle_owned(event, &mut actions, &mut diagnostics);
            print_diagnostics(&diagnostics);
            actions.iter().try_for_each(&mut *on_action)?;
        }
    }
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(mut host) = load_host(&args.scripts, args.allow_run) else {
        return Ok(ExitCode::from(1));
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, stdout.lock());
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
