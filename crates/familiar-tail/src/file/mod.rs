//! One followed transcript path: the open descriptor, its device and inode, the byte offset,
//! the partial-line buffer ([`LineSplitter`]), the generation and the first bytes read of it.
//! The [`crate::tailer`] thread owns one [`FileTail`] per path and calls [`FileTail::poll`]
//! whenever inotify (or the poll loop) says the path may have changed; `poll` works out what
//! happened from the files themselves, so a missed, late or doubled notification never loses
//! or repeats a line. This is the one place where bytes become lines.
//!
//! What `poll` does, in this order:
//! 1. **Truncation of the open file** (same inode): the file is shorter than the offset, or
//!    its first bytes differ from the ones read (truncated and rewritten past the offset, even
//!    before a whole line was read). A new generation starts at byte 0 and line 1
//!    ([`OpenReason::Truncated`], with the bytes that could not be read counted).
//! 2. **Drain** the open descriptor to its end (within the byte budget). Each read starts
//!    [`OVERLAP_BYTES`] before the offset and finds those bytes as they were read (or, where
//!    they are not known, the first bytes as they were), so a truncate-and-rewrite that lands
//!    between the check and the read cannot slip new bytes into the old generation: the chunk
//!    is dropped (and counted as cut) and step 1 runs again, a new generation at once when
//!    the bytes before the offset changed (an append never changes them).
//! 3. **Rename or delete**: only then is the path looked at. Gone: [`TailMessage::Removed`].
//!    Another device or inode: the new file is opened as the next generation
//!    ([`OpenReason::Replaced`]) and read. A deleted or renamed file stays readable through
//!    the descriptor held, so nothing written before the rename or delete is lost.
//! 4. **Renamed**: a file gone from its path that still has a name ([`FileTail::resume`])
//!    may turn up under another selected name; that name's [`FileTail`] starts with
//!    [`Start::Resume`] and goes on from the first line not sent under the old one
//!    ([`OpenReason::Renamed`]), so nothing is read twice.
//!
//! - this module: [`FileTail`], its [`Start`] and [`Polled`] counts, opening a generation and
//!   noticing a rename or delete ([`FileTail::poll`]);
//! - `read`: draining the open descriptor into numbered lines, and truncation noticed on
//!   the way;
//! - `disk`: positioned reads of the file itself: the generation's fingerprint (its first
//!   bytes), the overlap each read starts with, and where a primed start-up read begins
//!   ([`prime_start`]);
//! - `whole`: a file that is one JSON document rewritten whole (Gemini CLI's `.json`
//!   sessions before 0.39), sent whole, once per change, instead of split into lines.

mod disk;
mod read;
mod whole;

use std::fs::{self, File};
use std::io;
use std::path::Path;
use std::sync::Arc;

use familiar_transcript::LineSplitter;

use crate::discovery::{TranscriptInfo, open_nonblocking};
use crate::message::{OpenReason, ResumePoint, TailMessage};
pub use disk::prime_start;
use disk::{Fingerprint, Overlap, identity, read_at_most};

/// Bytes at the start of a generation remembered to notice a rewrite in place.
const FINGERPRINT_BYTES: usize = 4096;
/// Bytes before the offset that each read of a generation reads again ([`disk::Overlap`]).
const OVERLAP_BYTES: usize = 64;
/// Bytes read per `read` call (the size of the shared scratch buffer).
pub const CHUNK: usize = 64 * 1024;
/// A `Lines` message holds at most this many lines...
const BATCH_LINES: usize = 1024;
/// ... or about this many bytes (one longer line still goes alone).
const BATCH_BYTES: usize = 256 * 1024;

/// Where the first generation of a path starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// The file existed when the tailer started and was `size` bytes long then. With
    /// `prime: Some(n)`, reading starts at the first line start within the last `n` bytes
    /// and every line already complete at `size` is backlog; with `None` (`--from-start`)
    /// everything is read, none of it backlog.
    Existing { size: u64, prime: Option<u64> },
    /// The file appeared while the tailer ran: read it all, none of it backlog.
    Appeared,
    /// The name a followed file was renamed to: read on where its old name stopped, if the
    /// path holds that same file (device, inode and first bytes); from its start if not.
    Resume(Resume),
    /// A file that existed at start, `size` bytes long then, with a point where an earlier
    /// stream of it stopped ([`crate::TailerConfig::resume`]): read on from there if the path
    /// still holds that file (device and inode, and at least that long); all of it, none of
    /// it backlog, if not.
    Continue {
        size: u64,
        identity: (u64, u64),
        at: ResumePoint,
    },
}

