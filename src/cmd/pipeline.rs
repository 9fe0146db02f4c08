//! What every command that runs the pipeline shares (`watch`, `replay`, `demo`): the
//! `--script`/`--headless`/`--allow-run`/`--no-notify` flags, the config file merged with those
//! flags (`familiar-config`; `sessions` reads it here too), the sinks built from the merged
//! settings (`familiar-sink`), and the [`Stage`] where the session model's events meet the
//! scripts (hot-reloaded, their timers ticked by the caller's clock), the sinks, stdout and the
//! window. Session state is not kept here: the session model (`familiar-session`) owns it.

use std::io::{self, IsTerminal as _, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use familiar_model::time::parse_timestamp;

use anyhow::Context as _;
use crossbeam_channel::{Receiver, Sender};
use familiar_config::{Loaded, Overrides, Settings};

use super::InputOptions;
use familiar_model::{Action, Event, WindowFeed};
use familiar_script::{HostConfig, ScriptDiagnostic, ScriptHost, ScriptWatcher};
use familiar_sink::{
    BellSink, ChildOutput, Fanout, NdjsonSink, NotifyOptions, NotifySink, RunPolicy, RunSink,
    Sink as _,
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
        }
    }
}

/// Load the config file (`FAMILIAR_CONFIG` or `~/.config/familiar/config.toml`); an invalid
/// file is an error naming its line, never a silent default.
pub fn load_config() -> anyhow::Result<Loaded> {
    familiar_config::load().context("cannot load the config")
}

/// The one merge every command reads its settings from: the config file, then the flags it
/// was given (`overrides`: only what was given), over the defaults (`Config::merge`).
pub fn settings(overrides: &Overrides) -> anyhow::Result<Settings> {
    Ok(load_config()?.config.merge(overrides))
}

/// The sound sink for these settings (`None` when muted): one for the run, shared by the
/// scripts' `sound(...)` actions (through [`sinks`]) and the window's animation cues
/// (`front::WindowSpec::sound`), so both play through one connection, volume, quiet hours
/// and repeat gap, and a cue stays quiet after a script's sound (`familiar_audio::window_cues`).
pub fn audio(settings: &Settings) -> Option<familiar_audio::SharedAudio> {
    settings.sound.then(|| {
        familiar_audio::SharedAudio::new(familiar_audio::AudioOptions {
            volume: settings.sound_volume,
            quiet_hours: settings.quiet_hours,
            repeat_gap: settings.sound_repeat_gap,
            script_dirs: familiar_audio::ScriptDirs::from_paths(
                settings.scripts.iter().map(PathBuf::as_path),
            ),
            socket: None,
        })
    })
}

