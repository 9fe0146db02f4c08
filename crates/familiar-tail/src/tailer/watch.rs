//! The tailer's own inotify watcher (the `inotify` crate; no watcher thread): the tailer
//! thread waits on the inotify descriptor itself (with `mio`, beside the waker that
//! [`super::Stopper`] and [`super::TailerHandle::follow`] use), and [`InotifyWatcher::read`]
//! drains every queued event at once into the [`Inbox`]'s set of changed paths, so a burst of
//! writes to one file becomes one read of it (see `run`). What a changed path means is
//! `paths`' business.
//!
//! Recursive watches are built here: every directory below a recursive root is watched, down
//! to the depth [`crate::discovery::walk`] visits (directory symlinks are not followed, as
//! there), and directories created or moved in later are watched as their events come in.
//! A directory moved away loses its watches (its events would carry its old path). The queue
//! overflowing asks the tailer for a full rescan.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::os::fd::AsRawFd as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

use super::run::Inbox;
use crate::discovery::scan::MAX_DEPTH;
use crate::path_map::PathMap;

/// What is asked of the kernel. No `CLOSE_WRITE`: every change of the data (appends,
/// truncation through `open(O_TRUNC)` or `truncate`) comes as `MODIFY` already, and our own
/// opens and closes (reads) are not asked for.
const MASK: WatchMask = WatchMask::MODIFY
    .union(WatchMask::ATTRIB)
    .union(WatchMask::CREATE)
    .union(WatchMask::DELETE)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::DONT_FOLLOW)
    .union(WatchMask::ONLYDIR);

/// Room for a few hundred events per `read`; the loop reads until the queue is empty.
const BUFFER: usize = 64 << 10;

#[derive(Debug)]
struct Dir {
    path: PathBuf,
    wd: WatchDescriptor,
    /// How many levels below this one are watched too (`None`: not recursive).
    depth_left: Option<usize>,
}

/// One inotify instance and the directories it watches.
pub(super) struct InotifyWatcher {
    inotify: Inotify,
    /// By watch descriptor number.
    dirs: HashMap<i32, Dir>,
    /// Path to watch descriptor number.
    by_path: PathMap<i32>,
    buffer: Vec<u8>,
    /// Directories that could not be watched since last asked ([`Self::take_failures`]).
    failures: Vec<(PathBuf, io::Error)>,
}

impl std::fmt::Debug for InotifyWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InotifyWatcher")
            .field("fd", &self.inotify.as_raw_fd())
            .field("dirs", &self.by_path.len())
            .finish()
    }
}

impl InotifyWatcher {
    pub(super) fn new() -> io::Result<InotifyWatcher> {
        Ok(InotifyWatcher {
            inotify: Inotify::init()?,
            dirs: HashMap::new(),
            by_path: PathMap::default(),
            buffer: vec![0; BUFFER],
            failures: Vec::new(),
        })
    }

    pub(super) fn raw_fd(&self) -> i32 {
        self.inotify.as_raw_fd()
    }

    /// Watch `dir`, and with `recursive` every directory below it. An error for `dir` itself
    /// is returned; errors below it are kept for [`Self::take_failures`].
    pub(super) fn watch(&mut self, dir: &Path, recursive: bool) -> io::Result<()> {
        let depth_left = recursive.then_some(MAX_DEPTH);
        self.add(dir, depth_left)?;
        if let Some(depth) = depth_left {
            self.add_below(dir, depth);
        }
        Ok(())
    }

    /// Stop watching `dir` and everything watched below it.
    pub(super) fn unwatch(&mut self, dir: &Path) {
        let gone: Vec<Arc<Path>> = self
            .by_path
            .keys()
            .filter(|path| path.starts_with(dir))
            .cloned()
            .collect();
        for path in gone {
            if let Some(id) = self.by_path.remove(&path)
                && let Some(watched) = self.dirs.remove(&id)
            {
                // Fails when the kernel dropped it already (the directory is gone).
                let _ = self.inotify.watches().remove(watched.wd);
            }
        }
    }

    /// Directories below a watched one that could not be watched, since the last call.
    pub(super) fn take_failures(&mut self) -> Vec<(PathBuf, io::Error)> {
        std::mem::take(&mut self.failures)
    }

