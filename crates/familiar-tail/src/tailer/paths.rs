//! What a changed path means to the tailer: a meta file (agent type), a followed transcript
//! (poll it), a directory (activate roots, scan for new files), a new `*.jsonl` (ask the
//! [`Matcher`](crate::discovery::Matcher), follow it), or something that went away. Also the
//! roots' life (watched when they exist, their nearest ancestor watched until then) and the
//! poll loop's full pass.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::bump;
use super::dormant::Dormancy;
use super::run::{Found, RootState, Tailer};
use crate::discovery::{
    Matcher, TranscriptInfo, Verdict, WatchRoot, describe, read_agent_type, read_head_until,
    transcript_of_meta, walk,
};
use crate::file::{FileError, FileTail, Resume, Start};
use crate::message::TailMessage;

/// Bytes read from one file per turn of the loop, so one huge file cannot starve the rest
/// (and a backlog is held in memory a few of these at a time: see `run`).
pub(super) const READ_BUDGET: u64 = 256 << 10;

impl Tailer {
    pub(super) fn handle_path(&mut self, path: &Path, names_changed: bool) {
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
        // A symlink to a directory counts as the directory (a project's sessions kept on
        // another disk); a symlinked file is looked at as the files are.
        let is_dir = fs::symlink_metadata(path)
            .map(|meta| meta.is_dir() || (meta.file_type().is_symlink() && path.is_dir()));
        match is_dir {
            Ok(true) => {
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
            Ok(false) => {
                if crate::discovery::transcript_name(path) {
                    self.consider(path, Found::Later);
                }
            }
            Err(_) => {
                // A directory went away: its files notice on their own poll.
                let gone: Vec<Arc<Path>> = self
                    .files
                    .keys()
                    .filter(|file| file.starts_with(path))
                    .cloned()
                    .collect();
                for file in gone {
                    self.poll_file(&file);
                }
                self.undecided.retain(|file, _| !file.starts_with(path));
                self.forget_dormant_under(path);
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

    /// A file named at run time (a hook's `transcript_path`): select it and its subagents,
    /// watch the directories they live in, and follow them as if they had existed at start:
    /// what is on disk now is read silently as backlog, then [`TailMessage::CaughtUp`] is
    /// sent again. A file that does not exist yet is read from its first line once it
    /// appears, like any new transcript.
    pub(super) fn add_file(&mut self, path: &Path) {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if self.files.contains_key(&path) || self.wake_named(&path) {
            return;
        }
        // A file selected already is followed, or will be once it appears.
        let Some(roots) = self.matcher.add_file(&path) else {
            return;
        };
        tracing::info!("following {} as a hook named it", path.display());
        // What was turned down may be selected now.
        self.rejected.clear();
        for root in &roots {
            if !self.roots.iter().any(|r| r.root.path == root.path) {
                self.roots.push(RootState {
                    root: root.clone(),
                    active: false,
                });
            }
        }
        self.activate_roots(Found::AtStart);
        // Its directories may have been watched already, for other selectors.
        for root in roots {
            if root.path.is_dir() {
                self.scan(&root.path, false, Found::AtStart);
            }
        }
        if self.files.values().any(|tail| tail.in_backlog()) {
            self.catching_up = true;
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
        if agent_type != tail.described.agent_type {
            tail.described.agent_type.clone_from(&agent_type);
            // Before the first open, `Opened` carries it.
            if tail.is_open() {
                self.outbox.push_back(TailMessage::Meta {
                    path: Arc::clone(&tail.path),
                    agent_type,
                });
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
    pub(super) fn activate_roots(&mut self, found: Found) {
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
                    watcher.unwatch(&path);
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
            let result = watcher.watch(dir, recursive);
            if let Err(err) = result {
                self.cannot_watch(dir, &err);
            }
            self.watch_failures();
        }
        self.watched.insert(dir.to_path_buf(), recursive);
    }

    /// Directories below watched ones that the watcher could not watch: poll.
    pub(super) fn watch_failures(&mut self) {
        let failures = match self.watcher.as_mut() {
            Some(watcher) => watcher.take_failures(),
            None => return,
        };
        for (dir, err) in failures {
            self.cannot_watch(&dir, &err);
        }
    }

    /// Out of inotify watches, or not allowed: poll instead of missing changes.
    fn cannot_watch(&mut self, dir: &Path, err: &io::Error) {
        self.problem(dir, format!("cannot watch ({err}); polling instead"));
        self.fallback_poll = true;
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
        self.consider_waking(path, found, false);
    }

    /// [`Self::consider`] a dormant file named by a hook: read it now, written again or not.
    pub(super) fn consider_forced(&mut self, path: &Path) {
        self.consider_waking(path, Found::Later, true);
    }

    fn consider_waking(&mut self, path: &Path, found: Found, wake: bool) {
        if self.rejected.contains(path) || !self.under_active_root(path) {
            return;
        }
        let Some(mut info) = describe(path) else {
            return;
        };
        if info.cwd.is_none() {
            // An older Gemini CLI's session that names no path yet: its folder's hash does.
            info.cwd = self
                .matcher
                .gemini_hashed_project(path)
                .and_then(Path::to_str)
                .map(str::to_owned);
        }
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
        let woken = match self.dormancy(path, &info, &meta, found, wake) {
            Dormancy::No => None,
            Dormancy::Asleep => return,
            Dormancy::Woken(start) => Some(start),
        };
        let Some(resume) = self.renamed_from(path, &meta) else {
            return; // a second name of a file followed under its first
        };
        let start = match self.undecided.remove(path) {
            _ if resume.is_some() => resume.map_or(Start::Appeared, Start::Resume),
            _ if woken.is_some() => woken.unwrap_or(Start::Appeared),
            Some((start, size)) => {
                if size == meta.len() {
                    self.undecided.insert(path.to_path_buf(), (start, size));
                    return; // nothing new to decide on
                }
                start
            }
            None if found == Found::Later => Start::Appeared,
            None => match &self.config.resume {
                Some(points) => match points.get(path) {
                    // (At line 0 it was dormant: `dormancy` decided it.)
                    Some(&(identity, at)) if at.line > 0 => Start::Continue {
                        size: meta.len(),
                        identity,
                        at,
                    },
                    _ => Start::Existing {
                        size: meta.len(),
                        prime: None,
                    },
                },
                None => Start::Existing {
                    size: meta.len(),
                    prime: (!self.config.from_start).then_some(self.config.prime_bytes),
                },
            },
        };
        let verdict = match self.matcher.decide(&info, None) {
            Verdict::NeedRecords => {
                let read_head = |matcher: &Matcher| {
                    read_head_until(path, &mut |head| {
                        matcher.decide(&info, Some(head)) != Verdict::NeedRecords
                    })
                };
                let mut head = read_head(&self.matcher);
                if head.as_ref().is_err_and(crate::file::is_out_of_descriptors) {
                    // Out of descriptors: free some, then once more.
                    self.parking = true;
                    if self.park_idle(path) > 0 {
                        head = read_head(&self.matcher);
                    }
                }
                match head {
                    Ok(head) => self.matcher.decide(&info, Some(&head)),
                    Err(err) => return self.problem(path, format!("cannot read: {err}")),
                }
            }
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
        tracing::debug!("following {} ({start:?})", info.path.display());
        let last_generation = self.generations.get(&info.path).copied().unwrap_or(0);
        let tail = FileTail::new(info, start, last_generation, self.config.max_line_bytes);
        let path = Arc::clone(&tail.path);
        self.files.insert(Arc::clone(&path), Box::new(tail));
        bump(&self.stats.files, 1);
        if found == Found::AtStart {
            // Read in the loop: `spawn` returns as soon as every file is registered.
            self.busy.insert(path);
        } else {
            self.poll_file(&path);
        }
    }

    pub(super) fn poll_file(&mut self, path: &Path) {
        self.poll_file_checking(path, true);
    }

    fn poll_file_checking(&mut self, path: &Path, check_path: bool) {
        if self.behind()
            && let Some(path) = self.files.key(path)
        {
            // The consumer is behind: this file is read once it catches up (what was written
            // waits on disk, not in memory: thousands of sessions changing at once would
            // otherwise each put a read's worth here in one pass).
            self.busy.insert(Arc::clone(path));
            return;
        }
        let Some(tail) = self.files.get_mut(path) else {
            return;
        };
        let mut out = Vec::new();
        let result = tail.poll(&mut self.scratch, READ_BUDGET, check_path, &mut out);
        let resume = tail.take_resume();
        let generation = tail.generation();
        // Looked up first: most polls read lines of a generation already noted.
        if generation > 0 && self.generations.get(path) != Some(&generation) {
            self.generations.insert(Arc::clone(&tail.path), generation);
        }
        self.outbox.extend(out);
        match result {
            Err(err) if err.is_out_of_descriptors() => self.out_of_descriptors(path, check_path),
            Ok(polled) => {
                self.reclaim.note(polled.bytes);
                // A big line still being written moved to a bigger buffer: the old one goes
                // back now, not on top of the rest of the line.
                self.reclaim.freed(polled.freed);
                bump(&self.stats.bytes, polled.bytes);
                bump(&self.stats.lines, polled.lines);
                bump(&self.stats.too_long, polled.too_long);
                bump(&self.stats.generations, polled.generations);
                bump(&self.stats.lost_bytes, polled.lost_bytes);
                if !self.problems.is_empty() {
                    self.problems.remove(path); // a path that read again is no problem now
                }
                if polled.removed {
                    tracing::debug!("{} was removed", path.display());
                    self.files.remove(path);
                    self.busy.remove(path);
                } else if polled.more
                    && let Some(path) = self.files.key(path)
                {
                    self.busy.insert(Arc::clone(path));
                } else if self.parking
                    && let Some(tail) = self.files.get_mut(path)
                {
                    tail.park();
                }
            }
            Err(err) => {
                self.files.remove(path);
                self.busy.remove(path);
                self.problem(path, err_text(&err));
            }
        }
        if let Some(resume) = resume {
            self.left.insert(resume.identity, (resume, Instant::now()));
            // A name it was renamed to, seen first: its turn now.
            if let Some(name) = self.waiting_names.remove(&resume.identity) {
                self.consider(&name, Found::Later);
            }
        }
    }

    /// No descriptor for `path`: from now on close files between reads (said once), close
    /// the idle ones now, and try again; if none could be closed, try at housekeeping.
    fn out_of_descriptors(&mut self, path: &Path, check_path: bool) {
        if !self.parking {
            self.parking = true;
            let limit = crate::descriptors::open_file_limit()
                .map_or_else(|_| "?".to_owned(), |limit| limit.to_string());
            tracing::warn!(
                "{} transcripts are followed, more than this process may hold open (limit \
                 {limit}): each is now closed between reads and reopened when it changes",
                self.files.len()
            );
        }
        let freed = self.park_idle(path);
        if freed > 0 && !self.starved.contains(path) {
            // Once more, now that descriptors are free (not again: no loop on a full table).
            self.starved.insert(path.to_path_buf());
            self.poll_file_checking(path, check_path);
            if self.files.get(path).is_some_and(|tail| tail.is_open()) {
                self.starved.remove(path);
            }
        } else {
            self.starved.insert(path.to_path_buf());
        }
    }

    /// Park every followed file but `except` (a file with more to read reopens where it
    /// was, like any other); how many descriptors that freed.
    fn park_idle(&mut self, except: &Path) -> usize {
        self.files
            .iter_mut()
            .filter(|(path, _)| &***path != except)
            .map(|(_, tail)| tail.park())
            .filter(|closed| *closed)
            .count()
    }

    /// Is the file at `path` (named just now) one followed under another name, renamed?
    /// `Some(Some(resume))`: yes, and its old name was read to its end: go on from there;
    /// `Some(None)`: no; `None`: the same file still holds its old name too (a hard link),
    /// and is followed there.
    fn renamed_from(&mut self, path: &Path, meta: &fs::Metadata) -> Option<Option<Resume>> {
        use std::os::unix::fs::MetadataExt as _;
        let identity = (meta.dev(), meta.ino());
        if let Some((resume, _)) = self.left.remove(&identity) {
            return Some(Some(resume));
        }
        // The identity first: a path compares component by component, and every file found
        // at start-up is looked for among all those followed (5,000 files: 12 M comparisons).
        let Some(old) = self
            .files
            .iter()
            .find(|(other, tail)| tail.identity() == Some(identity) && &***other != path)
            .map(|(other, _)| other.clone())
        else {
            return Some(None);
        };
        // Not noticed under its old name yet: read that to its end (and see it gone) first.
        self.poll_file(&old);
        match self.left.remove(&identity) {
            Some((resume, _)) => Some(Some(resume)),
            None if self.files.contains_key(&old) => {
                // Still there (or its reading waits for the consumer): looked at again when
                // this name changes, or when the old one is gone.
                self.waiting_names.insert(identity, path.to_path_buf());
                None
            }
            None => Some(None),
        }
    }

    pub(super) fn housekeeping(&mut self) {
        // A name the file was renamed to shows up in the same batch of changes, or the same
        // poll pass: where reading stopped is not kept longer than this.
        self.left
            .retain(|_, (_, at)| at.elapsed() < super::run::RENAME_MEMORY);
        let files = &self.files;
        self.waiting_names.retain(|identity, _| {
            files
                .values()
                .any(|tail| tail.identity() == Some(*identity))
        });
        // Lines read are freed by their consumer; what this thread allocated for them goes
        // back to the system from here (familiar_model::memory).
        if self.busy.is_empty() {
            self.reclaim.idle();
        }
        let starved: Vec<PathBuf> = self.starved.drain().collect();
        for path in starved {
            self.poll_file(&path);
        }
        if self.roots.iter().any(|r| !r.active) {
            self.activate_roots(Found::Later);
        }
        self.check_vanished_roots();
    }

    /// The poll loop's turn (and the answer to an inotify queue overflow): every followed
    /// file, then every watched directory for new files.
    pub(super) fn poll_everything(&mut self) {
        let known: Vec<Arc<Path>> = self.files.keys().cloned().collect();
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

/// The error and its cause on one line (a `Problem` is read without a source chain).
fn err_text(err: &FileError) -> String {
    match err {
        FileError::NotRegular => err.to_string(),
        FileError::Unreadable(io) => format!("{err}: {io}"),
    }
}

fn nearest_existing_ancestor(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.is_dir())
        .map(Path::to_path_buf)
}
