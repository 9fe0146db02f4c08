//! The tailer's loop: wait for a change (or the poll interval), let a burst of changes gather
//! for at most [`BATCH_INTERVAL`], hand the changed paths to [`super::paths`], and pass the
//! messages on through a small outbox to the bounded channel without ever blocking long on
//! it. The thread sleeps in one `epoll` wait on its inotify descriptor and its waker, and
//! wakes only for work: while several files change at once, about once per
//! `STREAM_INTERVAL` (3 ms), not once per write; one file alone within [`BATCH_INTERVAL`].

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{SendTimeoutError, Sender, TrySendError};

use super::outbox::MAX_AHEAD_BYTES;
use super::watch::InotifyWatcher;
use super::{BATCH_INTERVAL, SEND_WAIT, TailStats, TailerConfig, WatchMode, bump};
use crate::discovery::{Matcher, WatchRoot};
use crate::file::{FileTail, Resume, Start};
use crate::message::TailMessage;
use crate::path_map::{PathMap, PathSet};

/// Pending roots and vanished roots are looked at least this often.
pub(super) const HOUSEKEEPING: Duration = Duration::from_secs(1);
/// Messages on their way (outbox and channel) below which a backlog is read on. 16, not 4:
/// at 4, 5,000 small sessions took 5.4 s to catch up (a pause of up to 1 ms per few files),
/// at 16 2.0 s; a 100 MB transcript's primed backlog then peaks at 13.9 MB instead of 10.5.
const BACKLOG_IN_FLIGHT: usize = 16;
/// Batches while several files change at once (many sessions writing): each batch costs a
/// wake-up of this thread and of the consumer, whatever it holds. Changes to one file alone
/// (one session, even appending back to back) are handled within [`BATCH_INTERVAL`].
const STREAM_INTERVAL: Duration = Duration::from_millis(3);
/// How long a backlog waits for the consumer to take a message before looking again.
const BACKLOG_WAIT: Duration = Duration::from_millis(1);

/// How long where a file's reading stopped is kept once its path went away, for the name it
/// may have been renamed to (seen in the same batch of changes or poll pass, in practice).
pub(super) const RENAME_MEMORY: Duration = Duration::from_secs(5);

/// What the thread waits on: the waker ([`super::Stopper`], [`super::TailerHandle::follow`])
/// and the inotify descriptor.
pub(super) const WAKE: mio::Token = mio::Token(0);
pub(super) const INOTIFY: mio::Token = mio::Token(1);

/// Paths the watcher saw change, and files named at run time (shared with the handle).
#[derive(Debug, Default)]
pub(super) struct Inbox {
    /// Changed paths; `true` when more than data changed (created, removed, renamed, chmod).
    pub dirty: PathMap<bool>,
    pub rescan: bool,
    /// Files named at run time ([`super::TailerHandle::follow`]), in order.
    pub follow: Vec<PathBuf>,
}

#[derive(Debug)]
pub(super) struct RootState {
    pub root: WatchRoot,
    pub active: bool,
}

/// How a file found by a scan starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Found {
    /// Existed when the tailer started.
    AtStart,
    /// Appeared while running: read from its first line.
    Later,
}

