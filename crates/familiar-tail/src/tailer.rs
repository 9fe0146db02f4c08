//! The tailer thread: watches the directories that [`crate::discovery`] names, keeps one
//! [`FileTail`] per followed transcript, and sends what they yield on a bounded
//! `crossbeam-channel` as [`TailMessage`]s, in per-file order.
//!
//! Change detection: with [`WatchMode::Inotify`] a `notify` watcher (no debouncer) marks
//! changed paths in a shared set and wakes the thread, so an appended line reaches the
//! normalizer within milliseconds; with [`WatchMode::Poll`] the thread stats every followed
//! file and walks the watched directories on its own interval (250 ms by default), comparing
//! sizes against offsets (not mtimes, which have whole-second granularity on some file
//! systems). Either way the file itself decides what happened (see [`FileTail::poll`]).
//!
//! Directories that do not exist yet: the nearest existing ancestor is watched, and the
//! directory is picked up (and read from the start) once it appears; a once-a-second
//! housekeeping pass re-checks them as well.
//!
//! A directory the watcher refuses (out of inotify watches, say) is reported as a
//! [`TailMessage::Problem`] and the tailer falls back to the poll loop (250 ms) for everything.
//!
//! # When the channel is full
//! The output channel is bounded ([`TailerConfig::channel_capacity`]). The tailer never
//! blocks on it for long: messages wait in a small outbox, and each turn of the loop sends
//! what fits and then waits at most [`SEND_WAIT`] for room before looking at its other work
//! (stop requests, timers). While the outbox holds `channel_capacity` messages or more, the
//! tailer stops reading transcripts: their bytes stay on disk and the offsets stay put, so
//! reading resumes exactly where it stopped once the consumer catches up. Nothing is dropped
//! and memory stays bounded (the outbox holds at most `channel_capacity` plus one read's
//! events, plus one timer event per file). [`TailStatsSnapshot::channel_full`] counts the
//! times the channel was found full and [`TailStatsSnapshot::read_pauses`] the times reading
//! was paused. If the receiver is dropped, the tailer ends.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, SendTimeoutError, Sender, TrySendError};
use familiar_model::{Event, Status};
use familiar_transcript::NormalizerConfig;
use notify::{RecursiveMode, Watcher as _};

use crate::clock::{Clock, SystemClock};
use crate::discovery::{
    Matcher, Selector, TranscriptInfo, Verdict, WatchRoot, describe, is_live, parse_timestamp,
    read_agent_type, read_head_of, transcript_of_meta, walk,
};
use crate::file::{FileError, FileTail, PollAt, ResetReason, Start, Timers};

/// Longest wait for room on a full channel before the loop looks at its other work.
pub const SEND_WAIT: Duration = Duration::from_millis(20);
/// Bytes read from one file per turn of the loop, so one huge file cannot starve the rest.
const READ_BUDGET: u64 = 8 << 20;
/// Under a stream of changes the loop handles them at most this often, in batches: each
/// wake-up of the thread (and of the consumer) costs more than the lines it handles. A lone
/// append after a quiet spell is handled at once.
pub const BATCH_INTERVAL: Duration = Duration::from_millis(2);
/// Pending roots, vanished roots and timers are looked at least this often.
const HOUSEKEEPING: Duration = Duration::from_secs(1);

/// How changes are noticed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// inotify through `notify`, no debouncer.
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
    pub selectors: Vec<Selector>,
    /// Emit existing files from their first line instead of starting at their end.
    pub from_start: bool,
    pub mode: WatchMode,
    pub timers: Timers,
    /// Capacity of the output channel (see the module docs for the policy when full).
    pub channel_capacity: usize,
    pub normalizer: NormalizerConfig,
    pub clock: Arc<dyn Clock>,
}