/// Where the reading of a file stopped when its path went away (renamed, or deleted), for
/// the name it may turn up under ([`Start::Resume`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resume {
    /// Device and inode.
    pub identity: (u64, u64),
    /// The start of the first line not sent (an unfinished line is read again).
    offset: u64,
    /// That line's number.
    line: u64,
    backlog_until: u64,
    catch_up_until: u64,
    prefix: Fingerprint,
}

/// Why a path cannot be followed (any more).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("not a regular file")]
    NotRegular,
    #[error("cannot read")]
    Unreadable(#[from] io::Error),
}

impl FileError {
    /// Out of file descriptors (the process's or the system's limit): the path is fine, and
    /// can be read once a descriptor is free (see [`FileTail::park`]).
    pub fn is_out_of_descriptors(&self) -> bool {
        matches!(self, FileError::Unreadable(err) if is_out_of_descriptors(err))
    }
}

/// `EMFILE` or `ENFILE`.
pub fn is_out_of_descriptors(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
}

/// What one [`FileTail::poll`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Polled {
    /// The byte budget ran out before the end: poll again soon.
    pub more: bool,
    /// The path is gone (deleted or renamed away, and its descriptor drained): drop the tail.
    pub removed: bool,
    pub bytes: u64,
    pub lines: u64,
    pub too_long: u64,
    /// Generations started (first open, truncation, replacement).
    pub generations: u64,
    /// Bytes lost to truncations noticed in this poll (see [`OpenReason::Truncated`]).
    pub lost_bytes: u64,
    /// The largest buffer of a big unfinished line freed in this poll, when the line moved to
    /// a buffer with room for the rest of it: the caller may give it back at once.
    pub freed: u64,
}

/// The open generation.
#[derive(Debug)]
struct Open {
    /// `None` while parked: closed to spare a descriptor, reopened by path (and its identity
    /// checked) at the next poll.
    file: Option<File>,
    identity: (u64, u64),
    offset: u64,
    /// Largest size seen in a `stat` of this generation.
    seen_size: u64,
    /// Lines whose newline lies before this offset are backlog.
    backlog_until: u64,
    /// The size at start-up of a file that existed then (0 otherwise): reading up to here
    /// is catching up, with or without `--from-start`.
    catch_up_until: u64,
    /// The generation's first bytes as read (up to [`FINGERPRINT_BYTES`]), as a fingerprint.
    prefix: Fingerprint,
    /// The last bytes read before `offset`, which the next read reads again.
    overlap: Overlap,
}

impl Open {
    fn file(&self) -> io::Result<&File> {
        self.file
            .as_ref()
            .ok_or_else(|| io::Error::other("the file is parked"))
    }
}

/// `described` with its path: [`FileTail::info`], for a caller holding another field mutably.
fn info_of(path: &Path, described: &TranscriptInfo) -> TranscriptInfo {
    TranscriptInfo {
        path: path.to_path_buf(),
        ..described.clone()
    }
}

/// One followed path.
#[derive(Debug)]
pub struct FileTail {
    /// What discovery knows of the file ([`FileTail::info`]), less its path: that is kept
    /// once, in `path`, which the tailer's tables and every message share (a watcher of
    /// thousands of sessions held each path six times).
    pub(crate) described: TranscriptInfo,
    pub path: Arc<Path>,
    /// Boxed, like `left_at`: until the first open, or after a rename (a `Start` and a
    /// `Resume` are 120 bytes each, and a watcher keeps a tail for each of thousands of files).
    start: Option<Box<Start>>,
    generation: u32,
    open: Option<Open>,
    splitter: LineSplitter,
    max_line_bytes: usize,
    /// Where reading stopped when the path went away ([`FileTail::resume`]).
    left_at: Option<Box<Resume>>,
    /// A whole-document file (`whole`): a digest of the document last sent, if one was.
    whole_sent: Option<u64>,
}