pub(super) struct Tailer {
    pub config: TailerConfig,
    pub matcher: Matcher,
    pub roots: Vec<RootState>,
    /// Directories handed to the watcher, and whether recursively.
    pub watched: PathMap<bool>,
    pub watcher: Option<InotifyWatcher>,
    pub inbox: Arc<Mutex<Inbox>>,
    /// Waits on the waker and the inotify descriptor (edge-triggered: the watcher is read
    /// until it is empty every time changes are taken).
    pub poll: mio::Poll,
    pub events: mio::Events,
    /// Boxed: a `FileTail` is about 360 bytes, and a table grown by doubling kept up to twice
    /// that per file (and both tables while it grew: 4.7 MB at 5,000 sessions).
    pub files: PathMap<Box<FileTail>>,
    /// The last generation of every path followed so far (paths come back).
    pub generations: PathMap<u32>,
    /// Files whose last poll ran out of budget, or not read yet.
    pub busy: PathSet,
    /// Files whose first records do not tell yet whether they are selected: where they
    /// would start, and their size when last looked at.
    pub undecided: PathMap<(Start, u64)>,
    /// Files set aside at start as dormant (`super::dormant`).
    pub dormant: PathMap<super::dormant::Dormant>,
    /// Files last written before this are set aside as dormant; `None` once the start-up
    /// scan is done (a file found later is read).
    pub dormant_before: Option<std::time::SystemTime>,
    pub rejected: PathSet,
    /// Where the reading of files whose path went away stopped, by device and inode, and
    /// when: a name one of them was renamed to goes on from there ([`RENAME_MEMORY`]).
    pub left: HashMap<(u64, u64), (Resume, Instant)>,
    /// A new name of a file still followed under its old one, by device and inode: looked
    /// at again once the old name is gone.
    pub waiting_names: HashMap<(u64, u64), PathBuf>,
    /// Paths reported as problems (reported once).
    pub problems: PathSet,
    pub outbox: super::outbox::Outbox,
    /// The read buffer all files share.
    pub scratch: Vec<u8>,
    /// When the loop last handled changes (for batching).
    pub last_batch: Instant,
    /// How many paths the last batch of changes named.
    pub changed_paths: usize,
    pub sender: Sender<TailMessage>,
    pub stats: Arc<TailStats>,
    pub stop: Arc<AtomicBool>,
    pub full: bool,
    pub paused: bool,
    pub catching_up: bool,
    /// A directory could not be watched: poll everything on the default interval.
    pub fallback_poll: bool,
    /// The open-file limit was reached: files are closed after each read (parked) and
    /// reopened when they change.
    pub parking: bool,
    /// Files that could not be opened for want of a descriptor, tried again at housekeeping.
    pub starved: HashSet<PathBuf>,
    /// Bytes read since memory was last given back (at housekeeping, once enough were read).
    pub reclaim: familiar_model::memory::Reclaim,
    pub next_housekeeping: Instant,
    pub next_poll: Instant,
    /// opencode's database, when followed: looked at every [`DB_POLL`].
    pub opencode: Option<crate::opencode::Follower>,
    pub next_db_poll: Instant,
}

/// How often opencode's database (and its `-wal` file) is looked at for changes: two
/// `stat`s, and a read of the new rows only when one changed.
pub(super) const DB_POLL: Duration = Duration::from_millis(100);
/// How often a database that does not exist (opencode never ran here) is looked for.
pub(super) const DB_ABSENT_POLL: Duration = Duration::from_secs(1);