impl TailerConfig {
    /// Live mode, inotify, default timers, a 4096-message channel.
    pub fn new(config_dir: PathBuf, selectors: Vec<Selector>) -> TailerConfig {
        TailerConfig {
            config_dir,
            selectors,
            from_start: false,
            mode: WatchMode::Inotify,
            timers: Timers::default(),
            channel_capacity: 4096,
            normalizer: NormalizerConfig::default(),
            clock: Arc::new(SystemClock),
        }
    }
}

/// What the tailer sends.
// Events are nearly all the traffic: kept inline rather than boxed, one allocation fewer each.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum TailMessage {
    /// A normalized event (from a record, or a `status` event from a timer), tagged with its
    /// session and agent.
    Event(Event),
    /// A transcript is now followed, with its state after the first read: for a file that
    /// existed at start (live mode) the state the silent warm-up found; for a new file the
    /// state after the lines of that first read, whose events follow this message. Sent again
    /// when a subagent's meta file appears or changes.
    Followed(Box<Followed>),
    /// A parent session's records tie a subagent to the Task/Agent tool_use that spawned it
    /// (the `tool_use_id` of that call's `subagent_start` event). Sent once per subagent.
    SubagentLink {
        session: Option<String>,
        agent_id: String,
        tool_use_id: String,
    },
    /// The file was truncated or replaced: its events start again from line 1.
    Reset { path: PathBuf, reason: ResetReason },
    /// The file was deleted.
    Removed { path: PathBuf },
    /// Sent once, when every file that existed at start has been read (warm-up done): the
    /// `Followed` messages before it describe the sessions found at start.
    CaughtUp,
    /// A path that cannot be followed (permission denied, not a regular file, a dangling
    /// symlink, a watch that failed). Reported once, then skipped; retried when it changes.
    Problem { path: PathBuf, error: String },
}

/// A followed transcript and its state when following began.
#[derive(Debug, Clone, PartialEq)]
pub struct Followed {
    pub info: TranscriptInfo,
    pub session: Option<String>,
    pub context_used: Option<u64>,
    pub context_limit: u64,
    pub status: Status,
    /// Tool uses (id, name) still waiting for a result: open subagents among them.
    pub open_tool_uses: Vec<(String, String)>,
    /// The latest record timestamp read so far.
    pub last_record_ts: Option<String>,
    /// A record was written within the idle timeout (from record timestamps, not mtime).
    pub live: bool,
    /// Complete lines read so far.
    pub lines: u64,
}

#[derive(Debug, Default)]
struct TailStats {
    events: AtomicU64,
    channel_full: AtomicU64,
    read_pauses: AtomicU64,
    files: AtomicU64,
    resets: AtomicU64,
    problems: AtomicU64,
    bytes: AtomicU64,
    lines: AtomicU64,
    skipped_lines: AtomicU64,
}

/// Counters of a running tailer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TailStatsSnapshot {
    /// Events handed to the channel.
    pub events: u64,
    /// Times the channel was found full (once per episode, until the outbox drained).
    pub channel_full: u64,
    /// Times reading was paused because the outbox was full.
    pub read_pauses: u64,
    /// Transcripts followed so far.
    pub files: u64,
    pub resets: u64,
    pub problems: u64,
    pub bytes: u64,
    pub lines: u64,
    /// Malformed, over-long or invalid-UTF-8 lines skipped.
    pub skipped_lines: u64,
}

impl TailStats {
    fn snapshot(&self) -> TailStatsSnapshot {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        TailStatsSnapshot {
            events: get(&self.events),
            channel_full: get(&self.channel_full),
            read_pauses: get(&self.read_pauses),
            files: get(&self.files),
            resets: get(&self.resets),
            problems: get(&self.problems),
            bytes: get(&self.bytes),
            lines: get(&self.lines),
            skipped_lines: get(&self.skipped_lines),
        }
    }
}

fn bump(counter: &AtomicU64, by: u64) {
    counter.fetch_add(by, Ordering::Relaxed);
}

