//! The I/O edge of save files: [`load`] reads one and sets a rejected one aside (a rename
//! beside it, never a deletion), [`save`] writes atomically (a temporary file in the same
//! directory, flushed, then renamed over the old one, so a crash or a full disk leaves either
//! the old file or the new one, never half of one). Errors are one line each, for the caller
//! to print once ([`FailureGate`]) before going on.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::format::{self, Rejected, Versioned};

/// Familiar's data directory: `$XDG_DATA_HOME/familiar`, else `~/.local/share/familiar` (on
/// Linux). `None` when no home directory is known.
pub fn data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "familiar").map(|dirs| dirs.data_dir().to_path_buf())
}

/// Why [`load`] returned no value although a file was there.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: {problem}; moved it to {} and starting afresh", path.display(), moved.display())]
    SetAside {
        path: PathBuf,
        problem: Rejected,
        moved: PathBuf,
    },
    #[error(
        "{}: {problem}, and it could not be moved aside ({cause}); starting afresh without \
         saving over it", path.display()
    )]
    NotSetAside {
        path: PathBuf,
        problem: Rejected,
        cause: String,
    },
    #[error("{}: cannot read ({cause}); starting afresh without saving over it", path.display())]
    Read {
        path: PathBuf,
        cause: std::io::Error,
    },
}

impl LoadError {
    /// Whether the caller may save to the path: not while a file it could not read or move
    /// is still there (saving would replace it).
    pub fn may_save(&self) -> bool {
        matches!(self, LoadError::SetAside { .. })
    }
}

/// The largest save file [`load`] reads (a store or a progression is a few kilobytes; one
/// past this is damage or an attack, set aside like a corrupt one).
pub const MAX_SAVE_BYTES: u64 = 16 * 1024 * 1024;

/// Reads the whole of `path` if it is a regular file (through symlinks) of at most `max`
/// bytes. Anything else is refused before it is read from: a FIFO would block the reader for
/// ever, a device such as `/dev/zero` would fill memory. A file that grows past `max` while
/// it is read is refused too (`ErrorKind::FileTooLarge`); not a regular file is
/// `ErrorKind::InvalidInput`.
pub fn read_regular(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let not_regular = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, a device or a directory is never read)",
        )
    };
    let too_large = || {
        std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            format!("larger than the {} bytes read at most", max),
        )
    };
    // Stat before opening: opening a FIFO for reading waits for a writer.
    let before = std::fs::metadata(path)?;
    if !before.is_file() {
        return Err(not_regular());
    }
    if before.len() > max {
        return Err(too_large());
    }
    let file = std::fs::File::open(path)?;
    // The path may have been swapped between the two looks: trust only the open file.
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(before.len()).unwrap_or(0));
    file.take(max.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Reads the value saved at `path`: `Ok(None)` when there is no file yet. A file that cannot
/// be decoded, or that is larger than [`MAX_SAVE_BYTES`], is renamed aside (see
/// [`format::set_aside_path`]) and reported; one that is not a regular file (a FIFO, a
/// device) is not read, not moved, and not saved over.
pub fn load<T: Versioned>(path: &Path) -> Result<Option<T>, LoadError> {
    let bytes = match read_regular(path, MAX_SAVE_BYTES) {
        Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
            return set_aside(
                path,
                Rejected::TooLarge {
                    max: MAX_SAVE_BYTES,
                },
            );
        }
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(cause) => {
            return Err(LoadError::Read {
                path: path.to_owned(),
                cause,
            });
        }
    };
    match format::decode::<T>(&bytes) {
        Ok(value) => Ok(Some(value)),
        Err(problem) => set_aside(path, problem),
    }
}