impl FileTail {
    /// A path to follow; nothing is opened until the first [`FileTail::poll`].
    /// `last_generation` is the last generation this path had in this tailer (0 if none),
    /// so a path that comes back never repeats a `(path, generation)` pair.
    pub fn new(
        info: TranscriptInfo,
        start: Start,
        last_generation: u32,
        max_line_bytes: usize,
    ) -> FileTail {
        let mut described = info;
        let path = Arc::from(std::mem::take(&mut described.path));
        FileTail {
            path,
            described,
            start: Some(Box::new(start)),
            generation: last_generation,
            open: None,
            splitter: LineSplitter::new(max_line_bytes),
            max_line_bytes,
            left_at: None,
            whole_sent: None,
        }
    }

    /// What discovery knows of the file, its path included.
    pub fn info(&self) -> TranscriptInfo {
        info_of(&self.path, &self.described)
    }

    /// The device and inode of the open generation.
    pub fn identity(&self) -> Option<(u64, u64)> {
        self.open.as_ref().map(|open| open.identity)
    }

    /// Where reading of a file stopped that this path no longer holds (after a `poll`: the
    /// path went away, or the name this tail was to go on under was renamed again before it
    /// could be opened): for the name the file may have been renamed to.
    pub fn take_resume(&mut self) -> Option<Resume> {
        self.left_at.take().map(|resume| *resume)
    }

    /// The current (or last) generation number; 0 before the first open.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// `true` once a generation was opened (an `Opened` was sent).
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Close the descriptor of the open generation, keeping its place: the next
    /// [`FileTail::poll`] reopens the path and goes on if it is still the same file (device
    /// and inode), or follows what holds the path now if not. This is how the tailer follows
    /// more files than it may hold open. `true` if a descriptor was closed.
    pub fn park(&mut self) -> bool {
        self.open
            .as_mut()
            .and_then(|open| open.file.take())
            .is_some()
    }

    /// Reopen a parked generation; `Ok(false)` when the path no longer holds its file.
    fn unpark(&mut self) -> Result<bool, FileError> {
        let Some(open) = self.open.as_mut() else {
            return Ok(true);
        };
        if open.file.is_some() {
            return Ok(true);
        }
        let file = match open_nonblocking(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(err) => return Err(err.into()),
        };
        if identity(&file.metadata()?) != open.identity {
            return Ok(false);
        }
        open.file = Some(file);
        Ok(true)
    }

    /// `true` while lines already on disk at start-up remain to be read.
    pub fn in_backlog(&self) -> bool {
        match (&self.open, self.start.as_deref()) {
            (Some(open), _) => open.offset < open.catch_up_until,
            (None, Some(Start::Existing { size, .. } | Start::Continue { size, .. })) => *size > 0,
            (None, Some(Start::Resume(resume))) => resume.offset < resume.catch_up_until,
            (None, _) => false,
        }
    }