/// Why the tailer could not start.
#[derive(Debug, thiserror::Error)]
pub enum TailError {
    #[error("cannot start the inotify watcher (try --poll): {0}")]
    Watcher(#[from] notify::Error),
    #[error("cannot start the tailer thread: {0}")]
    Thread(#[from] io::Error),
}

/// Paths the watcher saw change, shared between the `notify` callback and the tailer.
#[derive(Debug, Default)]
struct Inbox {
    /// Changed paths; `true` when more than data changed (created, removed, renamed, chmod).
    dirty: HashMap<PathBuf, bool>,
    rescan: bool,
}

/// Ends a running tailer from anywhere (a Ctrl-C handler, another thread).
#[derive(Debug, Clone)]
pub struct Stopper {
    stop: Arc<AtomicBool>,
    wake: Sender<()>,
}

impl Stopper {
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.wake.try_send(());
    }
}

/// A running tailer: its output channel, its counters, and the means to stop it. Dropping
/// the handle stops the thread and waits for it.
#[derive(Debug)]
pub struct TailerHandle {
    receiver: Receiver<TailMessage>,
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
/// returns is seen as new (emitted even in live mode). The warm-up reads happen afterwards.
pub fn spawn(config: TailerConfig) -> Result<TailerHandle, TailError> {
    let (sender, receiver) = crossbeam_channel::bounded(config.channel_capacity.max(1));
    let (wake_tx, wake_rx) = crossbeam_channel::bounded(1);
    let inbox = Arc::new(Mutex::new(Inbox::default()));
    let watcher = match config.mode {
        WatchMode::Inotify => {
            let inbox = Arc::clone(&inbox);
            let wake = wake_tx.clone();
            Some(notify::recommended_watcher(
                move |result: notify::Result<notify::Event>| {
                    note_change(&inbox, result);
                    let _ = wake.try_send(());
                },
            )?)
        }
        WatchMode::Poll { .. } => None,
    };
    let stats = Arc::new(TailStats::default());
    let stopper = Stopper {
        stop: Arc::new(AtomicBool::new(false)),
        wake: wake_tx,
    };
    let now = config.clock.now();
    let tailer = Tailer {
        matcher: Matcher::new(&config.config_dir, &config.selectors),
        roots: Vec::new(),
        watched: HashMap::new(),
        watcher,
        inbox,
        wake: wake_rx,
        files: HashMap::new(),
        busy: HashSet::new(),
        undecided: HashMap::new(),
        rejected: HashSet::new(),
        problems: HashSet::new(),
        outbox: VecDeque::new(),
        scratch: Vec::new(),
        last_batch: Instant::now(),
        sender,
        stats: Arc::clone(&stats),
        stop: Arc::clone(&stopper.stop),
        full: false,
        paused: false,
        catching_up: true,
        fallback_poll: false,
        next_timer: None,
        next_housekeeping: now + HOUSEKEEPING,
        next_poll: now,
        config,
    };
    let (ready_tx, ready_rx) = crossbeam_channel::bounded(1);
    let thread = std::thread::Builder::new()
        .name("familiar-tail".to_owned())
        .spawn(move || tailer.run(ready_tx))?;
    // Wait for the watches and the list of existing files: whatever is written from now on
    // counts as new. (An error means the thread ended early; the handle reports it finished.)
    let _ = ready_rx.recv();
    Ok(TailerHandle {
        receiver,
        stopper,
        stats,
        thread: Some(thread),
    })
}

fn nearest_existing_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.is_dir())
        .map(Path::to_path_buf)
}

