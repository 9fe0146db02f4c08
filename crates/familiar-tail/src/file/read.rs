//! Reading a followed file's open generation: [`FileTail`]'s drain loop, which turns bytes
//! into numbered [`Line`]s through the [`LineSplitter`](familiar_transcript::LineSplitter),
//! batches them into `Lines` messages, and starts a new generation when the file was
//! truncated or rewritten in place under it (see the steps in [`super`]).

use std::io;
use std::os::unix::fs::FileExt as _;
use std::path::Path;
use std::sync::Arc;

use familiar_transcript::LineSplitter;

use super::disk::{Fingerprint, Overlap, prefix_matches};
use super::whole;
use super::{BATCH_BYTES, BATCH_LINES, FINGERPRINT_BYTES, FileError, FileTail, Polled};
use crate::message::{Line, OpenReason, ResumePoint, TailMessage};

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
    /// Send what is gathered, saying where reading stands after it.
    fn flush_at(&mut self, resume: ResumePoint) {
        if self.lines.is_empty() {
            return;
        }
        self.send(Some(resume));
    }
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
        self.send(None);
    }

    fn send(&mut self, resume: Option<ResumePoint>) {
        self.bytes = 0;
        self.out.push(TailMessage::Lines {
            path: Arc::clone(self.path),
            generation: self.generation,
            lines: std::mem::take(&mut self.lines),
            backlog: self.backlog,
            resume,
        });
    }
}

/// How a read of the open generation ended.
enum Drained {
    /// At the end of what is written, or of the budget; `read: false` when nothing at all
    /// was there to read.
    End { read: bool },
    /// The bytes before the offset changed under the read: the file was truncated or
    /// rewritten. `proven` when they were those just before the offset, which an append
    /// never changes; otherwise the first bytes, which [`FileTail::check_truncation`] reads
    /// again.
    Rewritten { proven: bool },
}