    /// Read what is new, at most about `budget` bytes, through `scratch` (a read buffer
    /// shared by all files). `check_path` looks at the path too (deleted? another inode?),
    /// not only at the open descriptor: needed unless the watcher reported nothing but data
    /// changes. Messages for this path go to `out`, in order.
    pub fn poll(
        &mut self,
        scratch: &mut Vec<u8>,
        budget: u64,
        check_path: bool,
        out: &mut Vec<TailMessage>,
    ) -> Result<Polled, FileError> {
        let mut polled = Polled::default();
        if scratch.len() < CHUNK {
            scratch.resize(CHUNK, 0);
        }
        if self.open.is_none() {
            let Some(start) = self.start.take().map(|start| *start) else {
                polled.removed = true;
                return Ok(polled);
            };
            let reason = match start {
                Start::Existing { .. } => OpenReason::Existing,
                Start::Appeared => OpenReason::Appeared,
                Start::Resume(_) => OpenReason::Renamed,
                Start::Continue { .. } => OpenReason::Resumed,
            };
            match self.open_path(reason, Some(start), scratch, out) {
                Ok(true) => {}
                Ok(false) => {
                    if let Start::Resume(resume) = start {
                        // Renamed again before it could be opened: for the next name.
                        self.left_at = Some(Box::new(resume));
                    }
                    polled.removed = true; // gone before it could be opened: nothing was sent
                    return Ok(polled);
                }
                Err(err) => {
                    // Out of descriptors, say: the next poll starts it as it would have.
                    self.start = Some(Box::new(start));
                    return Err(err);
                }
            }
            polled.generations += 1;
            self.drain(scratch, budget, &mut polled, out)?;
            return Ok(polled);
        }
        if !self.unpark()? {
            // Parked, and the path holds another file now (or none): what was appended to the
            // parked one after it was closed cannot be reached any more.
            tracing::debug!("{}: replaced while parked", self.path.display());
            return self.reopen(scratch, budget, polled, out);
        }
        // Looked at before draining: a rename after this look is seen on the next poll.
        let at_path = check_path.then(|| fs::metadata(&self.path));
        self.drain(scratch, budget, &mut polled, out)?;
        if polled.more {
            return Ok(polled);
        }
        let at_path = match at_path {
            None => return Ok(polled),
            Some(Ok(meta)) => Some(meta),
            Some(Err(err)) if err.kind() == io::ErrorKind::NotFound => None,
            Some(Err(err)) => {
                // Drained, but the path cannot be looked at any more (a directory's mode).
                self.remove(out);
                return Err(err.into());
            }
        };
        let same = match (&at_path, &self.open) {
            (Some(meta), Some(open)) => identity(meta) == open.identity,
            _ => false,
        };
        if same {
            return Ok(polled);
        }
        // The old file is drained: say so, then follow whatever holds the path now.
        if at_path.is_none() {
            self.remove(out);
            polled.removed = true;
            return Ok(polled);
        }
        self.reopen(scratch, budget, polled, out)
    }

    /// Follow whatever holds the path now as the next generation (or say it is gone).
    fn reopen(
        &mut self,
        scratch: &mut [u8],
        budget: u64,
        mut polled: Polled,
        out: &mut Vec<TailMessage>,
    ) -> Result<Polled, FileError> {
        match self.open_path(OpenReason::Replaced, None, scratch, out) {
            Ok(true) => {}
            Ok(false) => {
                self.remove(out);
                polled.removed = true;
                return Ok(polled);
            }
            // The old generation stays parked: the next poll tries again.
            Err(err) if err.is_out_of_descriptors() => return Err(err),
            Err(err) => {
                self.remove(out);
                return Err(err);
            }
        }
        polled.generations += 1;
        self.drain(scratch, budget, &mut polled, out)?;
        Ok(polled)
    }

    fn remove(&mut self, out: &mut Vec<TailMessage>) {
        let open = self.open.take();
        // Renamed, not deleted: the file still has a name (somewhere). A deleted file's inode
        // may be given to the next file made, which must not go on from here. A parked file
        // (no descriptor) cannot tell; a new name is taken for it only if it holds the same
        // inode with the same first bytes, at least as long as what was read.
        let still_named = match open.as_ref().and_then(|open| open.file.as_ref()) {
            Some(file) => file
                .metadata()
                .is_ok_and(|meta| std::os::unix::fs::MetadataExt::nlink(&meta) > 0),
            None => true,
        };
        if let Some(open) = open.filter(|_| still_named) {
            self.left_at = Some(Box::new(Resume {
                identity: open.identity,
                offset: open.offset.saturating_sub(self.splitter.pending_len()),
                line: self.splitter.next_line_number(),
                backlog_until: open.backlog_until,
                catch_up_until: open.catch_up_until,
                prefix: open.prefix,
            }));
        }
        self.splitter.reset();
        out.push(TailMessage::Removed {
            path: Arc::clone(&self.path),
            generation: self.generation,
        });
    }