/// The `notify` callback's part: remember what changed, cheaply, under a short lock.
fn note_change(inbox: &Mutex<Inbox>, result: notify::Result<notify::Event>) {
    let mut inbox = inbox.lock().unwrap_or_else(|poison| poison.into_inner());
    match result {
        Ok(event) => {
            if event.need_rescan() {
                inbox.rescan = true;
            }
            use notify::event::{AccessKind, AccessMode, ModifyKind};
            // Our own reads produce open/close events: only writes, creations, removals,
            // renames and attribute changes (chmod) matter.
            let data_only = match event.kind {
                notify::EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
                notify::EventKind::Access(_) => return,
                notify::EventKind::Modify(ModifyKind::Data(_)) => true,
                _ => false,
            };
            for path in event.paths {
                *inbox.dirty.entry(path).or_insert(false) |= !data_only;
            }
        }
        Err(err) => {
            tracing::warn!("file watcher: {err}");
            inbox.rescan = true;
        }
    }
}

#[derive(Debug)]
struct RootState {
    root: WatchRoot,
    active: bool,
}

/// Where a file found by a scan starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// Existed when the tailer started.
    AtStart,
    /// Appeared while running: read from its first line.
    Later,
}

struct Tailer {
    config: TailerConfig,
    matcher: Matcher,
    roots: Vec<RootState>,
    /// Directories handed to the watcher, and whether recursively.
    watched: HashMap<PathBuf, bool>,
    watcher: Option<notify::RecommendedWatcher>,
    inbox: Arc<Mutex<Inbox>>,
    wake: Receiver<()>,
    files: HashMap<PathBuf, FileTail>,
    /// Files whose last poll ran out of budget.
    busy: HashSet<PathBuf>,
    /// Files whose first records do not tell yet whether they are selected: where they
    /// would start, and their size when last looked at.
    undecided: HashMap<PathBuf, (Start, u64)>,
    rejected: HashSet<PathBuf>,
    /// Paths reported as problems (reported once).
    problems: HashSet<PathBuf>,
    outbox: VecDeque<TailMessage>,
    /// The read buffer all files share.
    scratch: Vec<u8>,
    /// When the loop last handled changes (real time, for batching).
    last_batch: Instant,
    sender: Sender<TailMessage>,
    stats: Arc<TailStats>,
    stop: Arc<AtomicBool>,
    full: bool,
    paused: bool,
    catching_up: bool,
    /// A directory could not be watched: poll everything on the default interval.
    fallback_poll: bool,
    next_timer: Option<Instant>,
    next_housekeeping: Instant,
    next_poll: Instant,
}

impl Tailer {
    fn run(mut self, ready: Sender<()>) {
        let roots = self.matcher.roots();
        self.roots = roots
            .into_iter()
            .map(|root| RootState {
                root,
                active: false,
            })
            .collect();
        self.activate_roots(Found::AtStart);
        let _ = ready.send(());
        drop(ready);
        loop {
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            if !self.flush() {
                break; // nobody listens any more
            }
            let paused = self.outbox.len() >= self.config.channel_capacity.max(1);
            if paused && !self.paused {
                bump(&self.stats.read_pauses, 1);
            }
            self.paused = paused;
            let now = self.config.clock.now();
            if !paused {
                self.take_changes();
                let busy: Vec<PathBuf> = self.busy.drain().collect();
                for path in busy {
                    self.poll_file(&path);
                }
                if self.catching_up && self.busy.is_empty() {
                    self.catching_up = false;
                    self.outbox.push_back(TailMessage::CaughtUp);
                }
                if let Some(interval) = self.poll_interval()
                    && now >= self.next_poll
                {
                    self.next_poll = now + interval;
                    self.poll_everything();
                }
            }
            if now >= self.next_housekeeping {
                self.next_housekeeping = now + HOUSEKEEPING;
                self.housekeeping();
            }
            if self.next_timer.is_some_and(|deadline| now >= deadline) {
                self.fire_timers();
            }
            if !self.flush() {
                break;
            }
            if !self.wait() {
                break;
            }
        }
    }

    /// How often to poll: the poll mode's interval, or the default one when a directory could
    /// not be watched; `None` when inotify covers everything.
    fn poll_interval(&self) -> Option<Duration> {
        match self.config.mode {
            WatchMode::Poll { interval } => Some(interval),
            WatchMode::Inotify if self.fallback_poll => match WatchMode::DEFAULT_POLL {
                WatchMode::Poll { interval } => Some(interval),
                WatchMode::Inotify => None,
            },
            WatchMode::Inotify => None,
        }
    }

