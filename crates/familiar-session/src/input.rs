//! What the session model takes and gives.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use familiar_model::Event;
use familiar_transcript::Diagnostic;

/// Is a transcript a session's own file or a subagent's?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    Session,
    Subagent,
}

/// What a transcript's place says about it (discovery in `familiar-tail` knows the layouts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    pub kind: FileKind,
    /// From the path (`<sessionId>.jsonl`, or a subagent's `<sessionId>/subagents/`). Used
    /// only when the records never say: a record's own `sessionId` wins.
    pub session_id: Option<String>,
    /// `<id>` of `agent-<id>.jsonl`.
    pub agent_id: Option<String>,
    /// `agentType` of the subagent's `*.meta.json`.
    pub agent_type: Option<String>,
    /// Where the session runs, when its place says and its records do not (a Gemini CLI
    /// session's project folder): used only while no record names a `cwd`.
    pub cwd: Option<String>,
}

impl FileInfo {
    /// A file whose place says nothing (a pipe, a file given by hand): its records decide.
    pub fn unknown() -> FileInfo {
        FileInfo {
            kind: FileKind::Session,
            session_id: None,
            agent_id: None,
            agent_type: None,
            cwd: None,
        }
    }
}

/// One thing that happened, in the order it happened.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A transcript is followed from its first line (or part-way, with `Line::backlog`
    /// lines): at start-up, when it appears, or as a new generation after it was truncated
    /// or replaced. Any state of an earlier generation of the same path is dropped, but what
    /// was told of a Gemini CLI session (which the CLI may rewrite whole: a temporary file
    /// renamed over it, `Normalizer::continue_from`).
    Opened { path: &'a Path, info: &'a FileInfo },
    /// One complete line (without its newline), numbered within its generation. `backlog`
    /// lines were on disk before watching began: they build state silently (no events), and
    /// the session's `snapshot` event tells the result.
    Line {
        path: &'a Path,
        number: u64,
        bytes: &'a [u8],
        backlog: bool,
    },
    /// A subagent's meta file told its type.
    Meta {
        path: &'a Path,
        agent_type: Option<&'a str>,
    },
    /// The file is gone (deleted or renamed away, after its last line was read). What its
    /// normalizer held for a later record (a `success` waiting for `turn_duration`) goes out.
    Removed { path: &'a Path },
    /// Every file that existed at start has delivered its backlog: sessions not yet shown get
    /// their `snapshot` event now.
    CaughtUp,
    /// The time is now this. The model's only clock: timers fire on ticks, lines are dated
    /// by the last tick before them, and a `success` held for its `turn_duration` goes out
    /// without it once its file has been quiet for the quiet-turn time.
    Tick(SystemTime),
    /// A hook's status signal (`familiar-hook`): a `status` event with its session and
    /// status; the model fills in the rest of the session's state.
    Hook(&'a Event),
    /// The CLI's own word on a session's status, from its sessions file
    /// (`familiar_hook::cli_sessions`): taken as a hook's signal is, but only for a session
    /// the model follows (the folder holds every running session, selected or not).
    CliState(&'a Event),
}

/// What the model gives back.
// Events are nearly all the traffic and move once each: boxing would add an allocation per
// event for no gain.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Event(Event),
    /// A line that produced no events, and why.
    Skipped {
        path: PathBuf,
        diagnostic: Diagnostic,
    },
    /// The file holds something Familiar does not know (a record type, `system/subtype`,
    /// `attachment/type`, ...), met here for the first time in this file: said once, so a
    /// CLI that writes something new is noticed (`Metrics::unknown` counts every one).
    Unknown {
        path: PathBuf,
        what: String,
        /// The version of the CLI that wrote the file, when its records say.
        version: Option<String>,
    },
}
