//! The live source shared by `watch` and `sessions`: the tailer's messages become the session
//! model's inputs (`familiar-session`), dated by the one clock the model reads. Both commands
//! go through [`Live::take`], so `familiar sessions` shows exactly the snapshots `watch` starts
//! with.

use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::Context as _;

use familiar_model::Event;
use familiar_model::text::printable_line;
use familiar_session::{FileInfo, FileKind, Input, ModelConfig, Output, SessionModel};
use familiar_tail::{Selector, TailMessage, TranscriptInfo, TranscriptKind};

/// The session model fed by a tailer.
pub struct Live {
    pub model: SessionModel,
    out: Vec<Output>,
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
        Live {
            model: SessionModel::new(config),
            out: Vec::new(),
        }
    }

    /// Tell the model the time (the wall clock: the only clock of a live run).
    pub fn tick(&mut self) {
        self.model
            .apply(Input::Tick(SystemTime::now()), &mut self.out);
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
            TailMessage::Problem { .. } => {}
        }
        Took::Nothing
    }

    /// A hook's status signal into the model.
    pub fn hook(&mut self, signal: &Event) {
        self.tick();
        self.model.apply(Input::Hook(signal), &mut self.out);
    }

    /// The events the inputs so far caused, in order; skipped lines are logged.
    pub fn drain(&mut self) -> impl Iterator<Item = Event> + '_ {
        self.out.drain(..).filter_map(|output| match output {
            Output::Event(event) => Some(event),
            Output::Skipped { path, diagnostic } => {
                tracing::warn!(
                    "{}:{}: {}",
                    printable_line(&path.display().to_string()),
                    diagnostic.line,
                    diagnostic.kind
                );
                None
            }
        })
    }
}

/// What to follow: everything (`--all`), these projects, sessions and files, or else the
/// current directory's project, as `watch` and `sessions` both take it.
pub fn selectors(
    all: bool,
    projects: &[PathBuf],
    sessions: &[String],
    files: &[PathBuf],
) -> anyhow::Result<Vec<Selector>> {
    let mut selectors: Vec<Selector> = Vec::new();
    if all {
        selectors.push(Selector::All);
    }
    selectors.extend(projects.iter().cloned().map(Selector::Project));
    selectors.extend(sessions.iter().cloned().map(Selector::Session));
    selectors.extend(files.iter().cloned().map(Selector::File));
    if selectors.is_empty() {
        let cwd = std::env::current_dir().context("finding the current directory")?;
        selectors.push(Selector::Project(cwd));
    }
    Ok(selectors)
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
    }
}
