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
//! 2. **Drain** the open descriptor to its end (within the byte budget). The first bytes are
//!    compared again after every read, so a truncate-and-rewrite that lands between the check
//!    and the read cannot slip new bytes into the old generation: the chunk is dropped (and
//!    counted as cut) and step 1 runs again.
//! 3. **Rename or delete**: only then is the path looked at. Gone: [`TailMessage::Removed`].
//!    Another device or inode: the new file is opened as the next generation
//!    ([`OpenReason::Replaced`]) and read. A deleted or renamed file stays readable through
//!    the descriptor held, so nothing written before the rename or delete is lost.

use std::fs::{self, File, Metadata};
use std::io;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::Path;
use std::sync::Arc;

use familiar_transcript::LineSplitter;

use crate::discovery::{TranscriptInfo, open_nonblocking};
use crate::message::{Line, OpenReason, TailMessage};

/// Bytes at the start of a generation remembered to notice a rewrite in place.
const FINGERPRINT_BYTES: usize = 4096;
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
}

/// Why a path cannot be followed (any more).
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("not a regular file")]
    NotRegular,
    #[error("cannot read")]
    Unreadable(#[from] io::Error),
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
}

/// The open generation.
#[derive(Debug)]
struct Open {
    file: File,
    identity: (u64, u64),
    offset: u64,
    /// Largest size seen in a `stat` of this generation.
    seen_size: u64,
    /// Lines whose newline lies before this offset are backlog.
    backlog_until: u64,
    /// The size at start-up of a file that existed then (0 otherwise): reading up to here
    /// is catching up, with or without `--from-start`.
    catch_up_until: u64,
    /// The generation's first bytes, as read (up to [`FINGERPRINT_BYTES`]).
    prefix: Vec<u8>,
}

/// One followed path.
#[derive(Debug)]
pub struct FileTail {
    pub info: TranscriptInfo,
    pub path: Arc<Path>,
    start: Option<Start>,
    generation: u32,
    open: Option<Open>,
    splitter: LineSplitter,
    max_line_bytes: usize,
}

/// A batch of lines on its way into a `Lines` message.
struct Batch<'a> {
    path: &'a Arc<Path>,
    generation: u32,
    lines: Vec<Line>,
    bytes: usize,
    backlog: bool,
    out: &'a mut Vec<TailMessage>,
}

