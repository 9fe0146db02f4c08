//! The [`Stage`]: where the session model's events meet the scripts (hot-reloaded, their
//! timers ticked by the source's clock), and their actions go out to the sinks, stdout and
//! the window. Session state is not kept here: the session model (`familiar-session`) owns it.

use std::io::{self, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use crossbeam_channel::{Receiver, Sender};
use familiar_config::Settings;
use familiar_model::progression::ProgressUpdate;
use familiar_model::time::parse_timestamp;
use familiar_model::{Action, Event, WindowFeed};
use familiar_script::{HostConfig, ScriptDiagnostic, ScriptHost, ScriptWatcher};
use familiar_sink::{Fanout, Sink as _};

use crate::progress::Progression;
use crate::{Error, report};

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
    /// Where scripts' `store` maps are kept between runs (live only: a replay must not count
    /// twice); `None` keeps them in memory.
    pub store_dir: Option<std::path::PathBuf>,
    /// The run's sound sink ([`crate::settings::audio`]), `None` when muted.
    pub audio: Option<familiar_audio::SharedAudio>,
    /// Carry the actions out (notifications, sounds, programs). A dry run (`familiar run`
    /// and `test`) only prints or collects them: the same events, the same scripts, nothing
    /// done.
    pub carry_out: bool,
    /// Keep every action for [`Stage::take_collected`] (`familiar test` compares them).
    pub collect: bool,
    /// Flush stdout after every event that printed (a live source, a pipe); otherwise at
    /// the end and whenever its buffer fills (a file read to its end).
    pub flush_each: bool,
    /// Where the user's progression is kept between runs (`familiar watch`:
    /// [`crate::progress::default_path`]); `None` starts from level 1 and keeps nothing.
    pub progress: Option<PathBuf>,
}

impl StageOptions {
    /// A dry run's stage: the events' own time for `once_per` and timers, nothing carried
    /// out, no window, no hot reload, `store` kept in memory; actions printed when
    /// `print_actions`.
    pub fn dry_run(print_actions: bool) -> StageOptions {
        StageOptions {
            print_events: false,
            print_actions,
            game: None,
            clock: Arc::new(familiar_script::EventClock::new()),
            hot_reload: false,
            store_dir: None,
            audio: None,
            carry_out: false,
            collect: false,
            flush_each: false,
            progress: None,
        }
    }
}

/// Everything after the session model: events → scripts → actions → sinks (stdout,
/// notifications, sounds, `run`) and the game window. Every command that runs scripts goes
/// through it: `watch`, `replay`, `demo`, and the dry runs `run` and `test`.
pub struct Stage {
    host: ScriptHost,
    sinks: Fanout,
    game: Option<Sender<WindowFeed>>,
    print_events: bool,
    print_actions: bool,
    /// Why stdout could not be written (other than a closed pipe, which ends quietly).
    output_error: Option<io::Error>,
    out: io::BufWriter<io::Stdout>,
    watcher: Option<ScriptWatcher>,
    actions: Vec<Action>,
    diagnostics: Vec<ScriptDiagnostic>,
    collected: Option<Vec<Action>>,
    flush_each: bool,
    /// The game's sounds, chosen here from each event and its actions and played through the
    /// run's sound sink (none when muted, or in a dry run).
    cues: Option<(familiar_audio::SharedAudio, familiar_audio::GameCues)>,
    /// The user's XP, level and unlocks: this is their one owner.
    progression: Progression,
}

impl Stage {
    /// Load the shipped scripts, then the configured ones, in order. A script that does not
    /// compile stops the start with its located error: better told now than silently ignored.
    pub fn new(settings: &Settings, options: StageOptions) -> Result<Stage, Error> {
        Stage::with_scripts(settings, options, true)
    }

