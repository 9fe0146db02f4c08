//! The source stage of Familiar: find Claude Code transcripts and follow them as they are
//! written, as complete lines, nothing lost and nothing repeated. The tailer knows files,
//! offsets, generations and lines; it does not parse records (the session model does, from
//! the [`TailMessage`]s sent here).
//!
//! - [`discovery`]: the config dir, project-dir encodings, subagent layouts, selectors
//!   (`--project`, `--all`, `--session`, `--file`), hook-named paths. Pure functions plus
//!   small bounded reads; the record fields it needs (`cwd`, `sessionId`) are parsed by
//!   [`familiar_transcript::head`].
//! - [`file`](mod@file): one followed path: descriptor, device and inode, offset, partial-line buffer
//!   ([`familiar_transcript::LineSplitter`]), generations; truncation, replacement and
//!   deletion, each noticed from the files themselves. The one line loop.
//! - [`tailer`]: the thread that watches (inotify, read by that thread itself, or its own poll loop), owns
//!   the [`file::FileTail`]s, and sends [`TailMessage`]s on a bounded channel; it takes more
//!   files at run time ([`TailerHandle::follow`]: a hook's `transcript_path`).
//! - [`message`]: the [`TailMessage`] contract.
//! - [`opencode`]: opencode's sessions, rows of its SQLite database (not lines of a file),
//!   polled by the tailer and handed on as lines of Familiar's own shape, one session one
//!   address (`<database>#<session id>`).
//! - [`status_files`]: a folder of small status files rewritten whole (Claude Code's
//!   `sessions/<pid>.json`), sent whole when they change, removed when their process ends.
//!
//! # Guarantees and their limits
//! - Per path, lines arrive in file order, each once, numbered exactly within their
//!   generation; a line is sent only once its newline is on disk.
//! - A rename or delete is acted on only after the open descriptor was read to its end
//!   (inotify and poll modes alike), so lines written just before it are not lost.
//! - A new generation (truncation, or another inode at the path) starts at line 1, after the
//!   previous generation's last line. Truncation is noticed by size and by the first bytes
//!   read, even before a whole line was read.
//! - **Unavoidable losses:** bytes that a truncation cuts away before the tailer read them
//!   are gone from disk; no tailer can have them. They are counted
//!   ([`OpenReason::Truncated`]`{ lost_bytes }`, [`TailStatsSnapshot::lost_bytes`]) and logged
//!   at `info` level. Likewise, a file renamed away or deleted before the tailer first opened
//!   it, and bytes written to a renamed file after the tailer moved on to the new one, cannot
//!   be read. A rewrite in place that leaves the first bytes read unchanged (the same prefix
//!   written again) cannot be told from an append: what follows is read as the continuation.
//! - A file renamed to another `*.jsonl` name that is followed is a new path to the tailer:
//!   it is read from its start (Claude Code does not rename transcripts).

pub mod descriptors;
pub mod discovery;
pub mod file;
pub mod message;
pub mod opencode;
mod path_map;
pub mod status_files;
pub mod tailer;

pub use discovery::{
    DiscoveryError, Matcher, Selector, TranscriptInfo, TranscriptKind, Verdict, config_dir,
    copilot_dir, gemini_dir, qwen_dir, qwen_home, transcript_path_from_hook,
};
pub use message::{Line, OpenReason, ResumePoint, TailMessage};
pub use tailer::{
    DORMANT_AFTER, MAX_AHEAD_BYTES, PRIME_BYTES, ResumeFrom, SEND_WAIT, Stopper, TailError,
    TailStatsSnapshot, TailerConfig, TailerHandle, WatchMode, spawn,
};
