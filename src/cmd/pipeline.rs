//! The flags every command that runs the pipeline shares (`watch`, `replay`, `demo`), read
//! into the config file's overrides; the pipeline itself is `familiar-pipeline`.

use std::path::PathBuf;

use familiar_config::Overrides;

use super::InputOptions;

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
    /// Play no sounds, whatever the config or --sound says.
    #[arg(long)]
    pub mute: bool,
    /// Play sounds in headless mode too (with the window they play unless muted).
    #[arg(long)]
    pub sound: bool,
    /// Also print every normalized event as NDJSON on stdout (the schema of `familiar events`).
    #[arg(long)]
    pub events: bool,
    /// Save a PNG of the window after this many frames, then quit (tests and docs).
    #[arg(long, value_name = "PNG", hide = true)]
    pub screenshot: Option<PathBuf>,
}

impl PipelineArgs {
    /// The flags as overrides of the config file (only what was given), with the reading
    /// flags of `input`.
    pub fn overrides(&self, input: &InputOptions) -> Overrides {
        Overrides {
            scripts: self.scripts.clone(),
            context_limit: input.context_limit,
            allow_run: self.allow_run.then_some(true),
            poll: None,
            notifications: self.no_notify.then_some(false),
            idle_timeout: None,
            // Headless plays sounds only when asked.
            sound: if self.mute {
                Some(false)
            } else if self.sound {
                Some(true)
            } else {
                self.headless.then_some(false)
            },
            ..Overrides::default()
        }
    }
}
