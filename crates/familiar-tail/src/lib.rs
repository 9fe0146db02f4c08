//! The source stage of Familiar: find Claude Code transcripts and follow them as they are
//! written, nothing lost and nothing repeated.
//!
//! - [`discovery`]: the config dir, project-dir encodings, subagent layouts, selectors
//!   (`--project`, `--all`, `--session`, `--file`), hook-named paths, liveness from record
//!   timestamps. Pure functions plus small bounded reads.
//! - [`file`]: one followed file: offset, partial-line buffer
//!   ([`familiar_transcript::LineSplitter`]), its own [`familiar_transcript::Normalizer`],
//!   truncation/replacement/deletion detection, the idle and quiet timers.
//! - [`tailer`]: the thread that watches (inotify via `notify`, or its own poll loop), owns
//!   the [`file::FileTail`]s, and sends [`TailMessage`]s on a bounded channel.
//! - [`clock`]: the injectable clock the timers read.
//!
//! Events for a file equal what `familiar events FILE` prints for it (the same normalizer fed
//! the same lines), except that [`file::tag`] fills a `session` or `agent` the records left
//! empty from the file's place (a subagent transcript's `agent-<id>.jsonl`).

pub mod clock;
pub mod discovery;
pub mod file;
pub mod tailer;

pub use clock::{Clock, ManualClock, SystemClock};
pub use discovery::{
    DiscoveryError, Matcher, Selector, TranscriptInfo, TranscriptKind, Verdict, config_dir,
    transcript_path_from_hook,
};
pub use file::{ResetReason, SubagentLink, Timers, subagent_link, tag};
pub use tailer::{
    Followed, SEND_WAIT, Stopper, TailError, TailMessage, TailStatsSnapshot, TailerConfig,
    TailerHandle, WatchMode, spawn,
};
