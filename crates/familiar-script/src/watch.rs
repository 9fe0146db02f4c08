//! Hot reload plumbing: [`ScriptWatcher`] reports which `.rhai` files changed, and
//! [`crate::ScriptHost::reload_changed`] reloads the scripts concerned.
//!
//! The watcher watches the directories of the scripts (not the files: editors save by writing a
//! temporary file and renaming it over the old one, which would end a watch on the file itself)
//! through the `notify` crate, and forwards the paths of changed `.rhai` files on a channel.
//! Reading a file generates access events, so only creations and content or name changes
//! count; otherwise every reload would trigger the next.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};
use notify::event::ModifyKind;
use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// Why watching could not start. The watcher's error is part of the message (`cause`), not a
/// `source`, so it is printed once however the error is shown.
#[derive(Debug, thiserror::Error)]
#[error("cannot watch {}: {cause}", path.display())]
pub struct WatchError {
    pub path: PathBuf,
    pub cause: notify::Error,
}

/// Watches the directories of script files for changes to `.rhai` files.
pub struct ScriptWatcher {
    // Dropping the watcher stops the notifications; it is kept only for that.
    _watcher: RecommendedWatcher,
    /// One message per change: lets a caller wake up in a `select!`.
    rx: Receiver<PathBuf>,
    /// Every changed path until taken, so a message consumed by a `select!` loses nothing.
    pending: Arc<Mutex<BTreeSet<PathBuf>>>,
    dirs: Vec<PathBuf>,
}

impl std::fmt::Debug for ScriptWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptWatcher")
            .field("dirs", &self.dirs)
            .finish_non_exhaustive()
    }
}

fn is_change(kind: &EventKind) -> bool {
    match kind {
        EventKind::Create(_) | EventKind::Remove(_) => true,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Modify(_) => true,
        _ => false,
    }
}

fn is_script(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "rhai")
}

impl ScriptWatcher {
    /// Watch the directories holding `scripts`.
    pub fn new(scripts: &[PathBuf]) -> Result<ScriptWatcher, WatchError> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let pending: Arc<Mutex<BTreeSet<PathBuf>>> = Arc::default();
        let sink = Arc::clone(&pending);
        let mut watcher =
            notify::recommended_watcher(move |result: notify::Result<notify::Event>| {
                let Ok(event) = result else { return };
                if !is_change(&event.kind) {
                    return;
                }
                for path in event.paths.into_iter().filter(|p| is_script(p)) {
                    lock(&sink).insert(path.clone());
                    // The receiver is gone only when the watcher is being dropped.
                    let _ = tx.send(path);
                }
            })
            .map_err(|cause| WatchError {
                path: PathBuf::new(),
                cause,
            })?;
        let mut dirs: Vec<PathBuf> = Vec::new();
        for script in scripts {
            let dir = match script.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            if dirs.contains(&dir) {
                continue;
            }
            watcher
                .watch(&dir, RecursiveMode::NonRecursive)
                .map_err(|cause| WatchError {
                    path: dir.clone(),
                    cause,
                })?;
            dirs.push(dir);
        }
        Ok(ScriptWatcher {
            _watcher: watcher,
            rx,
            pending,
            dirs,
        })
    }

    /// Wait up to `timeout` for a change, then keep collecting for `settle` after the last
    /// one (an editor's save is several events). Returns the distinct changed files, empty on
    /// timeout.
    pub fn wait_changes(&self, timeout: Duration, settle: Duration) -> Vec<PathBuf> {
        if lock(&self.pending).is_empty() && self.rx.recv_timeout(timeout).is_err() {
            return Vec::new();
        }
        let mut deadline = Instant::now() + settle;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(_) => deadline = Instant::now() + settle,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        self.try_changes()
    }

    /// The files changed since the last call, without waiting (including those whose message
    /// a caller already took from [`ScriptWatcher::receiver`]).
    pub fn try_changes(&self) -> Vec<PathBuf> {
        // Drop the wake-up messages first: a change arriving in between stays pending.
        while self.rx.try_recv().is_ok() {}
        std::mem::take(&mut *lock(&self.pending))
            .into_iter()
            .collect()
    }

    /// Wakes up on each change, for a `select!` loop in the caller; then call
    /// [`ScriptWatcher::try_changes`] for the paths.
    pub fn receiver(&self) -> &Receiver<PathBuf> {
        &self.rx
    }
}

fn lock(set: &Mutex<BTreeSet<PathBuf>>) -> std::sync::MutexGuard<'_, BTreeSet<PathBuf>> {
    set.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
