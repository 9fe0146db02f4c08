//! The bulk reader: [`normalize_read`] streams a whole input (a file, stdin) through a
//! [`Normalizer`] in bounded memory. Each read is split into lines where it lies
//! ([`LineSplitter`]), the lines are parsed on two threads ([`parse_line`] needs no session
//! state) and applied in order on the calling thread ([`Normalizer::apply`]), which also hands
//! the events on. After a read that filled the buffer (a file), the calling thread makes the
//! next read into a second buffer while the helper parses, so reading does not leave the
//! helper idle between batches.
//!
//! The line-at-a-time reader for callers that keep state per line is [`crate::read_lines`].

use std::io::Read as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::{
    Diagnostic, DiagnosticKind, Event, Head, LineSplitter, Normalizer, ParsedLine, Piece, feed,
    multiline_array, parse_line, read_head,
};

/// Bytes read at a time; the complete lines of each read are parsed as one batch, in place.
/// 1 MiB: a batch's records live until it is applied, and on an event-dense transcript (150,000
/// tool uses, each answered on the next line) 2 MiB took `familiar events` to 19–25 MB of peak
/// RSS (issue 28: ≤ 20 MB), 1 MiB to 15–17 MB, for 11 % of its speed on that file (best of 11
/// interleaved: 0.225 against 0.201 s; `run` the same: 0.515 against 0.511 s). 4 MiB had
/// taken `familiar run` to 21 MB (issue 17).
const BATCH_BYTES: usize = 1 << 20;
/// Below this a batch is parsed on the calling thread alone.
const PARALLEL_MIN_BYTES: usize = 256 << 10;
/// A parallel batch is parsed in pieces of about this many bytes (see [`Batch::flush`]).
const PIECE_BYTES: usize = 256 << 10;

/// Where the bytes of one line of a batch are.
#[derive(Clone)]
enum Place {
    /// In the read buffer: nearly every line, parsed where it lies.
    Read(std::ops::Range<usize>),
    /// In [`Batch::carried`]: the line that began in the previous read.
    Carried(std::ops::Range<usize>),
}

/// One item of a batch, in line order.
enum BatchItem {
    Line { place: Place, number: u64 },
    TooLong { len: u64, number: u64 },
}

/// The complete lines of one read, parsed on two threads (parsing is stateless; applying them
/// to the session state is not) and applied in order, piece by piece as each is parsed.
#[derive(Default)]
struct Batch {
    /// Copies of the (rare) lines that straddle two reads.
    carried: Vec<u8>,
    items: Vec<BatchItem>,
}

impl Batch {
    /// Note a line the splitter completed; `read` is the buffer of the current read.
    fn push(&mut self, read: &[u8], piece: Piece<'_>, number: u64) {
        let place = match piece {
            Piece::InChunk(bytes) => {
                let start = bytes.as_ptr() as usize - read.as_ptr() as usize;
                Place::Read(start..start + bytes.len())
            }
            // Only a read's first line can have begun before it: the splitter's buffer is
            // taken, not copied (a 50 MB record is held once, not twice).
            Piece::Held(buffer) if self.carried.is_empty() => {
                std::mem::swap(&mut self.carried, buffer);
                Place::Carried(0..self.carried.len())
            }
            Piece::Held(buffer) => {
                let start = self.carried.len();
                self.carried.extend_from_slice(buffer);
                Place::Carried(start..self.carried.len())
            }
            Piece::TooLong(len) => {
                self.items.push(BatchItem::TooLong { len, number });
                return;
            }
        };
        self.items.push(BatchItem::Line { place, number });
    }

