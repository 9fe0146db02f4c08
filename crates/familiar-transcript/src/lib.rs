//! Transcript normalizer: the "transform" core of Familiar (pure functions of bytes, plus
//! one entry point that drives a caller's reader: see below).
//!
//! Claude Code writes each session as JSONL records (`user`, `assistant`, `system`, `summary`,
//! `progress`, ...; headless runs write `stream-json` with `init` and `result`). This crate turns
//! those bytes into the small event vocabulary of `familiar-model`, with the session state each
//! event carries (context-window use, status) and the metrics behind `familiar stats`.
//! It opens no file and keeps no clock: callers hand it bytes ([`LineSplitter`],
//! [`Normalizer::push_line`]) or a reader they opened ([`normalize_read`], [`read_lines`]);
//! `normalize_read` parses the lines of each read where they lie, on two scoped threads, and
//! applies them in order.
//!
//! - [`lines`]: byte chunks → complete lines, bounded memory.
//! - [`head`]: the `cwd`, session id and timestamp of a record, for the tailer's discovery.
//! - [`record`]: typed, borrowed serde views of the records.
//! - [`scan`]: the fast path to those records, for lines it can vouch for.
//! - [`normalize`]: records → events and session state.
//! - [`tools`]: tool names → event kinds and targets.
//! - [`links`]: what a record says beyond its events (subagent links, `cwd`, branch).
//! - [`metrics`]: counts, and tokens per file.
//! - [`usage`]: tokens of API messages, each counted once across files.
//! - [`pricing`]: model prices and the cost of a message.
//! - [`models`]: context windows of models, and which source of one wins.
//! - [`codex`]: OpenAI Codex CLI rollouts, read into the same events (a [`Normalizer`] hands
//!   them records of the Codex shape).

use std::io::Read as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

pub mod codex;
pub mod error_message;
pub mod head;
pub mod lines;
pub mod links;
pub mod metrics;
pub mod models;
pub mod normalize;
pub mod pricing;
pub mod record;
pub mod scan;
pub mod tools;
pub mod usage;

pub use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
pub use lines::{DEFAULT_MAX_LINE_BYTES, Line, LineSplitter, Unfinished};
pub use links::{SubagentLink, subagent_link};
pub use metrics::{Metrics, Summary, round_cost};
pub use normalize::{
    DEFAULT_CONTEXT_LIMIT, LARGE_CONTEXT_LIMIT, Normalizer, NormalizerConfig, ParsedLine,
    parse_line, think_level,
};
pub use pricing::{Price, PriceFile, PriceTable, Tokens};
pub use usage::Ledger;

/// Why a line produced no events.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DiagnosticKind {
    #[error("malformed JSON: {0}")]
    Malformed(String),
    #[error("not a JSON object")]
    NotAnObject,
    #[error("invalid UTF-8 at byte {offset}")]
    InvalidUtf8 { offset: usize },
    #[error("line of {len} bytes is over the {cap}-byte cap; skipped")]
    TooLong { len: u64, cap: u64 },
    #[error("unfinished last line ({len} bytes, no newline): a write still in progress")]
    Unfinished { len: u64 },
}

/// A skipped or unfinished line, with its 1-based line number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct Diagnostic {
    pub line: u64,
    pub kind: DiagnosticKind,
}

/// Normalize a whole input in one go: the events and the diagnostics, in line order.
/// A trailing line with no newline is reported as [`DiagnosticKind::Unfinished`], not parsed.
/// An input that is one JSON array spread over many lines (`--output-format json`, pretty
/// printed) is read as a whole.
pub fn normalize_bytes(input: &[u8], config: &NormalizerConfig) -> (Vec<Event>, Vec<Diagnostic>) {
    let mut normalizer = Normalizer::new(config.clone());
    let mut events = Vec::new();
    let mut diagnostics = Vec::new();
    feed(&mut normalizer, input, &mut events, &mut diagnostics);
    (events, diagnostics)
}

/// Feeds every complete line of `input` to `normalizer` and reports the unfinished tail; the
/// input is whole, so events held for a later record go out at its end
/// ([`Normalizer::flush`]).
pub fn feed(
    normalizer: &mut Normalizer,
    input: &[u8],
    events: &mut Vec<Event>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if let Some(array) = multiline_array(input) {
        if let Err(diagnostic) = normalizer.push_line(array, 1, events) {
            diagnostics.push(diagnostic);
        }
        normalizer.flush(events);
        return;
    }
    let mut splitter = LineSplitter::new(normalizer.config().max_line_bytes);
    splitter.push(input, |line| match line {
        Line::Complete { bytes, number } => {
            if let Err(diagnostic) = normalizer.push_line(bytes, number, events) {
                diagnostics.push(diagnostic);
            }
        }
        Line::TooLong { len, number } => {
            normalizer.skipped_line();
            diagnostics.push(Diagnostic {
                line: number,
                kind: DiagnosticKind::TooLong {
                    len,
                    cap: normalizer.config().max_line_bytes as u64,
                },
            });
        }
    });
    normalizer.flush(events);
    if let Some(unfinished) = splitter.unfinished()
        && !unfinished
            .bytes
            .is_some_and(|bytes| bytes.trim_ascii().is_empty())
    {
        diagnostics.push(Diagnostic {
            line: unfinished.number,
            kind: DiagnosticKind::Unfinished {
                len: unfinished.len,
            },
        });
    }
}

