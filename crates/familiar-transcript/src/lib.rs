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
//! applies them in order (`bulk`).
//!
//! - [`lines`]: byte chunks → complete lines, bounded memory.
//! - [`head`]: the `cwd`, session id and timestamp of a record, for the tailer's discovery.
//! - [`record`]: typed, borrowed serde views of the records.
//! - [`scan`]: the fast path to those records, for lines it can vouch for.
//! - [`normalize`]: records → events and session state.
//! - [`tools`]: tool names → event kinds and targets.
//! - [`links`]: what a record says beyond its events (subagent links, `cwd`, branch).
//! - [`metrics`]: counts, and tokens per file ([`counts`]: a count per name).
//! - [`usage`]: tokens of API messages, each counted once across files.
//! - [`pricing`]: model prices and the cost of a message.
//! - [`models`]: context windows of models, and which source of one wins.
//! - [`codex`]: OpenAI Codex CLI rollouts, read into the same events (a [`Normalizer`] hands
//!   them records of the Codex shape).
//! - [`gemini`]: Google Gemini CLI sessions, read into the same events (a [`Normalizer`] hands
//!   them lines of the Gemini shape).
//! - [`qwen`]: Qwen Code sessions, read into the same events (a [`Normalizer`] hands them
//!   records of the Qwen shape).
//! - [`copilot`]: GitHub Copilot CLI sessions, read into the same events (a [`Normalizer`]
//!   hands them records of the Copilot shape).
//! - [`opencode`]: opencode sessions (SQLite rows, handed over as lines by
//!   `familiar_tail::opencode`), read into the same events.

use std::io::Read as _;

/// Does `$haystack` (bytes) hold `$needle` (a literal)? Its SIMD searcher is built once per
/// call site, the first time it runs: building one per line cost more than the search (2 % of
/// `familiar run`, 0.8 % of `familiar stats`). For the substring tests that decide, before any
/// parse, whether a line is worth one.
#[macro_export]
macro_rules! contains {
    ($haystack:expr, $needle:expr) => {{
        static FINDER: std::sync::LazyLock<$crate::__memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| $crate::__memmem::Finder::new($needle));
        FINDER.find($haystack).is_some()
    }};
}

#[doc(hidden)]
pub use memchr::memmem as __memmem;

pub mod agent;
mod bulk;
pub mod codex;
pub mod copilot;
pub mod counts;
pub mod error_message;
pub mod gemini;
pub mod head;
pub mod lines;
pub mod links;
pub mod metrics;
pub mod models;
pub mod normalize;
pub mod opencode;
pub mod pricing;
pub mod qwen;
pub mod record;
pub mod scan;
pub mod tools;
pub mod usage;

pub use bulk::{Threads, normalize_read, normalize_read_on};
pub use familiar_model::{AgentKind, ErrorKind, Event, EventKind, Status};
pub use lines::{DEFAULT_MAX_LINE_BYTES, Line, LineSplitter, OwnedLine, Piece, Unfinished};
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

/// The whole input, when it is one JSON document pretty-printed over several lines: an array
/// whose first line opens it without closing it (`--output-format json`), or an object whose
/// first line is its `{` alone (a Gemini CLI session of the versions before 0.39, one JSON
/// document per file). A line of JSONL is never either.
fn multiline_array(input: &[u8]) -> Option<&[u8]> {
    let trimmed = input.trim_ascii();
    let first_line = trimmed.split(|&b| b == b'\n').next()?.trim_ascii();
    let array = first_line.starts_with(b"[") && !first_line.ends_with(b"]");
    let object = first_line == b"{";
    (array || object).then_some(trimmed)
}

/// The start of an input: its first line (whole, or up to the cap), or, when that line opens a
/// JSON array pretty-printed over several lines, the whole input (up to the cap).
enum Head {
    FirstLine(Vec<u8>),
    Array(Vec<u8>),
}

/// Read until the first newline (a pipe may deliver the first line in pieces), then decide
/// between JSONL and one pretty-printed JSON document. Shared by both readers.
/// `len`, when known, is the input's size: a long first line gets room at once
/// ([`lines::make_room`]).
fn read_head<R: std::io::Read>(
    reader: &mut R,
    len: Option<u64>,
    chunk: &mut [u8],
    cap: usize,
) -> std::io::Result<Head> {
    read_head_from(reader, len, chunk, cap, Vec::new())
}

/// [`read_head`] with the first bytes already read (`head`).
fn read_head_from<R: std::io::Read>(
    reader: &mut R,
    len: Option<u64>,
    chunk: &mut [u8],
    cap: usize,
    mut head: Vec<u8>,
) -> std::io::Result<Head> {
    while memchr::memchr(b'\n', &head).is_none() && head.len() <= cap {
        match reader.read(chunk) {
            Ok(0) => break,
            Ok(read) => {
                if head.len() + read > head.capacity() && head.len() >= lines::BIG_LINE {
                    let rest = len.map_or(0, |len| len.saturating_sub(head.len() as u64));
                    lines::make_room(&mut head, rest, cap + 1);
                }
                head.extend_from_slice(&chunk[..read]);
            }
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
    read_lines_with(reader, None, max_line_bytes, &mut Vec::new(), on_line)
}

/// [`read_lines`] reading into the caller's buffer `chunk`: a caller reading many inputs
/// (`familiar stats`) allocates (and the kernel zeroes) one buffer for all of them. The first
/// read, which nearly always holds the first line, is split where it lies, not copied. `len`,
/// when known (a file's size), lets a line longer than a read get room for the rest of the
/// input at once ([`LineSplitter::make_room`]) rather than a buffer that doubles as it grows.
pub fn read_lines_with<R: std::io::Read>(
    mut reader: R,
    len: Option<u64>,
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
        match read_head_from(&mut reader, len, chunk, max_line_bytes, head)? {
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
    let first = head.as_deref().unwrap_or(&chunk[..filled]);
    // Bytes of the input pushed to the splitter so far.
    let mut consumed = first.len() as u64;
    splitter.make_room(first, || len);
    push_lines(&mut splitter, first, &mut on_line)?;
    // A long first line is not held while the rest is read, nor after.
    if let Some(head) = head {
        let held = head.len();
        drop(head);
        familiar_model::memory::freed(held as u64);
    }
    loop {
        match reader.read(chunk) {
            Ok(0) => break,
            Ok(read) => {
                let left = || len.map(|len| len.saturating_sub(consumed));
                splitter.make_room(&chunk[..read], left);
                consumed += read as u64;
                let held = splitter.pending_len();
                push_lines(&mut splitter, &chunk[..read], &mut on_line)?;
                if splitter.pending_len() < held {
                    // The line held was completed, and its buffer freed.
                    familiar_model::memory::freed(held);
                }
            }
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