    /// Parse and apply the batch; on two threads when `threads` allows and the batch is large
    /// enough to be worth it.
    /// `read_ahead`, when given, is the next read: this thread makes it as soon as the helper
    /// has started parsing (the helper has pieces enough to stay busy meanwhile), before the
    /// batch is applied.
    fn flush(
        &mut self,
        threads: Threads,
        read: &[u8],
        normalizer: &mut Normalizer,
        on_event: &mut dyn FnMut(Event) -> std::io::Result<()>,
        on_diagnostic: &mut dyn FnMut(Diagnostic),
        read_ahead: Option<&mut dyn FnMut()>,
    ) -> std::io::Result<()> {
        let cap = normalizer.config().max_line_bytes;
        let carried = &self.carried;
        let bytes_of = |place: &Place| -> &[u8] {
            match place {
                Place::Read(range) => &read[range.clone()],
                Place::Carried(range) => &carried[range.clone()],
            }
        };
        let parse = |items: &[BatchItem]| -> Vec<Option<Result<ParsedLine<'_>, DiagnosticKind>>> {
            items
                .iter()
                .map(|item| match item {
                    BatchItem::Line { place, .. } => Some(parse_line(bytes_of(place), cap)),
                    BatchItem::TooLong { .. } => None,
                })
                .collect()
        };
        let mut events = Vec::new();
        let mut apply = |items: &[BatchItem],
                         parsed: &mut [Option<Result<ParsedLine<'_>, DiagnosticKind>>]|
         -> std::io::Result<()> {
            for (item, parsed) in items.iter().zip(parsed) {
                let (number, result) = match (item, parsed) {
                    (BatchItem::Line { number, .. }, Some(result)) => (*number, result),
                    (BatchItem::TooLong { number, .. }, _)
                    | (BatchItem::Line { number, .. }, None) => {
                        let len = match item {
                            BatchItem::TooLong { len, .. } => *len,
                            BatchItem::Line { place, .. } => bytes_of(place).len() as u64,
                        };
                        normalizer.skipped_line();
                        on_diagnostic(Diagnostic {
                            line: *number,
                            kind: DiagnosticKind::TooLong {
                                len,
                                cap: cap as u64,
                            },
                        });
                        continue;
                    }
                };
                match result {
                    Ok(parsed) => normalizer.apply(parsed, number, &mut events),
                    Err(kind) => {
                        normalizer.skipped_line();
                        on_diagnostic(Diagnostic {
                            line: number,
                            kind: kind.clone(),
                        });
                    }
                }
                for event in events.drain(..) {
                    on_event(event)?;
                }
            }
            Ok(())
        };
        let total = read.len() + carried.len();
        if total < PARALLEL_MIN_BYTES || !threads.two() {
            let mut parsed = parse(&self.items);
            apply(&self.items, &mut parsed)?;
            if let Some(read_ahead) = read_ahead {
                read_ahead();
            }
        } else {
            // Pieces of about PIECE_BYTES, parsed by both threads in order, each claiming the
            // next; this thread applies them in order as they are ready, so applying (which
            // is sequential: session state) overlaps parsing instead of following it.
            let mut pieces = Vec::new();
            let (mut begin, mut size) = (0, 0);
            for (index, item) in self.items.iter().enumerate() {
                if let BatchItem::Line { place, .. } = item {
                    size += bytes_of(place).len();
                }
                if size >= PIECE_BYTES {
                    pieces.push(begin..index + 1);
                    (begin, size) = (index + 1, 0);
                }
            }
            if begin < self.items.len() {
                pieces.push(begin..self.items.len());
            }
            let items = &self.items;
            type Parsed<'p> = Vec<Option<Result<ParsedLine<'p>, DiagnosticKind>>>;
            // `None` in a slot: the worker panicked on that piece (a bug); it is parsed again
            // here, so the panic surfaces on this thread as it would without the worker.
            let slots: Vec<OnceLock<Mutex<Option<Parsed<'_>>>>> =
                pieces.iter().map(|_| OnceLock::new()).collect();
            let next = AtomicUsize::new(0);
            let parse_piece = |piece: usize| {
                let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    parse(&items[pieces[piece].clone()])
                }))
                .ok();
                let _ = slots[piece].set(Mutex::new(parsed));
            };
            std::thread::scope(|scope| -> std::io::Result<()> {
                scope.spawn(|| {
                    loop {
                        let piece = next.fetch_add(1, Ordering::Relaxed);
                        if piece >= pieces.len() {
                            break;
                        }
                        parse_piece(piece);
                    }
                });
                if let Some(read_ahead) = read_ahead {
                    read_ahead();
                }
                for (piece, range) in pieces.iter().enumerate() {
                    while slots[piece].get().is_none() {
                        let claimed = next.fetch_add(1, Ordering::Relaxed);
                        if claimed >= pieces.len() {
                            break;
                        }
                        parse_piece(claimed);
                    }
                    let mut parsed = slots[piece]
                        .wait()
                        .lock()
                        .ok()
                        .and_then(|mut slot| slot.take())
                        .unwrap_or_else(|| parse(&items[range.clone()]));
                    if let Err(err) = apply(&items[range.clone()], &mut parsed) {
                        // Stop the worker: nothing more of this batch is wanted.
                        next.store(pieces.len(), Ordering::Relaxed);
                        return Err(err);
                    }
                }
                Ok(())
            })?;
        }
        // A big carried line's buffer is given back, not kept for the next batch.
        if self.carried.capacity() > 1 << 20 {
            self.carried = Vec::new();
        }
        self.carried.clear();
        self.items.clear();
        Ok(())
    }
}