impl FileTail {
    /// A new generation in the same inode when it was truncated (or rewritten in place).
    /// The first bytes are compared only when the file is no longer than what was read, or
    /// when `suspect` (the last read found them changed): a longer file is read next, and
    /// every read compares them after it (two hashes of 4 KiB a read were a tenth of a
    /// watcher's time at 1,000 live sessions).
    /// `proven`: a read found the bytes before the offset changed, a new generation whatever
    /// the first bytes are (a rewrite may begin as the old one did).
    /// `Ok((true, _))` when the first bytes were compared (and matched, or a new generation
    /// began); with the file's size as the check saw it.
    fn check_truncation(
        &mut self,
        suspect: bool,
        proven: bool,
        polled: &mut Polled,
        out: &mut Vec<TailMessage>,
    ) -> Result<(bool, u64), FileError> {
        let Some(open) = self.open.as_mut() else {
            return Ok((true, 0));
        };
        let file = open.file()?;
        let size = file.metadata()?.len();
        let compare = suspect || size <= open.offset;
        let rewritten =
            proven || size < open.offset || (compare && !prefix_matches(file, &open.prefix)?);
        if !rewritten {
            if compare {
                // This generation's bytes, as far as a stat can tell.
                open.seen_size = open.seen_size.max(size);
            }
            return Ok((compare, size));
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
        open.prefix = Fingerprint::default();
        open.overlap = Overlap::default();
        self.generation += 1;
        self.splitter = LineSplitter::new(self.max_line_bytes);
        polled.generations += 1;
        polled.lost_bytes += lost;
        out.push(TailMessage::Opened {
            path: Arc::clone(&self.path),
            info: super::info_of(&self.path, &self.described),
            generation: self.generation,
            reason: OpenReason::Truncated { lost_bytes: lost },
            identity: open.identity,
        });
        Ok((true, size))
    }

    /// Read the open descriptor to its end (or until the budget is spent), starting a new
    /// generation first if it was truncated, and again if it is truncated while being read.
    pub(super) fn drain(
        &mut self,
        scratch: &mut [u8],
        budget: u64,
        polled: &mut Polled,
        out: &mut Vec<TailMessage>,
    ) -> Result<(), FileError> {
        if whole::is_whole(&self.path) {
            return self.read_whole(polled, out);
        }
        // A writer that truncates faster than this is read gets the rest on the next poll.
        // Read first: a change is nearly always an append, which the read finds without a
        // `stat` before it (one syscall a change less at 1,000 live sessions). A read that
        // finds nothing new is when the size is asked: a truncation, or a change already read.
        // `Some(proven)` after a read found the bytes before the offset changed.
        let mut check_first = None;
        for _ in 0..4 {
            let (compared, size) = if let Some(proven) = check_first {
                let (compared, size) = self.check_truncation(true, proven, polled, out)?;
                (compared, Some(size))
            } else {
                (false, None)
            };
            let budget = budget.saturating_sub(polled.bytes);
            match self.read(scratch, budget, compared, size, polled, out)? {
                Drained::Rewritten { proven } => check_first = Some(proven),
                Drained::End { read: true } => return Ok(()),
                Drained::End { read: false } => {
                    let before = (self.generation, self.open.as_ref().map(|open| open.offset));
                    let (_, size) = self.check_truncation(false, false, polled, out)?;
                    let offset = self.open.as_ref().map(|open| open.offset);
                    // Neither a new generation nor written since the read: nothing to do.
                    if before == (self.generation, offset) && offset.is_none_or(|at| size <= at) {
                        return Ok(());
                    }
                    check_first = None;
                }
            }
        }
        polled.more = true;
        Ok(())
    }

    /// Read the open generation to its end (or until the budget is spent).
    /// [`Drained::Rewritten`] when reading stopped because bytes before the offset changed
    /// under it: the last chunk read may belong to a new generation, so it was not used.
    /// Each read starts at the [`Overlap`] before the offset and finds it unchanged before
    /// its new bytes are used; where that is not known, the first bytes are read again.
    ///
    /// A short read is the end (of a regular file, as far as it is written), without one more
    /// read to find nothing (a read and a syscall per change at 1,000 live sessions); so is
    /// one that reached `size`, the file's size before the first read, when it is known. What
    /// is written after makes another change, so another drain.
    fn read(
        &mut self,
        scratch: &mut [u8],
        budget: u64,
        mut compared: bool,
        size: Option<u64>,
        polled: &mut Polled,
        out: &mut Vec<TailMessage>,
    ) -> Result<Drained, FileError> {
        let Some(open) = self.open.as_mut() else {
            return Ok(Drained::End { read: true });
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
                break Ok(Drained::End { read: true });
            }
            let overlap = open.overlap.len();
            let read = match open.file()?.read_at(scratch, open.offset - overlap as u64) {
                // Nothing past the offset (or the file is now shorter than it).
                Ok(read) if read <= overlap => break Ok(Drained::End { read: spent > 0 }),
                Ok(read) => read,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => break Err(FileError::Unreadable(err)),
            };
            // Truncated and rewritten between the last check and this read: the chunk may
            // come from the new content at the old offset. Checked after the read, so bytes
            // found unchanged prove the chunk is the old generation's.
            let unchanged = if overlap > 0 {
                Ok(Overlap::after(&scratch[..overlap]) == open.overlap)
            } else {
                prefix_matches(open.file()?, &open.prefix)
            };
            match unchanged {
                Ok(true) => compared = true,
                Ok(false) => {
                    // Changed since they last matched, which was just now: counted as cut
                    // before it could be read (it may have been). Not compared since the last
                    // poll: the chunk is most likely the new generation's own.
                    if compared {
                        open.seen_size = open.seen_size.max(open.offset + (read - overlap) as u64);
                    }
                    break Ok(Drained::Rewritten {
                        proven: overlap > 0,
                    });
                }
                Err(err) => break Err(FileError::Unreadable(err)),
            }
            open.overlap = Overlap::after(&scratch[..read]);
            let chunk = &scratch[overlap..read];
            let read = chunk.len();
            if open.prefix.len() < FINGERPRINT_BYTES && open.offset == open.prefix.len() as u64 {
                let take = (FINGERPRINT_BYTES - open.prefix.len()).min(read);
                open.prefix.extend(&chunk[..take]);
            }
            // Lines whose newline lies before `backlog_until` were on disk at start-up.
            let backlog = open
                .backlog_until
                .saturating_sub(open.offset)
                .min(read as u64) as usize;
            // A big record under way: room for the rest of the file at once (one `fstat`,
            // only then).
            let offset = open.offset;
            let left = || {
                Some(
                    open.file()
                        .ok()?
                        .metadata()
                        .ok()?
                        .len()
                        .saturating_sub(offset),
                )
            };
            polled.freed = polled.freed.max(splitter.make_room(chunk, left));
            for (part, is_backlog) in [(&chunk[..backlog], true), (&chunk[backlog..], false)] {
                splitter.push_owned(part, |line| match line {
                    familiar_transcript::OwnedLine::Complete { bytes, number } => {
                        polled.lines += 1;
                        batch.push(Line { number, bytes }, is_backlog);
                    }
                    familiar_transcript::OwnedLine::TooLong { len, number } => {
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
            if overlap + read < scratch.len() && size.is_none_or(|size| open.offset >= size) {
                break Ok(Drained::End { read: true });
            }
        };
        // The unfinished line (held, or being skipped) is read again by whoever goes on.
        batch.flush_at(ResumePoint {
            offset: open.offset.saturating_sub(splitter.pending_len()),
            line: splitter.next_line_number(),
        });
        result
    }
}
