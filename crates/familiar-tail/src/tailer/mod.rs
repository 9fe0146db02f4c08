//! The tailer thread: watches the directories that [`crate::discovery`] names, keeps one
//! [`FileTail`](crate::file::FileTail) per followed transcript, and sends what they read on a
//! bounded `crossbeam-channel` as [`TailMessage`]s, in per-path order.
//!
//! - this module: the public surface: [`TailerConfig`], [`spawn`], the [`TailerHandle`] and
//!   its [`Stopper`] and counters.
//! - `run`: the loop: waking on changes, batching, the outbox and the bounded channel.
//! - `watch`: the inotify watcher: recursive watches, events into changed paths.
//! - `paths`: what a changed path means: roots to watch, directories to scan, files to
//!   follow (with the [`crate::discovery::Matcher`]) and to poll.
//!
//! Change detection: with [`WatchMode::Inotify`] the thread waits on its own inotify
//! descriptor (`watch`; no watcher thread) and drains every queued event at once, so an
//! appended line is read within milliseconds and a burst of writes to one file is one read; with [`WatchMode::Poll`] the thread stats every followed file and walks the
//! watched directories on its own interval (250 ms by default), comparing sizes and inodes
//! (not mtimes, which have whole-second granularity on some file systems). Either way the file
//! itself decides what happened (see [`crate::file`]): a rename or delete is seen only after
//! the open descriptor was read to its end, in both modes. A new name (created, or renamed
//! into place) is read from its start, unless it is a file already followed under another
//! name (the same device and inode): then the old name is read to its end first, and reading
//! goes on under the new one where it stopped (`paths`: `renamed_from`).
//!
//! Directories that do not exist yet: the nearest existing ancestor is watched, and the
//! directory is picked up (and its files read from the start) once it appears; a
//! once-a-second housekeeping pass re-checks them as well. A directory the watcher refuses
//! (out of inotify watches, say) is reported as a [`TailMessage::Problem`] and the tailer falls
//! back to the poll loop (250 ms) for everything.
//!
//! # Time
//! The tailer keeps no status timers (the session model does). It reads the monotonic clock
//! only to space poll passes, housekeeping and write batches.
//!
//! # When the channel is full
//! The output channel is bounded ([`TailerConfig::channel_capacity`] messages; a `Lines`
//! message holds at most 1024 lines or about 256 KiB, one longer line alone). The tailer never
//! blocks on it for long: messages wait in a small outbox, and each turn of the loop sends
//! what fits and then waits at most [`SEND_WAIT`] for room before looking at its other work.
//! While the outbox holds `channel_capacity` messages or more, or the outbox and the channel
//! together hold [`MAX_AHEAD_BYTES`] of lines, the tailer stops reading transcripts: their
//! bytes stay on disk and the offsets stay put, so reading resumes exactly where it stopped
//! once the consumer catches up. Nothing is dropped and memory stays bounded.
//! If the receiver is dropped, the tailer ends.
//!
//! A backlog (start-up, or a large append) is read a few hundred KiB per file per turn, and
//! only while at most a few messages are on their way: it goes no faster than the consumer
//! takes it, so the lines in memory stay about a MiB, not every file's backlog at once.

mod dormant;
mod outbox;
mod paths;
mod run;
mod watch;

pub use outbox::MAX_AHEAD_BYTES;

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use crate::discovery::{Matcher, Selector};
use crate::message::TailMessage;
use run::{Inbox, Tailer};
use watch::InotifyWatcher;

/// Longest wait for room on a full channel before the loop looks at its other work.
pub const SEND_WAIT: Duration = Duration::from_millis(20);
/// Under a stream of changes to one file the loop handles them at most this often, in
/// batches: each wake-up of the thread (and of the consumer) costs more than the lines it
/// handles. A lone append after a quiet spell is handled at once. While several files change
/// at once (many sessions), batches are 3 ms apart.
pub const BATCH_INTERVAL: Duration = Duration::from_millis(2);
/// Default start-up backlog bound: an existing file is read from at most this many bytes
/// before its end.
pub const PRIME_BYTES: u64 = 8 << 20;
/// A transcript not written for this long when following begins is dormant: not read until
/// it is written again (see [`TailerConfig::dormant_after`]). A day: today's sessions and
/// yesterday evening's are read; last month's wait.
pub const DORMANT_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// How changes are noticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// inotify, read by the tailer thread itself.
    Inotify,
    /// Own stat loop (NFS, WSL paths, anything without inotify).
    Poll { interval: Duration },
}