    /// A stage that runs only the scripts the settings name, in order (`familiar run` and
    /// `test`: the scripts under test, without the shipped ones). A script that does not load
    /// is printed with its located diagnostic, then the error names it.
    pub fn with_scripts(
        settings: &Settings,
        options: StageOptions,
        shipped: bool,
    ) -> Result<Stage, Error> {
        let mut host = ScriptHost::new(HostConfig {
            allow_run: settings.allow_run,
            clock: options.clock,
            store_dir: options.store_dir,
            latest_time: crate::settings::latest_time()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|since| since.as_secs_f64()),
            ..HostConfig::default()
        });
        let shipped_scripts: &[(&str, &str)] = if shipped {
            &familiar_script::SHIPPED
        } else {
            &[]
        };
        for (name, source) in shipped_scripts {
            let report =
                host.load_source(name, source, None)
                    .map_err(|err| Error::ShippedScript {
                        name: (*name).to_owned(),
                        cause: err.to_string(),
                    })?;
            print_warnings(&report.warnings);
        }
        let mut failed = Vec::new();
        for path in &settings.scripts {
            match host.load_file(path) {
                Ok(report) => {
                    print_warnings(&report.warnings);
                    tracing::info!("loaded {} ({})", path.display(), report.handlers.join(", "));
                }
                // Every script is tried, so one run tells of every broken one.
                Err(err) => {
                    report::script_error(&err);
                    failed.push(path.display().to_string());
                }
            }
        }
        if !failed.is_empty() {
            return Err(Error::Script(format!(
                "{} did not load (see above)",
                failed.join(", ")
            )));
        }
        let watcher = match (options.hot_reload, settings.scripts.is_empty()) {
            (true, false) => ScriptWatcher::new(&settings.scripts)
                .map_err(|err| tracing::warn!("scripts will not hot-reload: {err}"))
                .ok(),
            _ => None,
        };
        let progression = options
            .progress
            .as_deref()
            .map_or_else(Progression::fresh, Progression::kept_at);
        host.set_user_xp(progression.profile().xp);
        let mut stage = Stage {
            host,
            cues: options
                .audio
                .clone()
                .filter(|_| options.carry_out)
                .map(|audio| (audio, familiar_audio::GameCues::default())),
            sinks: if options.carry_out {
                crate::settings::sinks(settings, false, options.audio)
            } else {
                Fanout::new()
            },
            game: options.game,
            print_events: options.print_events,
            print_actions: options.print_actions,
            output_error: None,
            out: io::BufWriter::with_capacity(1 << 16, io::stdout()),
            watcher,
            actions: Vec::new(),
            diagnostics: Vec::new(),
            collected: options.collect.then(Vec::new),
            flush_each: options.flush_each,
            progression,
        };
        // The window shows the user's level from its first frame.
        let start = ProgressUpdate {
            profile: stage.progression.profile().clone(),
            ..ProgressUpdate::default()
        };
        stage.tell_window(WindowFeed::Progress(start));
        Ok(stage)
    }

    /// One event through the scripts and out to every sink. `Break` when stdout was closed
    /// (the pipeline should end) — a failing notification or game never stops it.
    pub fn on_event(&mut self, event: Arc<Event>) -> ControlFlow<()> {
        self.reload_changed();
        // The scripts' timers due by the event's own time fire before it, from every source
        // alike (a timer lands at the same place among the events, live or not).
        if self.host.has_timers()
            && let Some(now) = event.ts.as_deref().and_then(parse_timestamp)
            && self.tick(now).is_break()
        {
            return ControlFlow::Break(());
        }
        self.actions.clear();
        self.diagnostics.clear();
        // Shared with the scripts, which read it without a copy.
        self.host
            .handle_shared(&event, &mut self.actions, &mut self.diagnostics);
        print_warnings(&self.diagnostics);
        self.carry_out(Some(&event))
    }

    /// A word of the pipeline's own for the window, when there is one (where it looks for
    /// sessions, the end of a replay).
    pub fn tell_window(&mut self, item: WindowFeed) {
        if let Some(game) = &self.game
            && game.send(item).is_err()
        {
            self.game = None;
        }
    }

    /// One item of a source: an event through the scripts, or the model's clock.
    pub fn take(&mut self, item: crate::source::Item) -> ControlFlow<()> {
        match item {
            crate::source::Item::Event(event) => self.on_event(event),
            crate::source::Item::Tick(now) => self.tick(now),
        }
    }

    /// The time is now `now` (the session model's clock): fire the scripts' due timers and
    /// carry their actions out.
    pub fn tick(&mut self, now: SystemTime) -> ControlFlow<()> {
        // A gain not yet saved (it came within a second of the last save) is saved now.
        self.save_progress(false);
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
    fn carry_out(&mut self, event: Option<&Arc<Event>>) -> ControlFlow<()> {
        let change = self.progression.apply(&mut self.actions);
        let gained = change.is_some();
        if gained {
            self.host.set_user_xp(self.progression.profile().xp);
        }
        if let Some(game) = &self.game {
            // The profile is copied for the window only: a headless run never copies it.
            let progress = change.map(|change| change.update(self.progression.profile()));
            let sent = event
                .is_none_or(|event| game.send(WindowFeed::Event(Arc::clone(event))).is_ok())
                && self
                    .actions
                    .iter()
                    .all(|action| game.send(WindowFeed::Action(action.clone())).is_ok())
                && progress.is_none_or(|update| game.send(WindowFeed::Progress(update)).is_ok());
            if !sent {
                tracing::info!("the game window closed; carrying on without it");
                self.game = None;
            }
        }
        if gained {
            self.save_progress(false);
        }
        for action in &self.actions {
            self.sinks.handle(action);
        }
        // After the scripts' own sounds: a cue their event already rang for stays quiet.
        if let Some((audio, cues)) = &mut self.cues {
            for (session, cue) in cues.of(event.map(|event| &**event), &self.actions) {
                let outcome = audio.cue(&session, cue);
                tracing::debug!(session, cue, ?outcome, "game sound");
            }
        }
        if let Some(collected) = &mut self.collected {
            collected.extend(self.actions.iter().cloned());
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
        let flushed = if self.flush_each {
            written.and_then(|()| self.out.flush())
        } else {
            written
        };
        match flushed {
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
                    report::script_error(&err);
                    eprintln!(
                        "familiar: {} not reloaded; the previous version keeps running",
                        path.display()
                    );
                }
            }
        }
    }

    /// Save the user's progression when due (or now, `force`); when another Familiar's gain
    /// came with it, the scripts and the window learn the new total.
    fn save_progress(&mut self, force: bool) {
        if self.progression.save(Instant::now(), force) {
            let profile = self.progression.profile().clone();
            self.host.set_user_xp(profile.xp);
            self.tell_window(WindowFeed::Progress(ProgressUpdate {
                profile,
                ..ProgressUpdate::default()
            }));
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

    /// The scripts read `ev.raw`: the records must be kept on their events.
    pub fn uses_raw(&self) -> bool {
        self.host.uses_raw()
    }

    /// The actions collected since the last call (with [`StageOptions::collect`]).
    pub fn take_collected(&mut self) -> Vec<Action> {
        self.collected
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Wait for queued notifications and running programs; report failures. Returns how
    /// many handler calls failed.
    pub fn finish(&mut self) -> u64 {
        self.save_progress(true);
        if let Err(err) = self.out.flush()
            && err.kind() != io::ErrorKind::BrokenPipe
            && self.output_error.is_none()
        {
            self.output_error = Some(err);
        }
        self.sinks.flush();
        for report in self.sinks.report() {
            if report.failures > 0 {
                tracing::info!(sink = %report.name, failures = report.failures, "sink failures");
            }
        }
        let counts = self.host.error_counts();
        for count in &counts {
            eprintln!(
                "familiar: {}: {} failed {} time(s)",
                count.script, count.handler, count.count
            );
        }
        counts.iter().map(|count| count.count).sum()
    }
}

fn write_line(out: &mut impl Write, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")
}

fn print_warnings(diagnostics: &[ScriptDiagnostic]) {
    for diagnostic in diagnostics {
        report::diagnostic(diagnostic);
    }
}