/// Stream any reader through `normalizer` in bounded memory: `on_event` gets each event in
/// order, `on_diagnostic` each skipped or unfinished line. The reader is the caller's (a file,
/// stdin, a test buffer); this crate opens nothing itself. Lines are parsed in batches on two
/// threads; a batch is also flushed whenever a read comes back short (a pipe with nothing more
/// yet), so live input is not held back.
pub fn normalize_read<R: std::io::Read>(
    reader: R,
    normalizer: &mut Normalizer,
    on_event: impl FnMut(Event) -> std::io::Result<()>,
    on_diagnostic: impl FnMut(Diagnostic),
) -> std::io::Result<()> {
    normalize_read_on(
        Threads::Two,
        reader,
        None,
        normalizer,
        on_event,
        on_diagnostic,
    )
}

/// How many threads [`normalize_read_on`] parses on.
#[derive(Clone, Copy)]
pub enum Threads {
    /// The calling thread only: for a caller that already reads an input per core.
    One,
    /// The calling thread and a helper, for batches large enough to be worth it.
    Two,
}

impl Threads {
    fn two(&self) -> bool {
        matches!(self, Threads::Two)
    }
}

/// [`normalize_read`], parsing on `threads`. `len`, when known (a file's size), lets a line
/// longer than a read get room for the rest of the input at once
/// ([`LineSplitter::make_room`]) rather than a buffer that doubles as it grows.
pub fn normalize_read_on<R: std::io::Read>(
    threads: Threads,
    mut reader: R,
    len: Option<u64>,
    normalizer: &mut Normalizer,
    mut on_event: impl FnMut(Event) -> std::io::Result<()>,
    mut on_diagnostic: impl FnMut(Diagnostic),
) -> std::io::Result<()> {
    // One buffer per thread, kept across inputs: zeroing the buffer for each of many small
    // files cost more than reading them.
    thread_local! {
        static BUFFERS: std::cell::Cell<[Vec<u8>; 2]> =
            const { std::cell::Cell::new([Vec::new(), Vec::new()]) };
    }
    let mut buffers = BUFFERS.take();
    buffers[0].resize(BATCH_BYTES, 0);
    let result = normalize_read_with(
        threads,
        &mut reader,
        len,
        &mut buffers,
        normalizer,
        &mut on_event,
        &mut on_diagnostic,
    );
    BUFFERS.set(buffers);
    result
}