impl WatchMode {
    pub const DEFAULT_POLL: WatchMode = WatchMode::Poll {
        interval: Duration::from_millis(250),
    };
}

/// Everything the tailer needs.
#[derive(Debug, Clone)]
pub struct TailerConfig {
    /// Claude Code's config dir (`projects/` and `sessions/` live there).
    pub config_dir: PathBuf,
    /// Follow Claude Code's transcripts under `config_dir` (not with `--agent codex`).
    pub claude: bool,
    /// The Codex CLI's home, when its rollouts are followed too (`sessions/` lives there).
    pub codex_home: Option<PathBuf>,
    /// Gemini CLI's dir (`~/.gemini`), when its sessions are followed too (`tmp/` lives there).
    pub gemini_dir: Option<PathBuf>,
    /// Qwen Code's runtime dir (`~/.qwen`), when its sessions are followed too (`projects/`
    /// lives there).
    pub qwen_dir: Option<PathBuf>,
    /// Copilot CLI's dir (`~/.copilot`), when its sessions are followed too
    /// (`session-state/` lives there).
    pub copilot_dir: Option<PathBuf>,
    /// opencode's database, when its sessions are followed too (polled: [`crate::opencode`]).
    pub opencode_db: Option<PathBuf>,
    pub selectors: Vec<Selector>,
    /// Send existing files from their first line, as new lines (`backlog: false`), instead of
    /// their last [`TailerConfig::prime_bytes`] as backlog.
    pub from_start: bool,
    pub mode: WatchMode,
    /// Capacity of the output channel, in messages (see the module docs for the policy when
    /// full). What is read ahead of a slow consumer is also bounded in bytes
    /// ([`MAX_AHEAD_BYTES`]): 64 messages of up to 256 KiB of lines each, in the channel and
    /// the outbox, were up to 35 MB.
    pub channel_capacity: usize,
    /// Longest line kept; longer ones are skipped in bounded memory ([`TailMessage::TooLong`]).
    pub max_line_bytes: usize,
    /// How far before its end an existing file's backlog starts ([`PRIME_BYTES`]).
    pub prime_bytes: u64,
    /// Go on where an earlier stream stopped (`familiar feed` after a dropped link): each
    /// file existing at start that is listed, with its device and inode then, is read on
    /// from its point ([`OpenReason::Resumed`](crate::OpenReason::Resumed)) if it is still
    /// that file; one listed at line 0 was dormant then, at the point's offset as its size
    /// ([`TailMessage::Dormant`](crate::TailMessage::Dormant)), and is dormant still unless it
    /// changed (then it wakes); every other one is read from its first line, none of it
    /// backlog (it appeared, or was replaced, since), unless it is dormant by its age.
    /// `None`: a fresh start.
    pub resume: Option<std::sync::Arc<ResumeFrom>>,
    /// A file existing at start and not written for this long is dormant: noted, not read
    /// (not even its head), until it is written again or a hook names it; then it is read as
    /// it would have been at start ([`DORMANT_AFTER`]; `None`: every file is read at start).
    /// Not with `from_start`; with `resume`, only for files it does not list (the other end
    /// has the state of those, and goes on with them).
    pub dormant_after: Option<Duration>,
}

/// Where an earlier stream of each file stopped: the file's device and inode, and the point.
pub type ResumeFrom = std::collections::HashMap<PathBuf, ((u64, u64), crate::ResumePoint)>;