/// Renames the rejected file at `path` aside, and says so.
fn set_aside<T>(path: &Path, problem: Rejected) -> Result<Option<T>, LoadError> {
    let Some(moved) = format::set_aside_path(path, &problem, |p| {
        // A dangling symlink is taken too: never rename over anything.
        p.symlink_metadata().is_ok()
    }) else {
        return Err(LoadError::NotSetAside {
            path: path.to_owned(),
            problem,
            cause: "every set-aside name is taken".to_owned(),
        });
    };
    match std::fs::rename(path, &moved) {
        Ok(()) => Err(LoadError::SetAside {
            path: path.to_owned(),
            problem,
            moved,
        }),
        Err(cause) => Err(LoadError::NotSetAside {
            path: path.to_owned(),
            problem,
            cause: cause.to_string(),
        }),
    }
}

/// Why [`save`] could not write.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("cannot save {}: {cause}", path.display())]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error("cannot save {}: {cause}", path.display())]
    Encode {
        path: PathBuf,
        cause: serde_json::Error,
    },
}

impl SaveError {
    /// The I/O error kind, if it was one (`StorageFull`, `PermissionDenied`, ...).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            SaveError::Io { cause, .. } => Some(cause.kind()),
            SaveError::Encode { .. } => None,
        }
    }
}

/// The temporary file [`save`] writes before renaming: hidden, beside `path`, and per process
/// (two Familiars saving at once each rename a whole file; the last one wins).
pub fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Writes `value` to `path` atomically, creating its directory if needed.
pub fn save<T: Versioned>(path: &Path, value: &T) -> Result<(), SaveError> {
    let bytes = format::encode(value).map_err(|cause| SaveError::Encode {
        path: path.to_owned(),
        cause,
    })?;
    let io = |cause| SaveError::Io {
        path: path.to_owned(),
        cause,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let tmp = temp_path(path);
    let written = std::fs::File::create(&tmp).and_then(|mut file| {
        file.write_all(&bytes)?;
        file.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&tmp, path));
    if renamed.is_err() {
        // Best effort: leave no temporary file behind (it may not exist).
        let _ = std::fs::remove_file(&tmp);
    }
    renamed.map_err(io)
}

/// The lock file beside `path` that [`update`] holds while it reads, merges and writes:
/// hidden, and never removed (removing it would let two holders lock two files).
pub fn lock_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.lock"))
}

/// Saves what `merge` makes of the value saved at `path` now (`None`: no file, or one set
/// aside), all under an exclusive lock beside it ([`lock_path`]): two Familiars sharing the
/// file each merge into the other's last save instead of writing over it. Returns the value
/// saved.
pub fn update<T: Versioned>(
    path: &Path,
    merge: impl FnOnce(Option<T>) -> T,
) -> Result<T, SaveError> {
    use std::os::fd::AsRawFd as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let io = |cause| SaveError::Io {
        path: path.to_owned(),
        cause,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(lock_path(path))
        .map_err(io)?;
    // SAFETY: flock on a descriptor this function owns; released when `lock` is closed.
    while unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(io(err));
        }
    }
    let current = match load::<T>(path) {
        Ok(value) => value,
        Err(err) if err.may_save() => {
            tracing::warn!("{err}");
            None
        }
        // Neither readable nor movable: never saved over.
        Err(err) => return Err(io(std::io::Error::other(err.to_string()))),
    };
    let merged = merge(current);
    save(path, &merged)?;
    drop(lock);
    Ok(merged)
}

/// Lets the first of a run of identical failures through, so a read-only directory or a full
/// disk is one line, not one per save; a success opens the gate again.
#[derive(Debug, Clone, Default)]
pub struct FailureGate {
    failing: bool,
}

