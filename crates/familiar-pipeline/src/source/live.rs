//! The live source shared by `watch` and `sessions`: the tailer's messages become the session
//! model's inputs (`familiar-session`), dated by the one clock the model reads (the wall
//! clock, or each line's recorded time: [`Clock`]). Both commands go through [`Live::take`],
//! so `familiar sessions` shows exactly the snapshots `watch` starts with.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use familiar_hook::cli_sessions::CliSession;
use familiar_model::Event;
use familiar_model::text::printable_line;
use familiar_session::{FileInfo, FileKind, Input, ModelConfig, Output, SessionModel};
use familiar_tail::status_files::{StatusFileChange, StatusFiles};
use familiar_tail::{TailMessage, TranscriptInfo, TranscriptKind};

/// The session model fed by a tailer.
pub struct Live {
    pub model: SessionModel,
    clock: super::Clock,
    out: Vec<Output>,
    /// Skipped lines told so far, per file.
    skipped: HashMap<PathBuf, crate::report::SkippedLines>,
    /// The remote host whose sessions these are (`watch --remote`): set on every event.
    host: Option<String>,
}

/// What one tailer message meant for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Took {
    Nothing,
    /// Every file that existed at start delivered its backlog.
    CaughtUp,
}

impl Live {
    pub fn new(config: ModelConfig) -> Live {
        Live::with_clock(config, super::Clock::Wall)
    }

    /// A live source whose model is told `clock`'s time: [`super::Clock::Recorded`] dates each
    /// line by its record (the property that a dry run is the live run compares them so).
    pub fn with_clock(config: ModelConfig, clock: super::Clock) -> Live {
        Live {
            clock,
            model: SessionModel::new(ModelConfig {
                recorded_clock: clock == super::Clock::Recorded,
                ..config
            }),
            out: Vec::new(),
            skipped: HashMap::new(),
            host: None,
        }
    }

    /// The live source of a remote host's sessions (`watch --remote`): its events say `host`.
    /// This machine's configured model says nothing of the sessions there.
    pub fn remote(mut config: ModelConfig, host: &str) -> Live {
        config.normalizer.configured_model = None;
        Live {
            host: Some(host.to_owned()),
            ..Live::new(config)
        }
    }

    /// Keep each event's record for the scripts (`ev.raw`) or not, from the next line on.
    pub fn set_keep_raw(&mut self, keep: bool) {
        self.model.set_keep_raw(keep);
    }

    /// Tell the model the time: the wall clock's (the only clock of a live run), or, on a
    /// recorded clock, nothing (its lines tell it).
    pub fn tick(&mut self) {
        if self.clock == super::Clock::Wall {
            self.model
                .apply(Input::Tick(SystemTime::now()), &mut self.out);
        }
    }

    /// One tailer message into the model, dated now.
    pub fn take(&mut self, message: TailMessage) -> Took {
        self.tick();
        let out = &mut self.out;
        match message {
            TailMessage::Opened {
                path, info, reason, ..
            } => {
                tracing::info!("following {} ({reason:?})", path.display());
                self.model.apply(
                    Input::Opened {
                        path: &path,
                        info: &file_info(&info),
                    },
                    out,
                );
            }
            TailMessage::Lines {
                path,
                lines,
                backlog,
                ..
            } => {
                for line in &lines {
                    self.model.apply(
                        Input::Line {
                            path: &path,
                            number: line.number,
                            bytes: &line.bytes,
                            backlog,
                        },
                        out,
                    );
                }
            }
            TailMessage::TooLong {
                path, number, len, ..
            } => {
                tracing::warn!(
                    "{}:{number}: line of {len} bytes is over the cap; skipped",
                    printable_line(&path.display().to_string())
                );
            }
            TailMessage::Meta { path, agent_type } => self.model.apply(
                Input::Meta {
                    path: &path,
                    agent_type: agent_type.as_deref(),
                },
                out,
            ),
            TailMessage::Removed { path, .. } => {
                tracing::info!("{} was deleted or moved away", path.display());
                self.model.apply(Input::Removed { path: &path }, out);
            }
            TailMessage::CaughtUp => {
                self.model.apply(Input::CaughtUp, out);
                return Took::CaughtUp;
            }
            // The tailer logs problems itself, once each.
            TailMessage::Problem { .. } | TailMessage::Dormant { .. } => {}
        }
        Took::Nothing
    }

    /// A hook's status signal into the model.
    pub fn hook(&mut self, signal: &Event) {
        self.tick();
        self.model.apply(Input::Hook(signal), &mut self.out);
    }

    /// A change in the CLI's sessions folder into the model (see [`CliStates`]).
    pub fn cli_state(&mut self, states: &mut CliStates, change: StatusFileChange) {
        for signal in states.take(change) {
            self.tick();
            self.model.apply(Input::CliState(&signal), &mut self.out);
        }
    }