    /// Sleep until something may need doing; `false` when the receiver is gone.
    fn wait(&mut self) -> bool {
        let now = self.config.clock.now();
        let mut until = self.next_housekeeping;
        if let Some(deadline) = self.next_timer {
            until = until.min(deadline);
        }
        if self.poll_interval().is_some() {
            until = until.min(self.next_poll);
        }
        let mut timeout = until.saturating_duration_since(now);
        if !self.busy.is_empty() {
            timeout = Duration::ZERO;
        }
        if let Some(message) = self.outbox.pop_front() {
            let is_event = matches!(message, TailMessage::Event(_));
            return match self.sender.send_timeout(message, timeout.min(SEND_WAIT)) {
                Ok(()) => {
                    if is_event {
                        bump(&self.stats.events, 1);
                    }
                    true
                }
                Err(SendTimeoutError::Timeout(message)) => {
                    self.outbox.push_front(message);
                    true
                }
                Err(SendTimeoutError::Disconnected(_)) => false,
            };
        }
        if self.wake.recv_timeout(timeout).is_ok() {
            // Woken by a change: if the last batch was only just handled, let more changes
            // gather before handling them (at most BATCH_INTERVAL later).
            let pending = {
                let inbox = self
                    .inbox
                    .lock()
                    .unwrap_or_else(|poison| poison.into_inner());
                !inbox.dirty.is_empty() || inbox.rescan
            };
            if pending {
                let since = self.last_batch.elapsed();
                if since < BATCH_INTERVAL {
                    std::thread::sleep(BATCH_INTERVAL - since);
                }
                self.last_batch = Instant::now();
            }
        }
        true
    }

    /// Hand the outbox to the channel as far as it has room; `false` when disconnected.
    fn flush(&mut self) -> bool {
        while let Some(message) = self.outbox.pop_front() {
            let is_event = matches!(message, TailMessage::Event(_));
            match self.sender.try_send(message) {
                Ok(()) => {
                    if is_event {
                        bump(&self.stats.events, 1);
                    }
                }
                Err(TrySendError::Full(message)) => {
                    self.outbox.push_front(message);
                    if !self.full {
                        self.full = true;
                        bump(&self.stats.channel_full, 1);
                    }
                    return true;
                }
                Err(TrySendError::Disconnected(_)) => return false,
            }
        }
        self.full = false;
        true
    }

    fn take_changes(&mut self) {
        let (dirty, rescan) = {
            let mut inbox = self
                .inbox
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            (
                std::mem::take(&mut inbox.dirty),
                std::mem::take(&mut inbox.rescan),
            )
        };
        if rescan {
            tracing::debug!("watcher asked for a rescan");
            self.poll_everything();
        }
        for (path, names_changed) in dirty {
            self.handle_path(&path, names_changed);
        }
    }