impl FailureGate {
    /// The error to print, if any.
    pub fn note<E>(&mut self, result: Result<(), E>) -> Option<E> {
        match result {
            Ok(()) => {
                self.failing = false;
                None
            }
            Err(e) if !self.failing => {
                self.failing = true;
                Some(e)
            }
            Err(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Note {
        text: String,
    }

    impl Versioned for Note {
        const KIND: &'static str = "note";
        const VERSION: u32 = 1;
    }

    fn note(text: &str) -> Note {
        Note {
            text: text.to_owned(),
        }
    }

    fn dir() -> tempfile::TempDir {
        match tempfile::tempdir() {
            Ok(dir) => dir,
            Err(e) => panic!("tempdir: {e}"),
        }
    }

    #[test]
    fn save_then_load_round_trips_and_leaves_no_temporary_file() {
        let dir = dir();
        let path = dir.path().join("deep/er/note.json");
        assert!(load::<Note>(&path).is_ok_and(|n| n.is_none()));
        assert!(save(&path, &note("one")).is_ok());
        assert!(save(&path, &note("two")).is_ok());
        assert_eq!(load::<Note>(&path).ok().flatten(), Some(note("two")));
        assert_eq!(
            familiar_testkit::file_names(&dir.path().join("deep/er")),
            ["note.json"]
        );
    }

    #[test]
    fn a_corrupt_file_is_moved_aside_not_deleted() {
        let dir = dir();
        let path = dir.path().join("note.json");
        assert!(std::fs::write(&path, "{\"familiar\": \"note\", \"vers").is_ok());
        let err = load::<Note>(&path).err();
        let message = err.as_ref().map(|e| e.to_string()).unwrap_or_default();
        assert!(message.contains("damaged"), "{message}");
        assert!(message.contains("note.json.corrupt"), "{message}");
        assert!(!message.contains('\n'), "one line: {message}");
        assert!(err.is_some_and(|e| e.may_save()));
        assert_eq!(
            familiar_testkit::file_names(dir.path()),
            ["note.json.corrupt"]
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("note.json.corrupt")).ok(),
            Some("{\"familiar\": \"note\", \"vers".to_owned())
        );
        // Play goes on: the next save writes a fresh file, the set-aside one stays.
        assert!(save(&path, &note("fresh")).is_ok());
        assert!(std::fs::write(&path, "also broken").is_ok());
        assert!(load::<Note>(&path).is_err());
        assert_eq!(
            familiar_testkit::file_names(dir.path()),
            ["note.json.corrupt", "note.json.corrupt-2"]
        );
    }

    #[test]
    fn a_newer_file_is_moved_aside_with_a_message_saying_so() {
        let dir = dir();
        let path = dir.path().join("note.json");
        let newer = r#"{"familiar": "note", "version": 2, "data": {"text": "from the future"}}"#;
        assert!(std::fs::write(&path, newer).is_ok());
        let message = load::<Note>(&path)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(message.contains("newer Familiar"), "{message}");
        assert_eq!(
            familiar_testkit::file_names(dir.path()),
            ["note.json.newer"]
        );
    }

    #[test]
    fn an_unreadable_file_is_left_alone_and_not_saved_over() {
        let dir = dir();
        // A directory where the file should be: reading fails with an I/O error.
        let path = dir.path().join("note.json");
        assert!(std::fs::create_dir(&path).is_ok());
        let err = load::<Note>(&path).err();
        assert!(matches!(err, Some(LoadError::Read { .. })), "{err:?}");
        assert!(err.is_some_and(|e| !e.may_save()));
        assert!(path.is_dir());
    }

    /// `load` on another thread, with a deadline: a FIFO must not block it.
    fn load_within_a_second(path: &Path) -> Option<Result<Option<Note>, LoadError>> {
        let (tx, rx) = std::sync::mpsc::channel();
        let path = path.to_owned();
        std::thread::spawn(move || {
            let _ = tx.send(load::<Note>(&path));
        });
        rx.recv_timeout(std::time::Duration::from_secs(1)).ok()
    }

    #[test]
    fn a_fifo_or_a_device_is_refused_at_once_and_left_alone() {
        let dir = dir();
        let fifo = dir.path().join("note.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let err = load_within_a_second(&fifo).and_then(Result::err);
        let message = err.as_ref().map(ToString::to_string).unwrap_or_default();
        assert!(message.contains("not a regular file"), "{message}");
        assert!(err.is_some_and(|e| !e.may_save()));

        // A symlink to /dev/zero would fill memory if it were read.
        let zero = dir.path().join("zero.json");
        assert!(std::os::unix::fs::symlink("/dev/zero", &zero).is_ok());
        let err = load_within_a_second(&zero).and_then(Result::err);
        assert!(matches!(err, Some(LoadError::Read { .. })), "{err:?}");
        assert_eq!(
            familiar_testkit::file_names(dir.path()),
            ["note.json", "zero.json"]
        );
    }

    #[test]
    fn a_huge_file_is_set_aside_unread() {
        let dir = dir();
        let path = dir.path().join("note.json");
        // Sparse: 1 GiB on paper, nothing on disk.
        let made = std::fs::File::create(&path).and_then(|f| f.set_len(1 << 30));
        assert!(made.is_ok());
        let err = load::<Note>(&path).err();
        let message = err.as_ref().map(ToString::to_string).unwrap_or_default();
        assert!(message.contains("larger than 16777216 bytes"), "{message}");
        assert!(err.is_some_and(|e| e.may_save()));
        assert_eq!(
            familiar_testkit::file_names(dir.path()),
            ["note.json.large"]
        );
    }

    #[test]
    fn read_regular_stops_at_the_limit() {
        let dir = dir();
        let path = dir.path().join("text");
        assert!(std::fs::write(&path, "12345").is_ok());
        assert_eq!(read_regular(&path, 5).ok(), Some(b"12345".to_vec()));
        let err = read_regular(&path, 4).err().map(|e| e.kind());
        assert_eq!(err, Some(std::io::ErrorKind::FileTooLarge));
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Count {
        n: u64,
    }

    impl Versioned for Count {
        const KIND: &'static str = "count";
        const VERSION: u32 = 1;
    }

    #[test]
    fn updates_from_many_writers_at_once_lose_nothing() {
        let dir = dir();
        let path = dir.path().join("count.json");
        let writers: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let saved = update(&path, |now: Option<Count>| Count {
                            n: now.map_or(0, |c| c.n) + 1,
                        });
                        assert!(saved.is_ok(), "{saved:?}");
                    }
                })
            })
            .collect();
        for writer in writers {
            assert!(writer.join().is_ok());
        }
        assert_eq!(load::<Count>(&path).ok().flatten(), Some(Count { n: 400 }));
        assert_eq!(
            familiar_testkit::file_names(dir.path()),
            [".count.json.lock", "count.json"]
        );
    }

    #[test]
    fn a_full_disk_is_an_error_and_the_old_file_survives() {
        let dir = dir();
        let path = dir.path().join("note.json");
        assert!(save(&path, &note("kept")).is_ok());
        // Every write to /dev/full fails with ENOSPC, as on a full disk.
        assert!(std::os::unix::fs::symlink("/dev/full", temp_path(&path)).is_ok());
        let err = save(&path, &note("lost")).err();
        assert_eq!(
            err.as_ref().and_then(SaveError::io_kind),
            Some(std::io::ErrorKind::StorageFull)
        );
        let message = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(message.starts_with("cannot save "), "{message}");
        assert_eq!(load::<Note>(&path).ok().flatten(), Some(note("kept")));
        assert_eq!(familiar_testkit::file_names(dir.path()), ["note.json"]);
    }

    #[test]
    fn an_unwritable_directory_is_an_error_not_a_panic() {
        let dir = dir();
        // A file where the directory should be (works as root too, unlike permissions).
        let blocker = dir.path().join("blocker");
        assert!(std::fs::write(&blocker, "x").is_ok());
        let err = save(&blocker.join("note.json"), &note("x")).err();
        assert!(err.is_some_and(|e| e.io_kind().is_some()));
    }

    #[test]
    fn the_gate_lets_one_failure_of_a_run_through() {
        let mut gate = FailureGate::default();
        assert_eq!(gate.note(Err::<(), _>("full")), Some("full"));
        assert_eq!(gate.note(Err::<(), _>("full")), None);
        assert_eq!(gate.note(Ok::<(), &str>(())), None);
        assert_eq!(gate.note(Err::<(), _>("full")), Some("full"));
    }

    #[test]
    fn the_data_dir_is_familiars_own() {
        if let Some(dir) = data_dir() {
            assert!(dir.ends_with("familiar"), "{}", dir.display());
            assert!(!dir.components().any(|c| c.as_os_str() == ".claude"));
        }
    }
}