impl Tailer {
    pub(super) fn run(mut self, ready: Sender<()>) {
        let roots = self.matcher.roots();
        self.roots = roots
            .into_iter()
            .map(|root| RootState {
                root,
                active: false,
            })
            .collect();
        self.activate_roots(Found::AtStart);
        self.dormant_before = None;
        // What the database holds now is backlog, as the files' are.
        self.poll_opencode();
        let _ = ready.send(());
        drop(ready);
        loop {
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            if !self.flush() {
                break; // nobody listens any more
            }
            let paused = self.behind();
            if paused && !self.paused {
                bump(&self.stats.read_pauses, 1);
            }
            self.paused = paused;
            let now = Instant::now();
            if !paused {
                self.take_changes();
                self.poll_busy();
                if self.opencode.is_some() && now >= self.next_db_poll {
                    self.poll_opencode();
                }
                if self.catching_up && !self.files.values().any(|tail| tail.in_backlog()) {
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
        let now = Instant::now();
        let mut until = self.next_housekeeping;
        if self.poll_interval().is_some() {
            until = until.min(self.next_poll);
        }
        if self.opencode.is_some() {
            until = until.min(self.next_db_poll);
        }
        let mut timeout = until.saturating_duration_since(now);
        if !self.busy.is_empty() {
            // More to read: at once, or as soon as the consumer may have taken a message.
            timeout = if self.backlog_room() {
                Duration::ZERO
            } else {
                timeout.min(BACKLOG_WAIT)
            };
        }
        if let Some((message, bytes)) = self.outbox.pop_front() {
            return match self.sender.send_timeout(message, timeout.min(SEND_WAIT)) {
                Ok(()) => {
                    self.outbox.sent(bytes, self.config.channel_capacity);
                    bump(&self.stats.messages, 1);
                    true
                }
                Err(SendTimeoutError::Timeout(message)) => {
                    self.outbox.push_front(message, bytes);
                    true
                }
                Err(SendTimeoutError::Disconnected(_)) => false,
            };
        }
        if self.behind() {
            // Read far enough ahead, the channel holding it: look again once the consumer
            // may have taken some (a change seen meanwhile is read then).
            std::thread::sleep(timeout.min(BACKLOG_WAIT));
            return true;
        }
        if self.changed_paths > 1 && self.busy.is_empty() {
            // Several files changed at once: many sessions are writing. Let the next batch
            // gather before looking, so that the wait below finds it ready: the thread (and
            // the consumer) wake once per STREAM_INTERVAL, not for each change.
            let since = self.last_batch.elapsed();
            if since < STREAM_INTERVAL {
                std::thread::sleep(STREAM_INTERVAL - since);
            }
        }
        self.poll_events(timeout);
        let changed = self.events.iter().any(|event| event.token() == INOTIFY);
        let followed = !self
            .inbox
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .follow
            .is_empty();
        if changed || followed {
            // If the last batch was only just handled, let more changes gather before
            // handling them (at most BATCH_INTERVAL later): a burst of writes to one file
            // is then one read. A lone change after a quiet spell is handled at once.
            let since = self.last_batch.elapsed();
            if since < BATCH_INTERVAL {
                std::thread::sleep(BATCH_INTERVAL - since);
            }
            self.last_batch = Instant::now();
        }
        true
    }

    /// Wait at most `timeout` for the waker or the inotify descriptor.
    fn poll_events(&mut self, timeout: Duration) {
        if let Err(err) = self.poll.poll(&mut self.events, Some(timeout))
            && err.kind() != std::io::ErrorKind::Interrupted
        {
            // Not expected; without a wait the loop would spin.
            tracing::warn!("tailer wait: {err}");
            std::thread::sleep(timeout.min(HOUSEKEEPING));
        }
    }

    /// Hand the outbox to the channel as far as it has room; `false` when disconnected.
    fn flush(&mut self) -> bool {
        while let Some((message, bytes)) = self.outbox.pop_front() {
            match self.sender.try_send(message) {
                Ok(()) => {
                    self.outbox.sent(bytes, self.config.channel_capacity);
                    bump(&self.stats.messages, 1);
                }
                Err(TrySendError::Full(message)) => {
                    self.outbox.push_front(message, bytes);
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

    /// Room for more of a backlog: few messages are on their way (in the outbox or the
    /// channel). A file with more to read is read only then, so a start-up backlog goes no
    /// faster than the consumer takes it, and at most about [`BACKLOG_IN_FLIGHT`] ×
    /// [`READ_BUDGET`](super::paths::READ_BUDGET) bytes of lines are held at once, not every file's backlog.
    fn backlog_room(&self) -> bool {
        self.outbox.len() + self.sender.len() < BACKLOG_IN_FLIGHT && !self.behind()
    }

    /// The consumer is behind: the outbox holds a channel's worth of messages, or the outbox
    /// and the channel together [`MAX_AHEAD_BYTES`] of lines. Reading stops until it catches
    /// up; what is written meanwhile waits on disk, the offsets where they are.
    pub(super) fn behind(&self) -> bool {
        self.outbox.len() >= self.config.channel_capacity.max(1)
            || self.outbox.bytes_ahead(self.sender.len()) >= MAX_AHEAD_BYTES
    }

    /// Read on from the files with more to read (or not read yet) while there is room.
    fn poll_busy(&mut self) {
        let busy: Vec<Arc<Path>> = self.busy.iter().cloned().collect();
        for path in busy {
            if !self.backlog_room() {
                break;
            }
            self.busy.remove(&path);
            self.poll_file(&path);
        }
    }

    /// Read what opencode wrote to its database since the last look, if it changed.
    fn poll_opencode(&mut self) {
        self.next_db_poll = Instant::now() + DB_POLL;
        let Some(follower) = self.opencode.as_mut() else {
            return;
        };
        let matcher = &self.matcher;
        let db = follower.db().to_owned();
        let select = |row: &crate::opencode::SessionRow| {
            matcher.decide_opencode(&db, &row.id, &row.directory)
        };
        let mut out = Vec::new();
        follower.poll(&select, !self.config.from_start, &mut out);
        if !db.exists() {
            // No opencode here (yet): looked for once a second, not ten times.
            self.next_db_poll = Instant::now() + DB_ABSENT_POLL;
        }
        for message in &out {
            if let TailMessage::Lines { lines, .. } = message {
                bump(&self.stats.lines, lines.len() as u64);
            }
        }
        self.outbox.extend(out);
    }

    fn take_changes(&mut self) {
        let mut failed = false;
        let (dirty, rescan, follow) = {
            let mut inbox = self
                .inbox
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            if let Some(watcher) = self.watcher.as_mut() {
                failed = !watcher.read(&mut inbox);
            }
            (
                std::mem::take(&mut inbox.dirty),
                std::mem::take(&mut inbox.rescan),
                std::mem::take(&mut inbox.follow),
            )
        };
        if failed {
            // The descriptor failed (it said why): poll from now on.
            self.watcher = None;
            self.fallback_poll = true;
        }
        for path in follow {
            self.add_file(&path);
        }
        if rescan {
            tracing::debug!("watcher asked for a rescan");
            self.poll_everything();
        }
        self.changed_paths = dirty.len();
        for (path, names_changed) in dirty {
            self.handle_path(&path, names_changed);
        }
        self.watch_failures();
    }
}
