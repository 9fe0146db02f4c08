//! What every command that runs the pipeline shares (`replay`, `demo`, and `watch`/`run` once
//! they take them): the `--script`/`--headless`/`--allow-run`/`--no-notify` flags, the config
//! file merged with those flags (`familiar-config`), and the sinks built from the merged
//! settings (`familiar-sink`). The script engine and the game plug in between the events and
//! these sinks (see `replay::drive`).

use std::io::IsTerminal as _;
use std::path::PathBuf;

use anyhow::Context as _;
use familiar_config::{Loaded, Overrides, Settings};
use familiar_sink::{
    BellSink, ChildOutput, Fanout, NdjsonSink, NotifyOptions, NotifySink, RunPolicy, RunSink,
};

/// Flags of every command that runs scripts and sinks.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PipelineArgs {
    /// Load this script after the configured ones (repeatable).
    #[arg(long = "script", value_name = "FILE")]
    pub scripts: Vec<PathBuf>,
    /// No window: actions as NDJSON on stdout (desktop notifications are still sent).
    #[arg(long)]
    pub headless: bool,
    /// Let scripts run programs with `run([argv...])` (never through a shell).
    #[arg(long)]
    pub allow_run: bool,
    /// Send no desktop notifications.
    #[arg(long)]
    pub no_notify: bool,
}

impl PipelineArgs {
    /// The flags as overrides of the config file (only what was given).
    pub fn overrides(&self, context_limit: Option<u64>) -> Overrides {
        Overrides {
            scripts: self.scripts.clone(),
            context_limit,
            allow_run: self.allow_run.then_some(true),
            poll: None,
            notifications: self.no_notify.then_some(false),
            idle_timeout: None,
        }
    }
}

/// Load the config file (`FAMILIAR_CONFIG` or `~/.config/familiar/config.toml`); an invalid
/// file is an error naming its line, never a silent default.
pub fn load_config() -> anyhow::Result<Loaded> {
    familiar_config::load().context("cannot load the config")
}

/// Config file merged with the command's flags.
pub fn settings(args: &PipelineArgs, context_limit: Option<u64>) -> anyhow::Result<Settings> {
    Ok(load_config()?.config.merge(&args.overrides(context_limit)))
}

/// The sinks outside the game for these settings: desktop notifications (unless off, with the
/// bell as fallback when configured), `run` actions (refused unless allowed), and, when
/// `ndjson_stdout`, every action as an NDJSON line on stdout.
pub fn sinks(settings: &Settings, ndjson_stdout: bool) -> Fanout {
    let mut fanout = Fanout::new();
    if settings.notifications {
        let bell: Option<Box<dyn std::io::Write + Send>> = (settings.bell_fallback
            && std::io::stderr().is_terminal())
        .then(|| Box::new(std::io::stderr()) as Box<dyn std::io::Write + Send>);
        fanout.push(NotifySink::new(NotifyOptions {
            muted_events: settings.muted_events.iter().copied().collect(),
            fallback_bell: bell,
            ..NotifyOptions::default()
        }));
    } else if settings.bell_fallback && std::io::stderr().is_terminal() {
        // Notifications off but the bell wanted: ring it for notify actions.
        fanout.push(BellSink::stderr());
    }
    fanout.push(RunSink::new(RunPolicy {
        allowed: settings.allow_run,
        timeout: settings.run_timeout,
        output: ChildOutput::Stderr,
        ..RunPolicy::default()
    }));
    if ndjson_stdout {
        fanout.push(NdjsonSink::stdout());
    }
    fanout
}