/// The whole input, when it is one JSON array pretty-printed over several lines (its first
/// line opens the array without closing it).
fn multiline_array(input: &[u8]) -> Option<&[u8]> {
    let trimmed = input.trim_ascii();
    let first_line = trimmed.split(|&b| b == b'\n').next()?.trim_ascii();
    (first_line.starts_with(b"[") && !first_line.ends_with(b"]")).then_some(trimmed)
}

/// The start of an input: its first line (whole, or up to the cap), or, when that line opens a
/// JSON array pretty-printed over several lines, the whole input (up to the cap).
enum Head {
    FirstLine(Vec<u8>),
    Array(Vec<u8>),
}

/// Read until the first newline (a pipe may deliver the first line in pieces), then decide
/// between JSONL and one pretty-printed JSON document. Shared by both readers.
fn read_head<R: std::io::Read>(
    reader: &mut R,
    chunk: &mut [u8],
    cap: usize,
) -> std::io::Result<Head> {
    read_head_from(reader, chunk, cap, Vec::new())
}

/// [`read_head`] with the first bytes already read (`head`).
fn read_head_from<R: std::io::Read>(
    reader: &mut R,
    chunk: &mut [u8],
    cap: usize,
    mut head: Vec<u8>,
) -> std::io::Result<Head> {
    while memchr::memchr(b'\n', &head).is_none() && head.len() <= cap {
        match reader.read(chunk) {
            Ok(0) => break,
            Ok(read) => head.extend_from_slice(&chunk[..read]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
    }
    if multiline_array(&head).is_none() {
        return Ok(Head::FirstLine(head));
    }
    let mut whole = head;
    reader
        .take((cap as u64).saturating_sub(whole.len() as u64) + 1)
        .read_to_end(&mut whole)?;
    Ok(Head::Array(whole))
}

/// One item of [`read_lines`].
#[derive(Debug, PartialEq, Eq)]
pub enum ReadLine<'a> {
    /// A complete line without its newline (or, for a pretty-printed JSON array, the whole
    /// array as line 1: [`Normalizer::push_line`] reads it as a sequence of records).
    Line { number: u64, bytes: &'a [u8] },
    /// A line over the cap, skipped.
    TooLong { number: u64, len: u64 },
    /// The input ended in the middle of a line (a write still in progress, or a truncated file).
    Unfinished { number: u64, len: u64 },
}

/// Stream any reader as numbered lines in bounded memory, one at a time, for a caller that
/// keeps state per line (the session model). The bulk path, [`normalize_read`], parses batches
/// on two threads instead.
pub fn read_lines<R: std::io::Read>(
    reader: R,
    max_line_bytes: usize,
    on_line: impl FnMut(ReadLine<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    read_lines_with(reader, max_line_bytes, &mut Vec::new(), on_line)
}

/// [`read_lines`] reading into the caller's buffer `chunk`: a caller reading many inputs
/// (`familiar stats`) allocates (and the kernel zeroes) one buffer for all of them. The first
/// read, which nearly always holds the first line, is split where it lies, not copied.
pub fn read_lines_with<R: std::io::Read>(
    mut reader: R,
    max_line_bytes: usize,
    chunk: &mut Vec<u8>,
    mut on_line: impl FnMut(ReadLine<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    const CHUNK: usize = 1 << 20;
    if chunk.len() < CHUNK {
        chunk.resize(CHUNK, 0);
    }
    // What `read_head` reads, in place while it fits the buffer: up to the first newline, past
    // the cap, or to the end of the input.
    let mut filled = 0;
    loop {
        match reader.read(&mut chunk[filled..]) {
            Ok(0) => break,
            Ok(read) => {
                let searched = filled;
                filled += read;
                if memchr::memchr(b'\n', &chunk[searched..filled]).is_some()
                    || filled > max_line_bytes
                    || filled == chunk.len()
                {
                    break;
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
    }
    let first_line_read = filled < chunk.len()
        || filled > max_line_bytes
        || memchr::memchr(b'\n', &chunk[..filled]).is_some();
    let head = if first_line_read && multiline_array(&chunk[..filled]).is_none() {
        None
    } else {
        let head = chunk[..filled].to_vec();
        match read_head_from(&mut reader, chunk, max_line_bytes, head)? {
            Head::FirstLine(head) => Some(head),
            Head::Array(whole) => {
                return match multiline_array(&whole) {
                    Some(array) => on_line(ReadLine::Line {
                        number: 1,
                        bytes: array,
                    }),
                    None => Ok(()),
                };
            }
        }
    };
    let mut splitter = LineSplitter::new(max_line_bytes);
    match &head {
        Some(head) => push_lines(&mut splitter, head, &mut on_line)?,
        None => push_lines(&mut splitter, &chunk[..filled], &mut on_line)?,
    }
    loop {
        match reader.read(chunk) {
            Ok(0) => break,
            Ok(read) => push_lines(&mut splitter, &chunk[..read], &mut on_line)?,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
    }
    if let Some(unfinished) = splitter.unfinished()
        && !unfinished
            .bytes
            .is_some_and(|bytes| bytes.trim_ascii().is_empty())
    {
        on_line(ReadLine::Unfinished {
            number: unfinished.number,
            len: unfinished.len,
        })?;
    }
    Ok(())
}

/// The lines `bytes` completes, to `on_line`, until it fails.
fn push_lines(
    splitter: &mut LineSplitter,
    bytes: &[u8],
    on_line: &mut impl FnMut(ReadLine<'_>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut result = Ok(());
    splitter.push(bytes, |line| {
        if result.is_err() {
            return;
        }
        result = on_line(match line {
            Line::Complete { bytes, number } => ReadLine::Line { number, bytes },
            Line::TooLong { len, number } => ReadLine::TooLong { number, len },
        });
    });
    result
}

/// Bytes read at a time; the complete lines of each read are parsed as one batch, in place.
/// 2 MiB, not 4: a batch's records live until it is applied, and on an event-dense transcript
/// 4 MiB took `familiar run` to 21 MB of peak RSS (issue 17: ≤ 20 MB) at the same speed.
const BATCH_BYTES: usize = 2 << 20;
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
    fn push(&mut self, read: &[u8], line: Line<'_>) {
        match line {
            Line::Complete { bytes, number } => {
                let place = if read.as_ptr_range().contains(&bytes.as_ptr()) {
                    let start = bytes.as_ptr() as usize - read.as_ptr() as usize;
                    Place::Read(start..start + bytes.len())
                } else {
                    let start = self.carried.len();
                    self.carried.extend_from_slice(bytes);
                    Place::Carried(start..self.carried.len())
                };
                self.items.push(BatchItem::Line { place, number });
            }
            Line::TooLong { len, number } => self.items.push(BatchItem::TooLong { len, number }),
        }
    }

    fn flush(
        &mut self,
        read: &[u8],
        normalizer: &mut Normalizer,
        on_event: &mut dyn FnMut(Event) -> std::io::Result<()>,
        on_diagnostic: &mut dyn FnMut(Diagnostic),
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
                         parsed: Vec<Option<Result<ParsedLine<'_>, DiagnosticKind>>>|
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
                        on_diagnostic(Diagnostic { line: number, kind });
                    }
                }
                for event in events.drain(..) {
                    on_event(event)?;
                }
            }
            Ok(())
        };
        let total = read.len() + carried.len();
        if total < PARALLEL_MIN_BYTES {
            let parsed = parse(&self.items);
            apply(&self.items, parsed)?;
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
                for (piece, range) in pieces.iter().enumerate() {
                    while slots[piece].get().is_none() {
                        let claimed = next.fetch_add(1, Ordering::Relaxed);
                        if claimed >= pieces.len() {
                            break;
                        }
                        parse_piece(claimed);
                    }
                    let parsed = slots[piece]
                        .wait()
                        .lock()
                        .ok()
                        .and_then(|mut slot| slot.take())
                        .unwrap_or_else(|| parse(&items[range.clone()]));
                    if let Err(err) = apply(&items[range.clone()], parsed) {
                        // Stop the worker: nothing more of this batch is wanted.
                        next.store(pieces.len(), Ordering::Relaxed);
                        return Err(err);
                    }
                }
                Ok(())
            })?;
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
    mut reader: R,
    normalizer: &mut Normalizer,
    mut on_event: impl FnMut(Event) -> std::io::Result<()>,
    mut on_diagnostic: impl FnMut(Diagnostic),
) -> std::io::Result<()> {
    // One buffer per thread, kept across inputs: zeroing the buffer for each of many small files
    // cost more than reading them.
    thread_local! {
        static CHUNK: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut chunk = CHUNK.take();
    chunk.resize(BATCH_BYTES, 0);
    let result = normalize_read_with(
        &mut reader,
        &mut chunk,
        normalizer,
        &mut on_event,
        &mut on_diagnostic,
    );
    CHUNK.set(chunk);
    result
}

fn normalize_read_with<R: std::io::Read>(
    reader: &mut R,
    chunk: &mut [u8],
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
            None => match reader.read(chunk) {
                Ok(0) => break,
                Ok(read) => &chunk[..read],
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            },
        };
        // Every read is parsed before the next one overwrites the buffer, so a short read (a
        // pipe with nothing more yet) never holds live input back.
        splitter.push(bytes, |line| batch.push(bytes, line));
        batch.flush(bytes, normalizer, on_event, on_diagnostic)?;
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