    /// Open the path as the next generation; `false` when it is gone.
    fn open_path(
        &mut self,
        mut reason: OpenReason,
        start: Option<Start>,
        scratch: &mut [u8],
        out: &mut Vec<TailMessage>,
    ) -> Result<bool, FileError> {
        let file = match open_nonblocking(&self.path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(err) => return Err(err.into()),
        };
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(FileError::NotRegular);
        }
        let size = meta.len();
        let start = match start {
            Some(Start::Resume(resume)) => {
                let same = identity(&meta) == resume.identity
                    && size >= resume.offset
                    && disk::prefix_matches(&file, &resume.prefix)?;
                if same {
                    return Ok(self.resumed(file, &meta, resume, OpenReason::Renamed, out));
                }
                // Another file by now: all of it is new. The renamed one may be elsewhere.
                if identity(&meta) != resume.identity {
                    self.left_at = Some(Box::new(resume));
                }
                reason = OpenReason::Appeared;
                None
            }
            Some(Start::Continue {
                size: at_start,
                identity: was,
                at,
            }) => {
                let on_disk = at_start.min(size);
                if identity(&meta) == was && on_disk >= at.offset {
                    let mut head = vec![0; (at.offset as usize).min(FINGERPRINT_BYTES)];
                    let read = read_at_most(&file, &mut head)?;
                    let resume = Resume {
                        identity: was,
                        offset: at.offset,
                        line: at.line,
                        backlog_until: 0,
                        catch_up_until: on_disk,
                        prefix: Fingerprint::of(&head[..read]),
                    };
                    return Ok(self.resumed(file, &meta, resume, OpenReason::Resumed, out));
                }
                // Another file by now, or a shorter one: all of it is new.
                reason = OpenReason::Existing;
                Some(Start::Existing {
                    size: at_start,
                    prime: None,
                })
            }
            start => start,
        };
        let catch_up_until = match start {
            Some(Start::Existing { size: at_start, .. }) => at_start.min(size),
            _ => 0,
        };
        let (offset, first_line, backlog_until) = match start {
            Some(Start::Existing {
                size: at_start,
                prime,
            }) => {
                let on_disk = at_start.min(size);
                match prime {
                    Some(prime) => {
                        let (offset, first) = prime_start(&file, on_disk, prime, scratch)?;
                        (offset, first, on_disk)
                    }
                    None => (0, 1, 0),
                }
            }
            _ => (0, 1, 0),
        };
        let mut head = vec![0; (offset as usize).min(FINGERPRINT_BYTES)];
        let read = read_at_most(&file, &mut head)?;
        let prefix = Fingerprint::of(&head[..read]);
        self.generation += 1;
        self.whole_sent = None;
        self.splitter = LineSplitter::new(self.max_line_bytes).with_first_line(first_line);
        self.open = Some(Open {
            file: Some(file),
            identity: identity(&meta),
            offset,
            seen_size: size,
            backlog_until,
            catch_up_until,
            prefix,
            overlap: Overlap::default(),
        });
        if offset > 0 {
            tracing::debug!(
                "{}: starting at byte {offset} (line {first_line}) of {size}",
                self.path.display()
            );
        }
        out.push(TailMessage::Opened {
            path: Arc::clone(&self.path),
            info: self.info(),
            generation: self.generation,
            reason,
            identity: identity(&meta),
        });
        Ok(true)
    }

    /// Go on reading the file another name stopped reading, as this path's next generation.
    fn resumed(
        &mut self,
        file: File,
        meta: &fs::Metadata,
        resume: Resume,
        reason: OpenReason,
        out: &mut Vec<TailMessage>,
    ) -> bool {
        self.generation += 1;
        self.whole_sent = None;
        self.splitter = LineSplitter::new(self.max_line_bytes).with_first_line(resume.line);
        self.open = Some(Open {
            file: Some(file),
            identity: resume.identity,
            offset: resume.offset,
            seen_size: meta.len(),
            backlog_until: resume.backlog_until,
            catch_up_until: resume.catch_up_until,
            prefix: resume.prefix,
            overlap: Overlap::default(),
        });
        tracing::debug!(
            "{}: {reason:?}; reading on at byte {} (line {})",
            self.path.display(),
            resume.offset,
            resume.line
        );
        out.push(TailMessage::Opened {
            path: Arc::clone(&self.path),
            info: self.info(),
            generation: self.generation,
            reason,
            identity: resume.identity,
        });
        true
    }
}

#[cfg(test)]
mod tests {
    /// A watcher keeps a tail for every file it follows (5,000 in the hostile soak): what is
    /// only needed before the first open or after a rename is boxed (552 bytes before, 360).
    #[test]
    fn a_tail_is_small() {
        let size = std::mem::size_of::<super::FileTail>();
        assert!(size <= 400, "a FileTail is {size} bytes");
    }
}
