//! The model's followed files ([`crate::file::FileState`]), by id, and which of them a tick
//! must look at.
//!
//! Lines come in runs of one file, and 200 live sessions send thousands a second: a lookup
//! by path (a `BTreeMap` of paths compares them component by component) happens once per
//! run, through a one-entry cache, and the model then works on a [`FileId`]. Iteration stays
//! in path order, so whatever the model does to several files at once happens in the same
//! order as ever.
//!
//! A tick visits only the files that may have something due ([`FileTable::due`]): those
//! changed by an input since the last tick, and those whose next timer threshold (quiet-turn
//! or idle time after their last activity, [`FileTable::schedule`]) has come. Between two
//! thresholds, a tick's look at a file that no input changed finds nothing to do: the timers
//! are step functions of the time since the last activity, and a look that acted once (an
//! event, a flush, a release) leaves nothing for the next look in the same step.

use std::borrow::Borrow;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use crate::file::FileState;

/// A followed file, while it is followed (ids of removed files are reused).
pub type FileId = usize;

#[derive(Debug)]
struct Slot {
    path: Arc<Path>,
    /// Boxed: a `FileState` is 800 bytes, and a vector of them grown by doubling kept up to
    /// twice that per session (and both copies while it moved: 7 MB at 5,000 sessions).
    file: Box<FileState>,
    /// In [`FileTable::changed`] already.
    changed: bool,
    /// The time of its entry in the timer queue that counts (older entries are skipped).
    queued: Option<SystemTime>,
}

/// A followed path for lookups, hashed (with foldhash) and compared as its bytes. `Path`'s
/// own `Hash` and `Eq` walk it component by component, and with SipHash were most of a lookup
/// (4 % of a watcher's main thread at 1,000 live sessions, where the one-entry cache misses).
/// A file's path comes from the tailer, built one way, so its bytes identify it.
#[derive(Debug)]
struct PathBytes(Arc<Path>);

impl PathBytes {
    fn bytes(&self) -> &[u8] {
        self.0.as_os_str().as_encoded_bytes()
    }
}

impl Hash for PathBytes {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.bytes().hash(state);
    }
}

impl PartialEq for PathBytes {
    fn eq(&self, other: &PathBytes) -> bool {
        self.bytes() == other.bytes()
    }
}

impl Eq for PathBytes {}

/// Looked up as bytes: hashed as a `PathBytes` is.
impl Borrow<[u8]> for PathBytes {
    fn borrow(&self) -> &[u8] {
        self.bytes()
    }
}

#[derive(Debug, Default)]
pub struct FileTable {
    slots: Vec<Option<Slot>>,
    free: Vec<FileId>,
    by_path: BTreeMap<Arc<Path>, FileId>,
    /// The same, for lookups: a path compares component by component, and a `BTreeMap`'s
    /// ten or so comparisons a line were a twentieth of a watcher's time at 1,000 sessions.
    ids: HashMap<PathBytes, FileId, foldhash::fast::RandomState>,
    /// The last path looked up, and its id.
    last: Option<(Arc<Path>, FileId)>,
    /// Files an input changed since the last tick.
    changed: Vec<FileId>,
    /// Next timer thresholds, earliest first.
    queue: BinaryHeap<Reverse<(SystemTime, FileId)>>,
    /// Every tick looks at every file, as before this table: the reference the tests hold
    /// the due files to.
    #[cfg(test)]
    pub scan_all: bool,
}

impl FileTable {
    /// The id of the file followed at `path`.
    pub fn id(&mut self, path: &Path) -> Option<FileId> {
        if let Some((last, id)) = &self.last
            && last.as_os_str().as_encoded_bytes() == path.as_os_str().as_encoded_bytes()
        {
            return Some(*id);
        }
        let (key, &id) = self
            .ids
            .get_key_value(path.as_os_str().as_encoded_bytes())?;
        self.last = Some((Arc::clone(&key.0), id));
        Some(id)
    }

    pub fn get(&self, id: FileId) -> Option<&FileState> {
        self.slot(id).map(|slot| &*slot.file)
    }

    pub fn get_mut(&mut self, id: FileId) -> Option<&mut FileState> {
        self.slots
            .get_mut(id)
            .and_then(Option::as_mut)
            .map(|slot| &mut *slot.file)
    }

    pub fn path(&self, id: FileId) -> Option<&Arc<Path>> {
        self.slot(id).map(|slot| &slot.path)
    }

    fn slot(&self, id: FileId) -> Option<&Slot> {
        self.slots.get(id).and_then(Option::as_ref)
    }