/// The sinks outside the game for these settings: desktop notifications (unless off, with the
/// bell as fallback when configured), sounds (`audio`, from [`audio`]: none when muted),
/// `run` actions (refused unless allowed), and, when `ndjson_stdout`, every action as an
/// NDJSON line on stdout.
pub fn sinks(
    settings: &Settings,
    ndjson_stdout: bool,
    audio: Option<familiar_audio::SharedAudio>,
) -> Fanout {
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
    if let Some(audio) = audio {
        fanout.push(audio);
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

/// What a [`Stage`] does with each event besides running the scripts.
pub struct StageOptions {
    /// Print each event as NDJSON on stdout (`--events`).
    pub print_events: bool,
    /// Print each action as NDJSON on stdout (headless).
    pub print_actions: bool,
    /// The game window's feed, when there is a window.
    pub game: Option<Sender<WindowFeed>>,
    /// Time for `once_per`: the wall clock live, the events' own time in replays.
    pub clock: Arc<dyn familiar_script::Clock>,
    /// Recompile script files when they change on disk.
    pub hot_reload: bool,
    /// Fire script timers at each event's own time (a replay). Live, the caller ticks the
    /// stage with the session model's clock instead ([`Stage::tick`]).
    pub timers_from_events: bool,
    /// Where scripts' `store` maps are kept between runs (live only: a replay must not count
    /// twice); `None` keeps them in memory.
    pub store_dir: Option<std::path::PathBuf>,
    /// The run's sound sink ([`audio`]), `None` when muted.
    pub audio: Option<familiar_audio::SharedAudio>,
}

/// Everything after the source: events → scripts → actions → sinks (stdout, notifications,
/// `run`) and the game window. Shared by `watch`, `replay` and `demo`.
pub struct Stage {
    host: ScriptHost,
    sinks: Fanout,
    game: Option<Sender<WindowFeed>>,
    print_events: bool,
    print_actions: bool,
    timers_from_events: bool,
    /// Why stdout could not be written (other than a closed pipe, which ends quietly).
    output_error: Option<io::Error>,
    out: io::BufWriter<io::Stdout>,
    watcher: Option<ScriptWatcher>,
    actions: Vec<Action>,
    diagnostics: Vec<ScriptDiagnostic>,
}

impl Stage {
    /// Load the shipped scripts, then the configured ones, in order. A script that does not
    /// compile stops the start with its located error: better told now than silently ignored.
    pub fn new(settings: &Settings, options: StageOptions) -> anyhow::Result<Stage> {
        let mut host = ScriptHost::new(HostConfig {
            allow_run: settings.allow_run,
            clock: options.clock,
            store_dir: options.store_dir,
            ..HostConfig::default()
        });
        for (name, source) in familiar_script::SHIPPED {
            let report = host
                .load_source(name, source, None)
                .map_err(|err| anyhow::anyhow!("shipped script {name}: {err}"))?;
            print_warnings(&report.warnings);
        }
        for path in &settings.scripts {
            let report = host
                .load_file(path)
                .map_err(|err| anyhow::anyhow!("{err}"))?;
            print_warnings(&report.warnings);
            tracing::info!("loaded {} ({})", path.display(), report.handlers.join(", "));
        }
        let watcher = match (options.hot_reload, settings.scripts.is_empty()) {
            (true, false) => ScriptWatcher::new(&settings.scripts)
                .map_err(|err| tracing::warn!("scripts will not hot-reload: {err}"))
                .ok(),
            _ => None,
        };
        Ok(Stage {
            host,
            sinks: sinks(settings, false, options.audio),
            game: options.game,
            print_events: options.print_events,
            print_actions: options.print_actions,
            timers_from_events: options.timers_from_events,
            output_error: None,
            out: io::BufWriter::with_capacity(1 << 16, io::stdout()),
            watcher,
            actions: Vec::new(),
            diagnostics: Vec::new(),
        })
    }

    /// One event through the scripts and out to every sink. `Break` when stdout was closed
    /// (the pipeline should end) — a failing notification or game never stops it.
    pub fn on_event(&mut self, event: &Event) -> ControlFlow<()> {
        self.reload_changed();
        if self.timers_from_events
            && self.host.has_timers()
            && let Some(now) = event.ts.as_deref().and_then(parse_timestamp)
            && self.tick(now).is_break()
        {
            return ControlFlow::Break(());
        }
        self.actions.clear();
        self.diagnostics.clear();
        self.host
            .handle(event, &mut self.actions, &mut self.diagnostics);
        print_warnings(&self.diagnostics);
        self.carry_out(Some(event))
    }

    /// The time is now `now` (the session model's clock): fire the scripts' due timers and
    /// carry their actions out.
    pub fn tick(&mut self, now: SystemTime) -> ControlFlow<()> {
        let (actions, diagnostics) = self.host.tick(now);
        print_warnings(&diagnostics);
        if actions.is_empty() {
            return ControlFlow::Continue(());
        }
        self.actions = actions;
        self.carry_out(None)
    }

    /// `event` (when there is one) and the queued actions to the window, the sinks and stdout.
    /// `Break` when stdout was closed; a failing notification or window never stops it.
    fn carry_out(&mut self, event: Option<&Event>) -> ControlFlow<()> {
        if let Some(game) = &self.game {
            let sent = event
                .is_none_or(|event| game.send(WindowFeed::Event(event.clone())).is_ok())
                && self
                    .actions
                    .iter()
                    .all(|action| game.send(WindowFeed::Action(action.clone())).is_ok());
            if !sent {
                tracing::info!("the game window closed; carrying on without it");
                self.game = None;
            }
        }
        for action in &self.actions {
            self.sinks.handle(action);
        }
        let event = event.filter(|_| self.print_events);
        let actions_to_print = self.print_actions && !self.actions.is_empty();
        if event.is_none() && !actions_to_print {
            return ControlFlow::Continue(());
        }
        let mut written = event.map_or(Ok(()), |event| write_line(&mut self.out, event));
        if self.print_actions {
            for action in &self.actions {
                written = written.and_then(|()| write_line(&mut self.out, action));
            }
        }
        match written.and_then(|()| self.out.flush()) {
            Ok(()) => ControlFlow::Continue(()),
            Err(err) if err.kind() == io::ErrorKind::BrokenPipe => ControlFlow::Break(()),
            Err(err) => {
                // Said once, by the command's exit (see `Stage::output_error`).
                self.output_error = Some(err);
                ControlFlow::Break(())
            }
        }
    }

    /// Recompile scripts whose files changed; a broken change keeps the old version running.
    /// A save is often several writes (truncate, then write): changes are gathered until the
    /// file has been quiet for a moment, so a half-written script is never loaded.
    pub fn reload_changed(&mut self) {
        const SETTLE: std::time::Duration = std::time::Duration::from_millis(100);
        let Some(watcher) = &self.watcher else {
            return;
        };
        let changed = watcher.wait_changes(std::time::Duration::ZERO, SETTLE);
        if changed.is_empty() {
            return;
        }
        for (path, outcome) in self.host.reload_changed(&changed) {
            match outcome {
                Ok(report) => {
                    print_warnings(&report.warnings);
                    eprintln!(
                        "familiar: reloaded {} (its state starts afresh)",
                        path.display()
                    );
                }
                Err(err) => {
                    super::style::script_error(&err);
                    eprintln!(
                        "familiar: {} not reloaded; the previous version keeps running",
                        path.display()
                    );
                }
            }
        }
    }

    /// Changes of script files, for a caller that waits on several channels.
    pub fn reload_events(&self) -> Option<Receiver<PathBuf>> {
        self.watcher
            .as_ref()
            .map(|watcher| watcher.receiver().clone())
    }

    /// The error that stopped the output, when stdout could not be written (a full disk,
    /// `/dev/full`): the command then fails instead of ending as if all went well.
    pub fn output_error(&mut self) -> Option<io::Error> {
        self.output_error.take()
    }

    /// Wait for queued notifications and running programs; report failures.
    pub fn finish(&mut self) {
        let _ = self.out.flush();
        self.sinks.flush();
        for report in self.sinks.report() {
            if report.failures > 0 {
                tracing::info!(sink = %report.name, failures = report.failures, "sink failures");
            }
        }
        for count in self.host.error_counts() {
            eprintln!(
                "familiar: {}: {} failed {} time(s)",
                count.script, count.handler, count.count
            );
        }
    }
}

fn write_line(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

fn print_warnings(diagnostics: &[ScriptDiagnostic]) {
    for diagnostic in diagnostics {
        super::style::diagnostic(diagnostic);
    }
}