impl TailerConfig {
    /// Live mode, inotify, a 1024-message channel, 64 MiB lines, an 8 MiB backlog.
    pub fn new(config_dir: PathBuf, selectors: Vec<Selector>) -> TailerConfig {
        TailerConfig {
            config_dir,
            claude: true,
            codex_home: None,
            gemini_dir: None,
            qwen_dir: None,
            copilot_dir: None,
            opencode_db: None,
            selectors,
            from_start: false,
            mode: WatchMode::Inotify,
            channel_capacity: 64,
            max_line_bytes: familiar_transcript::DEFAULT_MAX_LINE_BYTES,
            prime_bytes: PRIME_BYTES,
            resume: None,
            dormant_after: None,
        }
    }
}

#[derive(Debug, Default)]
struct TailStats {
    messages: AtomicU64,
    channel_full: AtomicU64,
    read_pauses: AtomicU64,
    files: AtomicU64,
    generations: AtomicU64,
    problems: AtomicU64,
    bytes: AtomicU64,
    lines: AtomicU64,
    too_long: AtomicU64,
    lost_bytes: AtomicU64,
    dormant: AtomicU64,
}

/// Counters of a running tailer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TailStatsSnapshot {
    /// Messages handed to the channel.
    pub messages: u64,
    /// Times the channel was found full (once per episode, until the outbox drained).
    pub channel_full: u64,
    /// Times reading was paused because the consumer was behind (a full outbox, or
    /// [`MAX_AHEAD_BYTES`] of lines read ahead).
    pub read_pauses: u64,
    /// Paths followed so far.
    pub files: u64,
    /// Generations opened (first opens, truncations, replacements).
    pub generations: u64,
    pub problems: u64,
    /// Bytes read (backlog counting of skipped newlines not included).
    pub bytes: u64,
    /// Complete lines sent.
    pub lines: u64,
    /// Over-long lines skipped.
    pub too_long: u64,
    /// Bytes cut by truncations before they could be read (a lower bound; see
    /// [`crate::OpenReason::Truncated`]).
    pub lost_bytes: u64,
    /// Files dormant now (existing at start, not written for [`TailerConfig::dormant_after`],
    /// not read), among those selected by their path alone.
    pub dormant: u64,
}

impl TailStats {
    fn snapshot(&self) -> TailStatsSnapshot {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        TailStatsSnapshot {
            messages: get(&self.messages),
            channel_full: get(&self.channel_full),
            read_pauses: get(&self.read_pauses),
            files: get(&self.files),
            generations: get(&self.generations),
            problems: get(&self.problems),
            bytes: get(&self.bytes),
            lines: get(&self.lines),
            too_long: get(&self.too_long),
            lost_bytes: get(&self.lost_bytes),
            dormant: get(&self.dormant),
        }
    }
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// Why the tailer could not start.
#[derive(Debug, thiserror::Error)]
pub enum TailError {
    #[error("cannot start the inotify watcher (try --poll)")]
    Watcher(#[source] io::Error),
    #[error("cannot start the tailer thread")]
    Thread(#[source] io::Error),
}

/// Ends a running tailer from anywhere (a Ctrl-C handler, another thread).
#[derive(Debug, Clone)]
pub struct Stopper {
    stop: Arc<AtomicBool>,
    wake: Arc<mio::Waker>,
}

impl Stopper {
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake();
    }

    fn wake(&self) {
        if let Err(err) = self.wake.wake() {
            tracing::warn!("cannot wake the tailer: {err}");
        }
    }
}

/// A running tailer: its output channel, its counters, and the means to stop it. Dropping
/// the handle stops the thread and waits for it.
#[derive(Debug)]
pub struct TailerHandle {
    receiver: Receiver<TailMessage>,
    inbox: Arc<Mutex<Inbox>>,
    stopper: Stopper,
    stats: Arc<TailStats>,
    thread: Option<JoinHandle<()>>,
}

impl TailerHandle {
    pub fn receiver(&self) -> &Receiver<TailMessage> {
        &self.receiver
    }

    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    pub fn stats(&self) -> TailStatsSnapshot {
        self.stats.snapshot()
    }