    /// The CLI's sessions folder under `config` as it is now, into the model: for a command
    /// that looks once (`familiar sessions`), after the backlog was read.
    pub fn cli_states_now(&mut self, config: &Path) {
        self.tick();
        let dir = config.join(familiar_hook::cli_sessions::SESSIONS_DIR);
        for (_, bytes) in familiar_tail::status_files::read_now(&dir) {
            if let Some(signal) = CliSession::parse(&bytes).and_then(|state| state.status_event()) {
                self.model.apply(Input::CliState(&signal), &mut self.out);
            }
        }
    }

    /// Every file of the start delivered its backlog: the CLI's states read meanwhile go in.
    pub fn caught_up(&mut self, states: &mut CliStates) {
        for signal in states.release() {
            self.tick();
            self.model.apply(Input::CliState(&signal), &mut self.out);
        }
    }

    /// The events the inputs so far caused, in order; skipped lines are logged.
    pub fn drain(&mut self) -> impl Iterator<Item = Event> + '_ {
        let Live {
            out, skipped, host, ..
        } = self;
        out.drain(..).filter_map(move |output| match output {
            Output::Event(mut event) => {
                event.host.clone_from(host);
                Some(event)
            }
            Output::Skipped { path, diagnostic } => {
                // As every command tells them (`familiar: FILE:LINE: reason`), the first few
                // of each file: a file of garbage does not flood the terminal.
                let name = match host {
                    Some(host) => format!("{host}:{}", path.display()),
                    None => path.display().to_string(),
                };
                let skipped = skipped
                    .entry(path.clone())
                    .or_insert_with(|| crate::report::SkippedLines::new(&name));
                if let Some(warning) = skipped.skip_live(&diagnostic) {
                    crate::report::warning(warning);
                }
                None
            }
            Output::Unknown {
                path,
                what,
                version,
            } => {
                // Said once per file (`-v`); `familiar doctor` and `stats --json` list them.
                tracing::info!(
                    "{}: {} not known to Familiar (written by {}); counted, not read",
                    printable_line(&path.display().to_string()),
                    printable_line(&what),
                    version
                        .as_deref()
                        .map_or("an unknown version".to_owned(), |v| {
                            format!("CLI {}", printable_line(v))
                        })
                );
                None
            }
        })
    }
}

/// Claude Code's own word on its running sessions (`$CLAUDE_CONFIG_DIR/sessions/<pid>.json`,
/// `familiar_hook::cli_sessions`), the status source that needs no hooks: each state becomes
/// a signal for the session model; a removed file, or one whose process is gone, says its
/// session ended. States read before the start's backlog was delivered wait for it (the model
/// takes a signal only for a session it follows), the latest per session.
pub struct CliStates {
    /// Which session each file is about, for when it is removed.
    sessions: HashMap<PathBuf, String>,
    /// Before catching up: the latest state of each session.
    waiting: Option<BTreeMap<String, Event>>,
    /// The watcher of the folder, while it runs.
    files: Option<StatusFiles>,
}

impl CliStates {
    /// Follow the sessions folder of the Claude Code config dir `config` (none: nothing).
    pub fn follow(config: Option<&Path>) -> CliStates {
        let files = config.and_then(|config| {
            let dir = config.join(familiar_hook::cli_sessions::SESSIONS_DIR);
            StatusFiles::follow(dir)
                .inspect_err(|err| {
                    tracing::info!("not following Claude Code's sessions folder: {err}");
                })
                .ok()
        });
        CliStates {
            sessions: HashMap::new(),
            waiting: Some(BTreeMap::new()),
            files,
        }
    }

    /// The changes to select on (never ready when the folder is not followed).
    pub fn receiver(&self) -> crossbeam_channel::Receiver<StatusFileChange> {
        self.files
            .as_ref()
            .map_or_else(crossbeam_channel::never, |files| files.receiver().clone())
    }

    fn take(&mut self, change: StatusFileChange) -> Vec<Event> {
        let signal = match change {
            StatusFileChange::Written { path, bytes } => {
                let Some(state) = CliSession::parse(&bytes) else {
                    return Vec::new();
                };
                if let Some(session) = &state.session_id {
                    self.sessions.insert(path, session.clone());
                }
                state.status_event()
            }
            StatusFileChange::Removed { path } => self
                .sessions
                .remove(&path)
                .map(|session| familiar_hook::cli_sessions::ended_event(&session)),
        };
        let Some(signal) = signal else {
            return Vec::new();
        };
        match (&mut self.waiting, signal.session.clone()) {
            (Some(waiting), Some(session)) => {
                waiting.insert(session, signal);
                Vec::new()
            }
            _ => vec![signal],
        }
    }

    fn release(&mut self) -> Vec<Event> {
        self.waiting
            .take()
            .map(|waiting| waiting.into_values().collect())
            .unwrap_or_default()
    }
}

/// What discovery learnt from a transcript's place, in the model's terms.
pub fn file_info(info: &TranscriptInfo) -> FileInfo {
    FileInfo {
        kind: match info.kind {
            TranscriptKind::Session => FileKind::Session,
            TranscriptKind::Subagent => FileKind::Subagent,
        },
        session_id: info.session_id.clone(),
        agent_id: info.agent_id.clone(),
        agent_type: info.agent_type.clone(),
        cwd: info.cwd.clone(),
    }
}