    /// Follow a new file at `path` (none is followed there: see [`FileTable::remove`]); it is
    /// looked at on the next tick.
    pub fn insert(&mut self, path: &Path, file: FileState) -> FileId {
        let path: Arc<Path> = Arc::from(path);
        let slot = Slot {
            path: Arc::clone(&path),
            file: Box::new(file),
            changed: false,
            queued: None,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id] = Some(slot);
                id
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        };
        self.ids.insert(PathBytes(Arc::clone(&path)), id);
        self.by_path.insert(path, id);
        self.changed(id);
        id
    }

    /// Stop following a file; its state is returned.
    pub fn remove(&mut self, id: FileId) -> Option<FileState> {
        let slot = self.slots.get_mut(id)?.take()?;
        self.by_path.remove(&slot.path);
        self.ids.remove(slot.path.as_os_str().as_encoded_bytes());
        if self.last.as_ref().is_some_and(|(_, last)| *last == id) {
            self.last = None;
        }
        self.free.push(id);
        Some(*slot.file)
    }

    /// Every file, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (FileId, &Arc<Path>, &FileState)> {
        self.by_path
            .iter()
            .filter_map(|(path, &id)| Some((id, path, self.get(id)?)))
    }

    /// Every file's id, in path order.
    pub fn ids(&self) -> Vec<FileId> {
        self.by_path.values().copied().collect()
    }

    /// An input changed the file: the next tick looks at it.
    pub fn changed(&mut self, id: FileId) {
        if let Some(slot) = self.slots.get_mut(id).and_then(Option::as_mut)
            && !slot.changed
        {
            slot.changed = true;
            self.changed.push(id);
        }
    }

    /// The files a tick at `now` must look at, in path order: changed since the last tick,
    /// or with a timer threshold at or before `now`.
    pub fn due(&mut self, now: SystemTime) -> Vec<FileId> {
        let mut due = std::mem::take(&mut self.changed);
        while let Some(&Reverse((at, id))) = self.queue.peek() {
            if at > now {
                break;
            }
            self.queue.pop();
            if let Some(slot) = self.slots.get_mut(id).and_then(Option::as_mut)
                && slot.queued == Some(at)
            {
                slot.queued = None;
                due.push(id);
            }
        }
        due.retain(|&id| {
            self.slots
                .get_mut(id)
                .and_then(Option::as_mut)
                .map(|slot| slot.changed = false)
                .is_some()
        });
        due.sort_by(|&a, &b| self.path(a).cmp(&self.path(b)));
        due.dedup();
        #[cfg(test)]
        if self.scan_all {
            return self.ids();
        }
        due
    }

    /// Look at the file again at `at` (its next timer threshold) unless an earlier look is
    /// due already.
    pub fn schedule(&mut self, id: FileId, at: SystemTime) {
        let Some(slot) = self.slots.get_mut(id).and_then(Option::as_mut) else {
            return;
        };
        if slot.queued.is_none_or(|queued| at < queued) {
            slot.queued = Some(at);
            self.queue.push(Reverse((at, id)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::FileInfo;
    use familiar_transcript::NormalizerConfig;

    fn file() -> FileState {
        FileState::new(FileInfo::unknown(), &NormalizerConfig::default())
    }

    #[test]
    fn a_path_is_found_by_its_bytes_until_it_is_removed() {
        let mut table = FileTable::default();
        let a = table.insert(Path::new("/p/a.jsonl"), file());
        let b = table.insert(Path::new("/p/b.jsonl"), file());
        assert_ne!(a, b);
        // Each lookup misses the one-entry cache of the one before.
        for _ in 0..2 {
            assert_eq!(table.id(Path::new("/p/a.jsonl")), Some(a));
            assert_eq!(table.id(Path::new("/p/b.jsonl")), Some(b));
        }
        assert_eq!(table.id(Path::new("/p/c.jsonl")), None);
        assert_eq!(table.remove(b).map(|_| ()), Some(()));
        assert_eq!(table.id(Path::new("/p/b.jsonl")), None);
        assert_eq!(table.id(Path::new("/p/a.jsonl")), Some(a));
        // The id is taken again, by another path.
        let c = table.insert(Path::new("/p/c.jsonl"), file());
        assert_eq!(c, b);
        assert_eq!(table.id(Path::new("/p/c.jsonl")), Some(c));
        assert_eq!(
            table.path(c).map(|path| path.to_path_buf()),
            Some("/p/c.jsonl".into())
        );
    }
}