    /// Follow one more transcript from now on, wherever it is, with its subagents (a hook's
    /// `transcript_path`): the tailer watches its directories and reads what is on disk
    /// already as backlog (then sends [`TailMessage::CaughtUp`] again), or reads it from its
    /// first line once it appears. A path followed already is left as it is.
    pub fn follow(&self, path: PathBuf) {
        self.inbox
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .follow
            .push(path);
        self.stopper.wake();
    }

    /// `true` once the thread ended (stopped, or its receiver went away).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Stop the thread and wait for it.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        self.stopper.stop();
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the tailer thread panicked");
        }
    }
}

impl Drop for TailerHandle {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Start following: spawns the tailer thread (named `familiar-tail`) and returns once its
/// watches are in place and the existing files are listed, so anything written after this
/// returns is seen as new (`backlog: false`). The backlog reads happen afterwards.
pub fn spawn(config: TailerConfig) -> Result<TailerHandle, TailError> {
    let (sender, receiver) = crossbeam_channel::bounded(config.channel_capacity.max(1));
    let inbox = Arc::new(Mutex::new(Inbox::default()));
    let handle_inbox = Arc::clone(&inbox);
    let poll = mio::Poll::new().map_err(TailError::Watcher)?;
    let wake = Arc::new(mio::Waker::new(poll.registry(), run::WAKE).map_err(TailError::Watcher)?);
    let watcher = match config.mode {
        WatchMode::Inotify => {
            let watcher = InotifyWatcher::new().map_err(TailError::Watcher)?;
            poll.registry()
                .register(
                    &mut mio::unix::SourceFd(&watcher.raw_fd()),
                    run::INOTIFY,
                    mio::Interest::READABLE,
                )
                .map_err(TailError::Watcher)?;
            Some(watcher)
        }
        WatchMode::Poll { .. } => None,
    };
    let stats = Arc::new(TailStats::default());
    let stopper = Stopper {
        stop: Arc::new(AtomicBool::new(false)),
        wake,
    };
    let now = Instant::now();
    let tailer = Tailer {
        matcher: Matcher::new(&config.config_dir, &config.selectors)
            .agents(config.claude, config.codex_home.as_deref())
            .gemini(config.gemini_dir.as_deref())
            .qwen(config.qwen_dir.as_deref())
            .copilot(config.copilot_dir.as_deref()),
        roots: Vec::new(),
        watched: Default::default(),
        watcher,
        inbox,
        poll,
        events: mio::Events::with_capacity(4),
        files: Default::default(),
        generations: Default::default(),
        busy: Default::default(),
        undecided: Default::default(),
        dormant: Default::default(),
        dormant_before: config
            .dormant_after
            .filter(|_| !config.from_start)
            .and_then(|after| std::time::SystemTime::now().checked_sub(after)),
        rejected: Default::default(),
        left: HashMap::new(),
        waiting_names: HashMap::new(),
        problems: Default::default(),
        outbox: Default::default(),
        scratch: Vec::new(),
        last_batch: now,
        changed_paths: 0,
        sender,
        stats: Arc::clone(&stats),
        stop: Arc::clone(&stopper.stop),
        full: false,
        paused: false,
        catching_up: true,
        fallback_poll: false,
        parking: false,
        starved: HashSet::new(),
        reclaim: familiar_model::memory::Reclaim::default(),
        next_housekeeping: now + run::HOUSEKEEPING,
        next_poll: now,
        opencode: config
            .opencode_db
            .clone()
            .map(crate::opencode::Follower::new),
        next_db_poll: now,
        config,
    };
    let (ready_tx, ready_rx) = crossbeam_channel::bounded(1);
    let thread = std::thread::Builder::new()
        .name("familiar-tail".to_owned())
        .spawn(move || tailer.run(ready_tx))
        .map_err(TailError::Thread)?;
    // Wait for the watches and the list of existing files: whatever is written from now on
    // counts as new. (An error means the thread ended early; the handle reports it finished.)
    let _ = ready_rx.recv();
    Ok(TailerHandle {
        receiver,
        inbox: handle_inbox,
        stopper,
        stats,
        thread: Some(thread),
    })
}
