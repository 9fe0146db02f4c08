//! What the tailer sends: [`TailMessage`]s, the contract between the tailer (files, offsets,
//! generations, complete lines) and the session model that reads them. The tailer does not
//! parse records; every line goes out as bytes, numbered, in file order.
//!
//! Per path, messages come in file order: `Opened`, then that generation's `Lines` (and
//! `TooLong` notes), then either `Removed` or the next generation's `Opened`. A path removed
//! and created again starts over with `Opened` (reason [`OpenReason::Appeared`]) and a
//! generation number one higher than the last one of that path: `(path, generation)` never
//! repeats within one tailer's life.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::discovery::TranscriptInfo;

/// One complete line of a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number within the generation, exact even when reading began part-way
    /// into the file (the newlines before were counted).
    pub number: u64,
    /// The line without its `\n` (and without a `\r` before it). Not checked for UTF-8.
    pub bytes: Vec<u8>,
}

/// Why a generation of a file is followed from here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenReason {
    /// The file existed when the tailer started.
    Existing,
    /// The file appeared while the tailer ran (created, renamed into place, or recreated
    /// after a `Removed`).
    Appeared,
    /// The file, the same inode, became shorter than what was read, or its first bytes
    /// changed (truncated and rewritten): read again from its first line. `lost_bytes`
    /// counts what could not be read: bytes of an unfinished line that was read in part and
    /// then cut away, plus bytes known to have been appended (seen in a `stat`) but cut
    /// before they could be read. It is a lower bound: bytes appended and cut between two
    /// looks at the file leave no trace.
    Truncated { lost_bytes: u64 },
    /// Another file (a different device or inode) took the path's place: the old one was
    /// read to its end first.
    Replaced,
    /// A file followed under another name (the same device, inode and first bytes) was
    /// renamed to this one: its old name was read to its end and `Removed`, and reading goes
    /// on here from the first line not sent under it, numbered as there. Nothing is read
    /// twice; an unfinished line is read whole here.
    Renamed,
    /// Reading goes on where an earlier stream of this file stopped (a point the caller gave
    /// in [`crate::TailerConfig::resume`]: `familiar feed` resuming after a dropped link),
    /// the file being still the same one (device and inode). Lines before it were sent then.
    Resumed,
}

/// Where the first line not sent yet starts: its byte offset and its number. Reading a file
/// again from here ([`crate::TailerConfig::resume`]) sends nothing twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResumePoint {
    pub offset: u64,
    pub line: u64,
}

/// What the tailer sends, in per-path file order.
#[derive(Debug, Clone, PartialEq)]
pub enum TailMessage {
    /// A transcript is followed from now on: at start-up (existing file), when it appears,
    /// or as a new generation after a truncation or replacement (`reason` says which). Sent
    /// before any `Lines` of that generation. `info` is what discovery knows from the path
    /// (session or subagent, session id, agent id, agent type from the meta file).
    Opened {
        path: Arc<Path>,
        info: TranscriptInfo,
        generation: u32,
        reason: OpenReason,
        /// The file's device and inode.
        identity: (u64, u64),
    },
    /// Complete lines of one generation, in order, numbered from 1 within the generation.
    /// No line is sent twice, none is skipped (except an over-long line: see `TooLong`).
    /// `backlog` is true for lines that were already on disk when following began at
    /// start-up (the model reads them silently to learn each session's state); lines that
    /// complete after that, and every line with `from_start`, have it false.
    Lines {
        path: Arc<Path>,
        generation: u32,
        lines: Vec<Line>,
        backlog: bool,
        /// Where reading stands after these lines, when it is known here (the end of a read;
        /// a batch cut off in the middle of one has `None`): a later reader can go on from
        /// it ([`crate::TailerConfig::resume`]).
        resume: Option<ResumePoint>,
    },
    /// A line longer than the configured cap was skipped without being buffered; its number
    /// is missing from `Lines`. In order with the `Lines` around it.
    TooLong {
        path: Arc<Path>,
        generation: u32,
        number: u64,
        len: u64,
        backlog: bool,
    },
    /// A subagent's meta file (`agent-<id>.meta.json`) appeared or changed after the
    /// transcript was opened: its `agentType` now. `path` is the transcript's path.
    Meta {
        path: Arc<Path>,
        agent_type: Option<String>,
    },
    /// The file was deleted or renamed away, after its open descriptor was read to its end.
    /// Nothing more comes for this generation.
    Removed { path: Arc<Path>, generation: u32 },
    /// Every file that existed at start has delivered its backlog (sent once for those),
    /// or later: every file named at run time ([`crate::TailerHandle::follow`]) that existed
    /// then has delivered its own.
    CaughtUp,
    /// A path that cannot be followed (permission denied, not a regular file, a dangling
    /// symlink, a directory that cannot be watched or listed). Reported once, then skipped;
    /// retried when it changes.
    Problem { path: PathBuf, error: String },
    /// A transcript existing at start was set aside unread as dormant
    /// ([`crate::TailerConfig::dormant_after`]): its device and inode, and its size. It comes
    /// as `Opened` once written again. A later stream can keep it dormant by listing it in
    /// [`crate::TailerConfig::resume`] at `line` 0 and `offset` this size (`familiar feed`
    /// after a dropped link: otherwise a file written meanwhile would be read as all new).
    Dormant {
        path: Arc<Path>,
        identity: (u64, u64),
        size: u64,
        /// Its path alone selects it (counted in [`crate::TailStatsSnapshot::dormant`]); else
        /// its records would say (a Codex rollout's `cwd`).
        selected: bool,
    },
}

impl TailMessage {
    /// The transcript path the message is about, if any.
    pub fn path(&self) -> Option<&Path> {
        match self {
            TailMessage::Opened { path, .. }
            | TailMessage::Lines { path, .. }
            | TailMessage::TooLong { path, .. }
            | TailMessage::Meta { path, .. }
            | TailMessage::Removed { path, .. }
            | TailMessage::Dormant { path, .. } => Some(path),
            TailMessage::Problem { path, .. } => Some(path),
            TailMessage::CaughtUp => None,
        }
    }
}