    fn handle_path(&mut self, path: &Path, names_changed: bool) {
        let name = path
            .file_name()
            .map(|name| name.as_encoded_bytes())
            .unwrap_or_default();
        if name.ends_with(b".meta.json") {
            self.meta_changed(path);
            return;
        }
        if self.files.contains_key(path) {
            self.poll_file_checking(path, names_changed);
            return;
        }
        match fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => {
                if self
                    .roots
                    .iter()
                    .any(|r| !r.active && r.root.path.starts_with(path))
                {
                    self.activate_roots(Found::Later);
                }
                if self.under_recursive_root(path) {
                    self.scan(path, true, Found::Later);
                }
            }
            Ok(_) => {
                if name.ends_with(b".jsonl") {
                    self.consider(path, Found::Later);
                }
            }
            Err(_) => {
                // A directory went away: its files notice on their own poll.
                let gone: Vec<PathBuf> = self
                    .files
                    .keys()
                    .filter(|file| file.starts_with(path))
                    .cloned()
                    .collect();
                for file in gone {
                    self.poll_file(&file);
                }
                self.undecided.retain(|file, _| !file.starts_with(path));
                self.rejected.retain(|file| !file.starts_with(path));
                if self
                    .roots
                    .iter()
                    .any(|r| r.active && r.root.path.starts_with(path))
                {
                    self.check_vanished_roots();
                }
            }
        }
    }

    fn meta_changed(&mut self, meta: &Path) {
        let Some(transcript) = transcript_of_meta(meta) else {
            return;
        };
        let Some(tail) = self.files.get_mut(&transcript) else {
            return;
        };
        let agent_type = read_agent_type(meta);
        if agent_type != tail.info.agent_type {
            tail.info.agent_type = agent_type;
            if tail.warmed() {
                let followed = followed(tail, self.config.clock.wall(), &self.config.timers);
                self.outbox
                    .push_back(TailMessage::Followed(Box::new(followed)));
            }
        }
    }

    fn under_recursive_root(&self, path: &Path) -> bool {
        self.roots
            .iter()
            .any(|r| r.active && r.root.recursive && path.starts_with(&r.root.path))
    }

    fn under_active_root(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| {
            r.active
                && if r.root.recursive {
                    path.starts_with(&r.root.path)
                } else {
                    path.parent() == Some(r.root.path.as_path())
                }
        })
    }

    /// Watch the roots that exist now and scan them; for the others, watch the nearest
    /// existing ancestor so their creation is noticed.
    fn activate_roots(&mut self, found: Found) {
        for index in 0..self.roots.len() {
            if self.roots[index].active {
                continue;
            }
            let root = self.roots[index].root.clone();
            // A directory on the way may appear between looking and watching, unseen by the
            // watch that comes too late: look again after each watch until nothing moved.
            loop {
                if root.path.is_dir() {
                    self.watch(&root.path, root.recursive);
                    self.roots[index].active = true;
                    tracing::debug!("watching {}", root.path.display());
                    self.scan(&root.path, root.recursive, found);
                    break;
                }
                let Some(anchor) = nearest_existing_ancestor(&root.path) else {
                    break;
                };
                self.watch(&anchor, false);
                if nearest_existing_ancestor(&root.path).as_ref() == Some(&anchor)
                    && !root.path.is_dir()
                {
                    break;
                }
            }
        }
    }

    fn check_vanished_roots(&mut self) {
        for index in 0..self.roots.len() {
            let path = self.roots[index].root.path.clone();
            if self.roots[index].active && !path.is_dir() {
                self.roots[index].active = false;
                if self.watched.remove(&path).is_some()
                    && let Some(watcher) = self.watcher.as_mut()
                {
                    let _ = watcher.unwatch(&path);
                }
            }
        }
    }

    /// Hand a directory to the watcher (a no-op in poll mode). If the watcher refuses, the
    /// tailer falls back to polling; either way the directory counts as covered.
    fn watch(&mut self, dir: &Path, recursive: bool) {
        match self.watched.get(dir) {
            Some(true) => return,
            Some(false) if !recursive => return,
            _ => {}
        }
        if let Some(watcher) = self.watcher.as_mut() {
            let mode = if recursive {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            if let Err(err) = watcher.watch(dir, mode) {
                // Out of inotify watches, or not allowed: poll instead of missing changes.
                self.problem(dir, format!("cannot watch ({err}); polling instead"));
                self.fallback_poll = true;
            }
        }
        self.watched.insert(dir.to_path_buf(), recursive);
    }

    fn scan(&mut self, dir: &Path, recursive: bool, found: Found) {
        let mut files = Vec::new();
        let mut errors = Vec::new();
        walk(
            dir,
            recursive,
            &mut |path| files.push(path),
            &mut |path, err| errors.push((path.to_path_buf(), err)),
        );
        for (path, err) in errors {
            self.problem(&path, format!("cannot list: {err}"));
        }
        // Followed files are polled by whoever asked for the scan, if it needs them polled.
        for path in files {
            if !self.files.contains_key(&path) {
                self.consider(&path, found);
            }
        }
    }

    /// A `*.jsonl` path not followed yet: follow it if it is selected and readable.
    fn consider(&mut self, path: &Path, found: Found) {
        if self.rejected.contains(path) || !self.under_active_root(path) {
            return;
        }
        let Some(info) = describe(path) else { return };
        let meta = match fs::metadata(path) {
            Ok(meta) if meta.is_file() => meta,
            Ok(_) => {
                return self.problem(path, "not a regular file (a FIFO, socket or device)".into());
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if fs::symlink_metadata(path).is_ok() {
                    self.problem(path, "dangling symlink".into());
                }
                return;
            }
            Err(err) => return self.problem(path, format!("cannot read: {err}")),
        };
        let start = match self.undecided.remove(path) {
            Some((start, size)) => {
                if size == meta.len() {
                    self.undecided.insert(path.to_path_buf(), (start, size));
                    return; // nothing new to decide on
                }
                start
            }
            None if found == Found::Later || self.config.from_start => Start::FromStart,
            None => Start::Silent(meta.len()),
        };
        let verdict = match self.matcher.decide(&info, None) {
            Verdict::NeedRecords => match read_head_of(path) {
                Ok(head) => self.matcher.decide(&info, Some(&head)),
                Err(err) => return self.problem(path, format!("cannot read: {err}")),
            },
            verdict => verdict,
        };
        match verdict {
            Verdict::Yes => self.follow(info, start, found),
            Verdict::No => {
                self.rejected.insert(path.to_path_buf());
            }
            Verdict::NeedRecords => {
                self.undecided
                    .insert(path.to_path_buf(), (start, meta.len()));
            }
        }
    }

    fn follow(&mut self, info: TranscriptInfo, start: Start, found: Found) {
        let path = info.path.clone();
        tracing::debug!("following {} ({start:?})", path.display());
        let tail = FileTail::new(
            info,
            self.config.normalizer.clone(),
            start,
            self.config.clock.now(),
        );
        self.files.insert(path.clone(), tail);
        bump(&self.stats.files, 1);
        if found == Found::AtStart {
            // Read in the loop: `spawn` returns as soon as every file is registered.
            self.busy.insert(path);
        } else {
            self.poll_file(&path);
        }
    }

    fn poll_file(&mut self, path: &Path) {
        self.poll_file_checking(path, true);
    }

    fn poll_file_checking(&mut self, path: &Path, check_path: bool) {
        let Some(tail) = self.files.get_mut(path) else {
            return;
        };
        let clock = &self.config.clock;
        let timers = self.config.timers;
        let mut events = Vec::new();
        let mut diagnostics = Vec::new();
        let at = PollAt {
            now: clock.now(),
            wall: clock.wall(),
            timers: &timers,
            budget: READ_BUDGET,
            check_path,
        };
        let result = tail.poll(&mut self.scratch, &at, &mut events, &mut diagnostics);
        match result {
            Ok(polled) => {
                bump(&self.stats.bytes, polled.bytes);
                bump(&self.stats.lines, polled.lines);
                if let Some(reason) = polled.reset {
                    bump(&self.stats.resets, 1);
                    tracing::info!("{} was {reason:?}: reading it again", path.display());
                    self.outbox.push_back(TailMessage::Reset {
                        path: path.to_path_buf(),
                        reason,
                    });
                }
                // Announce once: a new file before its first events, an old one after its
                // silent warm-up.
                if !tail.announced && tail.warmed() {
                    tail.announced = true;
                    let followed = followed(tail, clock.wall(), &timers);
                    self.outbox
                        .push_back(TailMessage::Followed(Box::new(followed)));
                }
                self.problems.remove(path);
                let session = tail
                    .normalizer()
                    .session()
                    .map(str::to_owned)
                    .or_else(|| tail.info.session_id.clone());
                for link in polled.links {
                    self.outbox.push_back(TailMessage::SubagentLink {
                        session: session.clone(),
                        agent_id: link.agent_id,
                        tool_use_id: link.tool_use_id,
                    });
                }
                for diagnostic in &diagnostics {
                    tracing::warn!(
                        "{}:{}: {}",
                        path.display(),
                        diagnostic.line,
                        diagnostic.kind
                    );
                }
                bump(&self.stats.skipped_lines, diagnostics.len() as u64);
                self.outbox
                    .extend(events.into_iter().map(TailMessage::Event));
                if polled.more {
                    self.busy.insert(path.to_path_buf());
                }
                if let Some(deadline) = tail.next_deadline(&timers) {
                    self.next_timer = Some(self.next_timer.map_or(deadline, |t| t.min(deadline)));
                }
            }
            Err(FileError::Gone) => {
                self.files.remove(path);
                self.busy.remove(path);
                tracing::info!("{} was deleted", path.display());
                self.outbox.push_back(TailMessage::Removed {
                    path: path.to_path_buf(),
                });
            }
            Err(err) => {
                self.files.remove(path);
                self.busy.remove(path);
                self.problem(path, err.to_string());
            }
        }
    }

    fn fire_timers(&mut self) {
        let now = self.config.clock.now();
        let wall = self.config.clock.wall();
        let timers = self.config.timers;
        let mut next: Option<Instant> = None;
        for tail in self.files.values_mut() {
            if let Some(event) = tail.due_status(now, wall, &timers) {
                self.outbox.push_back(TailMessage::Event(event));
            }
            if let Some(deadline) = tail.next_deadline(&timers) {
                next = Some(next.map_or(deadline, |t| t.min(deadline)));
            }
        }
        self.next_timer = next;
    }

    fn housekeeping(&mut self) {
        if self.roots.iter().any(|r| !r.active) {
            self.activate_roots(Found::Later);
        }
        self.check_vanished_roots();
        // Timers are checked here too: an injected clock may have jumped.
        self.fire_timers();
    }

    /// The poll loop's turn (and the answer to an inotify queue overflow): every followed
    /// file, then every watched directory for new files.
    fn poll_everything(&mut self) {
        let known: Vec<PathBuf> = self.files.keys().cloned().collect();
        for path in known {
            self.poll_file(&path);
        }
        self.check_vanished_roots();
        self.activate_roots(Found::Later);
        let roots: Vec<WatchRoot> = self
            .roots
            .iter()
            .filter(|r| r.active)
            .map(|r| r.root.clone())
            .collect();
        for root in roots {
            self.scan(&root.path, root.recursive, Found::Later);
        }
    }

    fn problem(&mut self, path: &Path, error: String) {
        if self.problems.insert(path.to_path_buf()) {
            tracing::warn!("skipping {}: {error}", path.display());
            bump(&self.stats.problems, 1);
            self.outbox.push_back(TailMessage::Problem {
                path: path.to_path_buf(),
                error,
            });
        }
    }
}

fn followed(tail: &FileTail, wall: std::time::SystemTime, timers: &Timers) -> Followed {
    let normalizer = tail.normalizer();
    let last_record_ts = normalizer.metrics().last_ts.clone();
    let last = last_record_ts.as_deref().and_then(parse_timestamp);
    Followed {
        info: tail.info.clone(),
        session: normalizer
            .session()
            .map(str::to_owned)
            .or_else(|| tail.info.session_id.clone()),
        context_used: normalizer.context_used(),
        context_limit: normalizer.context_limit(),
        status: tail.status(),
        open_tool_uses: normalizer.open_tool_uses(),
        live: is_live(last, wall, timers.idle_after),
        last_record_ts,
        lines: tail.last_line(),
    }
}