fn normalize_read_with<R: std::io::Read>(
    threads: Threads,
    reader: &mut R,
    len: Option<u64>,
    [chunk, spare]: &mut [Vec<u8>; 2],
    normalizer: &mut Normalizer,
    on_event: &mut dyn FnMut(Event) -> std::io::Result<()>,
    on_diagnostic: &mut dyn FnMut(Diagnostic),
) -> std::io::Result<()> {
    let mut splitter = LineSplitter::new(normalizer.config().max_line_bytes);
    let mut batch = Batch::default();
    let cap = normalizer.config().max_line_bytes;
    // The first line is read in place when it fits the buffer (nearly always: the first
    // read is then parsed where it lies, not copied); the reads stop where `read_head`'s
    // would, and a longer first line or a JSON array goes through it.
    let (mut filled, mut newline, mut end) = (0, false, false);
    while !newline && filled <= cap && filled < chunk.len() {
        match reader.read(&mut chunk[filled..]) {
            Ok(0) => {
                end = true;
                break;
            }
            Ok(read) => {
                newline = memchr::memchr(b'\n', &chunk[filled..filled + read]).is_some();
                filled += read;
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
    }
    let head = if (newline || end) && multiline_array(&chunk[..filled]).is_none() {
        None
    } else {
        let prefix = &chunk[..filled];
        match read_head(
            &mut prefix.chain(&mut *reader),
            len,
            &mut vec![0; BATCH_BYTES],
            cap,
        )? {
            Head::FirstLine(head) => Some(head),
            Head::Array(whole) => {
                let mut events = Vec::new();
                let mut diagnostics = Vec::new();
                feed(normalizer, &whole, &mut events, &mut diagnostics);
                diagnostics.into_iter().for_each(&mut *on_diagnostic);
                for event in events {
                    on_event(event)?;
                }
                return Ok(());
            }
        }
    };
    let mut first = Some(match head {
        Some(head) => Err(head),
        None => Ok(filled),
    });
    // What the read ahead into `spare` returned, when one was made.
    let mut ahead: Option<std::io::Result<usize>> = None;
    // Bytes of the input pushed to the splitter so far.
    let mut consumed = 0u64;
    loop {
        let head;
        let bytes: &[u8] = match first.take() {
            Some(Ok(0)) => break,
            Some(Ok(filled)) => &chunk[..filled],
            Some(Err(taken)) if taken.is_empty() => break,
            Some(Err(taken)) => {
                head = taken;
                &head
            }
            None => match ahead.take() {
                Some(Ok(0)) => break,
                Some(Ok(read)) => {
                    std::mem::swap(chunk, spare);
                    &chunk[..read]
                }
                Some(Err(err)) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Some(Err(err)) => return Err(err),
                None => match reader.read(chunk) {
                    Ok(0) => break,
                    Ok(read) => &chunk[..read],
                    Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(err) => return Err(err),
                },
            },
        };
        // Every read is parsed before the next one overwrites the buffer, so a short read (a
        // pipe with nothing more yet) never holds live input back.
        splitter.make_room(bytes, || len.map(|len| len.saturating_sub(consumed)));
        consumed += bytes.len() as u64;
        let held = splitter.pending_len();
        splitter.push_split(bytes, |piece, number| batch.push(bytes, piece, number));
        // The line held was completed: the batch frees its buffer once applied.
        let completed = (splitter.pending_len() < held).then_some(held);
        // A read that filled the buffer had more behind it (a file: a pipe holds at most
        // 1 MiB), so the next one is made into the other buffer while the helper parses this
        // batch (the reading would otherwise leave it idle). Only for `Two`: a caller that
        // may leave the other core to others keeps one buffer.
        let full = bytes.len() == BATCH_BYTES && matches!(threads, Threads::Two);
        let mut read_ahead = || {
            spare.resize(BATCH_BYTES, 0);
            ahead = Some(reader.read(spare));
        };
        batch.flush(
            threads,
            bytes,
            normalizer,
            on_event,
            on_diagnostic,
            full.then_some(&mut read_ahead as &mut dyn FnMut()),
        )?;
        if let Some(held) = completed {
            familiar_model::memory::freed(held);
        }
    }
    // The input ended: what waited for a later record goes out as it is.
    let mut held = Vec::new();
    normalizer.flush(&mut held);
    for event in held {
        on_event(event)?;
    }
    if let Some(unfinished) = splitter.unfinished()
        && !unfinished
            .bytes
            .is_some_and(|bytes| bytes.trim_ascii().is_empty())
    {
        on_diagnostic(Diagnostic {
            line: unfinished.number,
            kind: DiagnosticKind::Unfinished {
                len: unfinished.len,
            },
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Batch, BatchItem, Place};
    use crate::LineSplitter;

    #[test]
    fn a_line_begun_in_an_earlier_read_is_taken_from_the_splitter_not_copied() {
        let mut splitter = LineSplitter::new(1 << 20);
        let mut batch = Batch::default();
        splitter.push_split(b"{\"text\":\"a long", |_, _| {
            panic!("no line is complete yet")
        });
        let read = b" record\"}\n{}\n";
        // Room for the rest, so the line stays where it is while it is completed.
        splitter.room_for(read.len() as u64);
        let held = splitter
            .unfinished()
            .and_then(|line| line.bytes)
            .map(<[u8]>::as_ptr);
        splitter.push_split(read, |piece, number| batch.push(read, piece, number));
        let lines: Vec<(Vec<u8>, bool)> = batch
            .items
            .iter()
            .filter_map(|item| match item {
                BatchItem::Line {
                    place: Place::Read(range),
                    ..
                } => Some((read[range.clone()].to_vec(), false)),
                BatchItem::Line {
                    place: Place::Carried(range),
                    ..
                } => Some((batch.carried[range.clone()].to_vec(), true)),
                BatchItem::TooLong { .. } => None,
            })
            .collect();
        assert_eq!(
            lines,
            [
                (b"{\"text\":\"a long record\"}".to_vec(), true),
                (b"{}".to_vec(), false)
            ]
        );
        assert_eq!(
            held,
            Some(batch.carried.as_ptr()),
            "the held line was copied"
        );
    }
}