impl Batch<'_> {
    fn push(&mut self, line: Line, backlog: bool) {
        if backlog != self.backlog
            || self.lines.len() >= BATCH_LINES
            || self.bytes + line.bytes.len() > BATCH_BYTES
        {
            self.flush();
        }
        self.backlog = backlog;
        self.bytes += line.bytes.len();
        self.lines.push(line);
    }

    fn flush(&mut self) {
        if self.lines.is_empty() {
            return;
        }
        self.bytes = 0;
        self.out.push(TailMessage::Lines {
            path: Arc::clone(self.path),
            generation: self.generation,
            lines: std::mem::take(&mut self.lines),
            backlog: self.backlog,
        });
    }
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
        FileTail {
            path: Arc::from(info.path.as_path()),
            info,
            start: Some(start),
            generation: last_generation,
            open: None,
            splitter: LineSplitter::new(max_line_bytes),
            max_line_bytes,
        }
    }

    /// The current (or last) generation number; 0 before the first open.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// `true` once a generation was opened (an `Opened` was sent).
    pub fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// `true` while lines already on disk at start-up remain to be read.
    pub fn in_backlog(&self) -> bool {
        match (&self.open, self.start) {
            (Some(open), _) => open.offset < open.catch_up_until,
            (None, Some(Start::Existing { size, .. })) => size > 0,
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
            let Some(start) = self.start.take() else {
                polled.removed = true;
                return Ok(polled);
            };
            let reason = match start {
                Start::Existing { .. } => OpenReason::Existing,
                Start::Appeared => OpenReason::Appeared,
            };
            if !self.open_path(reason, Some(start), scratch, out)? {
                polled.removed = true; // gone before it could be opened: nothing was sent
                return Ok(polled);
            }
            polled.generations += 1;
            self.drain(scratch, budget, &mut polled, out)?;
            return Ok(polled);
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
        match self.open_path(OpenReason::Replaced, None, scratch, out) {
            Ok(true) => {}
            Ok(false) => {
                self.remove(out);
                polled.removed = true;
                return Ok(polled);
            }
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
        self.open = None;
        self.splitter.reset();
        out.push(TailMessage::Removed {
            path: Arc::clone(&self.path),
            generation: self.generation,
        });
    }

    /// Open the path as the next generation; `false` when it is gone.
    fn open_path(
        &mut self,
        reason: OpenReason,
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
        let mut prefix = vec![0; (offset as usize).min(FINGERPRINT_BYTES)];
        let read = read_at_most(&file, &mut prefix)?;
        prefix.truncate(read);
        self.generation += 1;
        self.splitter = LineSplitter::new(self.max_line_bytes).with_first_line(first_line);
        self.open = Some(Open {
            file,
            identity: identity(&meta),
            offset,
            seen_size: size,
            backlog_until,
            catch_up_until,
            prefix,
        });
        if offset > 0 {
            tracing::debug!(
                "{}: starting at byte {offset} (line {first_line}) of {size}",
                self.path.display()
            );
        }
        out.push(TailMessage::Opened {
            path: Arc::clone(&self.path),
            info: self.info.clone(),
            generation: self.generation,
            reason,
        });
        Ok(true)
    }

    /// A new generation in the same inode when it was truncated (or rewritten in place).
    fn check_truncation(
        &mut self,
        polled: &mut Polled,
        out: &mut Vec<TailMessage>,
    ) -> Result<(), FileError> {
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        let size = open.file.metadata()?.len();
        let rewritten = size < open.offset || !prefix_matches(&open.file, &open.prefix)?;
        if !rewritten {
            open.seen_size = open.seen_size.max(size);
            return Ok(());
        }
        let lost = self.splitter.pending_len() + open.seen_size.saturating_sub(open.offset);
        if lost > 0 {
            tracing::info!(
                "{}: truncated; {lost} bytes were cut before they could be read",
                self.path.display()
            );
        } else {
            tracing::debug!("{}: truncated; nothing unread was cut", self.path.display());
        }
        open.offset = 0;
        open.seen_size = size;
        open.backlog_until = 0;
        open.catch_up_until = 0;
        open.prefix.clear();
        self.generation += 1;
        self.splitter = LineSplitter::new(self.max_line_bytes);
        polled.generations += 1;
        polled.lost_bytes += lost;
        out.push(TailMessage::Opened {
            path: Arc::clone(&self.path),
            info: self.info.clone(),
            generation: self.generation,
            reason: OpenReason::Truncated { lost_bytes: lost },
        });
        Ok(())
    }

    /// Read the open descriptor to its end (or until the budget is spent), starting a new
    /// generation first if it was truncated, and again if it is truncated while being read.
    fn drain(
        &mut self,
        scratch: &mut [u8],
        budget: u64,
        polled: &mut Polled,
        out: &mut Vec<TailMessage>,
    ) -> Result<(), FileError> {
        // A writer that truncates faster than this is read gets the rest on the next poll.
        for _ in 0..4 {
            self.check_truncation(polled, out)?;
            let budget = budget.saturating_sub(polled.bytes);
            if !self.read(scratch, budget, polled, out)? {
                return Ok(());
            }
        }
        polled.more = true;
        Ok(())
    }

    /// Read the open generation to its end (or until the budget is spent). `Ok(true)` when
    /// reading stopped because the first bytes changed under it: the last chunk read may
    /// belong to a new generation, so it was not used.
    fn read(
        &mut self,
        scratch: &mut [u8],
        budget: u64,
        polled: &mut Polled,
        out: &mut Vec<TailMessage>,
    ) -> Result<bool, FileError> {
        let Some(open) = self.open.as_mut() else {
            return Ok(false);
        };
        let mut batch = Batch {
            path: &self.path,
            generation: self.generation,
            lines: Vec::new(),
            bytes: 0,
            backlog: false,
            out,
        };
        let max_line_bytes = self.max_line_bytes;
        let splitter = &mut self.splitter;
        let mut spent = 0u64;
        let result = loop {
            if spent >= budget {
                polled.more = true;
                break Ok(false);
            }
            let read = match open.file.read_at(scratch, open.offset) {
                Ok(0) => break Ok(false),
                Ok(read) => read,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => break Err(FileError::Unreadable(err)),
            };
            // Truncated and rewritten between the last check and this read: the chunk may
            // come from the new content at the old offset. Checked after the read, so an
            // unchanged prefix proves the chunk is the old generation's.
            match prefix_matches(&open.file, &open.prefix) {
                Ok(true) => {}
                Ok(false) => {
                    // Counted as cut before it could be read (it may have been).
                    open.seen_size = open.seen_size.max(open.offset + read as u64);
                    break Ok(true);
                }
                Err(err) => break Err(FileError::Unreadable(err)),
            }
            let chunk = &scratch[..read];
            if open.prefix.len() < FINGERPRINT_BYTES && open.offset == open.prefix.len() as u64 {
                let take = (FINGERPRINT_BYTES - open.prefix.len()).min(read);
                open.prefix.extend_from_slice(&chunk[..take]);
            }
            // Lines whose newline lies before `backlog_until` were on disk at start-up.
            let backlog = open
                .backlog_until
                .saturating_sub(open.offset)
                .min(read as u64) as usize;
            for (part, is_backlog) in [(&chunk[..backlog], true), (&chunk[backlog..], false)] {
                splitter.push(part, |line| match line {
                    familiar_transcript::Line::Complete { bytes, number } => {
                        polled.lines += 1;
                        batch.push(
                            Line {
                                number,
                                bytes: bytes.to_vec(),
                            },
                            is_backlog,
                        );
                    }
                    familiar_transcript::Line::TooLong { len, number } => {
                        polled.too_long += 1;
                        batch.flush();
                        tracing::warn!(
                            "{}:{number}: line of {len} bytes is over the {}-byte cap; skipped",
                            batch.path.display(),
                            max_line_bytes
                        );
                        batch.out.push(TailMessage::TooLong {
                            path: Arc::clone(batch.path),
                            generation: batch.generation,
                            number,
                            len,
                            backlog: is_backlog,
                        });
                    }
                });
            }
            open.offset += read as u64;
            open.seen_size = open.seen_size.max(open.offset);
            spent += read as u64;
            polled.bytes += read as u64;
        };
        batch.flush();
        result
    }
}

fn identity(meta: &Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

/// Do the file's first bytes still equal `prefix`?
fn prefix_matches(file: &File, prefix: &[u8]) -> io::Result<bool> {
    if prefix.is_empty() {
        return Ok(true);
    }
    let mut head = [0u8; FINGERPRINT_BYTES];
    let head = &mut head[..prefix.len()];
    let read = read_at_most(file, head)?;
    Ok(read == prefix.len() && head == prefix)
}

/// Fill `buf` from the file's start as far as the file goes.
fn read_at_most(file: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read_at(&mut buf[filled..], filled as u64) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
    }
    Ok(filled)
}

/// Where a primed read of a `size`-byte file starts, and that line's number: the first line
/// start within the last `prime` bytes (or the start of the one line that spans them), the
/// newlines before it counted so line numbers stay exact.
pub fn prime_start(
    file: &File,
    size: u64,
    prime: u64,
    scratch: &mut [u8],
) -> io::Result<(u64, u64)> {
    let target = size.saturating_sub(prime);
    if target == 0 {
        return Ok((0, 1));
    }
    let mut newlines = 0u64;
    let mut last_newline: Option<u64> = None;
    let mut at = 0u64;
    while at < target {
        let want = ((target - at) as usize).min(scratch.len());
        let read = match file.read_at(&mut scratch[..want], at) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let chunk = &scratch[..read];
        newlines += memchr::memchr_iter(b'\n', chunk).count() as u64;
        if let Some(last) = memchr::memrchr(b'\n', chunk) {
            last_newline = Some(at + last as u64);
        }
        at += read as u64;
    }
    if last_newline == Some(target - 1) {
        return Ok((target, newlines + 1));
    }
    // The next line start at or after the target.
    let mut at = target;
    while at < size {
        let want = ((size - at) as usize).min(scratch.len());
        let read = match file.read_at(&mut scratch[..want], at) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if let Some(newline) = memchr::memchr(b'\n', &scratch[..read]) {
            return Ok((at + newline as u64 + 1, newlines + 2));
        }
        at += read as u64;
    }
    // One unfinished line spans the whole window: start where it starts.
    Ok((last_newline.map_or(0, |at| at + 1), newlines + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prime(content: &[u8], prime: u64) -> (u64, u64) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        fs::write(&path, content).expect("write");
        let file = File::open(&path).expect("open");
        let mut scratch = vec![0; 3]; // tiny chunks: every boundary case is crossed
        prime_start(&file, content.len() as u64, prime, &mut scratch).expect("read")
    }

    #[test]
    fn a_primed_start_lands_on_a_line_start_with_its_exact_number() {
        let content = b"aaaa\nbbbb\ncccc\ndddd\n";
        assert_eq!(prime(content, 100), (0, 1));
        assert_eq!(prime(content, 10), (10, 3)); // exactly at a line start
        assert_eq!(prime(content, 8), (15, 4)); // mid-line: the next line
        assert_eq!(prime(content, 1), (20, 5)); // nothing whole in the window
        assert_eq!(prime(b"aaaa\nbbbbbbbbbb", 3), (5, 2)); // one unfinished line spans it
        assert_eq!(prime(b"bbbbbbbbbb", 3), (0, 1));
    }
}