    fn add(&mut self, dir: &Path, depth_left: Option<usize>) -> io::Result<()> {
        // A symlinked directory (a project's sessions on another disk) is watched through
        // the link; any other path is never followed.
        let mask = if is_symlink(dir) {
            MASK & !WatchMask::DONT_FOLLOW
        } else {
            MASK
        };
        let wd = self.inotify.watches().add(dir, mask)?;
        let id = wd.get_watch_descriptor_id();
        // The same directory (inode) again: one descriptor, the deepest watch wins.
        let depth_left = match self.dirs.get(&id) {
            Some(old) if old.path == dir => old.depth_left.max(depth_left),
            _ => depth_left,
        };
        if let Some(old) = self.dirs.insert(
            id,
            Dir {
                path: dir.to_path_buf(),
                wd,
                depth_left,
            },
        ) && old.path != dir
        {
            self.by_path.remove(&old.path);
        }
        self.by_path.insert(dir.to_path_buf(), id);
        Ok(())
    }

    /// Watch the directories below `dir` (`depth` levels of them may hold more).
    fn add_below(&mut self, dir: &Path, depth: usize) {
        if depth == 0 {
            return;
        }
        let Ok(entries) = fs::read_dir(dir) else {
            return; // gone again, or unreadable: the scan reports that
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry
                .file_type()
                .is_ok_and(|kind| kind.is_dir() || (kind.is_symlink() && path.is_dir()))
            {
                match self.add(&path, Some(depth - 1)) {
                    Ok(()) => self.add_below(&path, depth - 1),
                    Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                    Err(err) => self.failures.push((path, err)),
                }
            }
        }
    }

    /// Drain every queued event into `inbox` (changed paths, each once); new directories
    /// below recursive watches are watched on the way. Returns `false` when the descriptor
    /// failed (the caller then polls).
    pub(super) fn read(&mut self, inbox: &mut Inbox) -> bool {
        let mut new_dirs = Vec::new();
        let mut moved_away = Vec::new();
        loop {
            let events = match self.inotify.read_events(&mut self.buffer) {
                Ok(events) => events,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    tracing::warn!("inotify: {err}");
                    inbox.rescan = true;
                    return false;
                }
            };
            for event in events {
                if event.mask.contains(EventMask::Q_OVERFLOW) {
                    tracing::debug!("inotify queue overflowed");
                    inbox.rescan = true;
                    continue;
                }
                let id = event.wd.get_watch_descriptor_id();
                let Some(dir) = self.dirs.get(&id) else {
                    continue; // a watch removed since
                };
                if event.mask.contains(EventMask::IGNORED) {
                    // The kernel dropped the watch (the directory was deleted).
                    let dir = self.dirs.remove(&id).map(|dir| dir.path);
                    if let Some(path) = dir
                        && self.by_path.get(&path) == Some(&id)
                    {
                        self.by_path.remove(&path);
                    }
                    continue;
                }
                let path = match event.name {
                    Some(name) => dir.path.join(name),
                    None => dir.path.clone(),
                };
                // A symlink to a directory made or moved in is a directory to watch too.
                let linked_dir = !event.mask.contains(EventMask::ISDIR)
                    && event.name.is_some()
                    && event
                        .mask
                        .intersects(EventMask::CREATE | EventMask::MOVED_TO)
                    && is_symlink(&path)
                    && path.is_dir();
                if linked_dir && let Some(depth) = dir.depth_left.filter(|&depth| depth > 0) {
                    new_dirs.push((path.clone(), depth - 1));
                }
                if event.mask.contains(EventMask::ISDIR) && event.name.is_some() {
                    if event
                        .mask
                        .intersects(EventMask::CREATE | EventMask::MOVED_TO)
                    {
                        if let Some(depth) = dir.depth_left.filter(|&depth| depth > 0) {
                            new_dirs.push((path.clone(), depth - 1));
                        }
                    } else if event.mask.contains(EventMask::MOVED_FROM) {
                        moved_away.push(path.clone());
                    }
                }
                let data_only = event.mask == EventMask::MODIFY;
                *inbox.dirty.get_or_insert_with(path, || false) |= !data_only;
            }
        }
        for path in moved_away {
            self.unwatch(&path);
        }
        for (path, depth) in new_dirs {
            match self.add(&path, Some(depth)) {
                Ok(()) => self.add_below(&path, depth),
                Err(err) if err.kind() == io::ErrorKind::NotFound => {}
                Err(err) => self.failures.push((path, err)),
            }
        }
        true
    }
}

/// Is `path` a symlink (not followed)?
fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}
