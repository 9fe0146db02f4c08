//! Transcript normalizer: the pure "transform" core of Familiar.
//!
//! Claude Code writes each session as JSONL records (`user`, `assistant`, `system`, `summary`,
//! `progress`, ...; headless runs write `stream-json` with `init` and `result`). This crate turns
//! those bytes into the small event vocabulary of `familiar-model`, with the session state each
//! event carries (context-window use, status) and the metrics behind `familiar stats`.
//! It does no I/O: the tailer and the CLI feed it bytes through [`LineSplitter`] and
//! [`Normalizer::push_line`].
//!
//! - [`lines`]: byte chunks → complete lines, bounded memory.
//! - [`record`]: typed, borrowed serde views of the records.
//! - [`normalize`]: records → events and session state.
//! - [`tools`]: tool names → event kinds and targets.
//! - [`metrics`]: tokens, cost, counts.

use std::io::Read as _;

pub mod lines;
pub mod metrics;
pub mod normalize;
pub mod record;
pub mod tools;

pub use familiar_model::{ErrorKind, Event, EventKind, Status};
pub use lines::{DEFAULT_MAX_LINE_BYTES, Line, LineSplitter, Unfinished};
pub use metrics::{Metrics, Price, PriceTable, Summary, Tokens};
pub use normalize::{
    DEFAULT_CONTEXT_LIMIT, LARGE_CONTEXT_LIMIT, Normalizer, NormalizerConfig, think_level,
};

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

/// Feeds every complete line of `input` to `normalizer` and reports the unfinished tail.
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

/// Stream any reader through `normalizer` in bounded memory: `on_event` gets each event as
/// its line completes, `on_diagnostic` each skipped or unfinished line. The reader is the
/// caller's (a file, stdin, a test buffer); this crate opens nothing itself.
pub fn normalize_read<R: std::io::Read>(
    mut reader: R,
    normalizer: &mut Normalizer,
    mut on_event: impl FnMut(Event) -> std::io::Result<()>,
    mut on_diagnostic: impl FnMut(Diagnostic),
) -> std::io::Result<()> {
    const CHUNK: usize = 1 << 20;
    let mut chunk = vec![0u8; CHUNK];
    let mut splitter = LineSplitter::new(normalizer.config().max_line_bytes);
    let mut events = Vec::new();
    let mut first_chunk = true;
    let mut failure: Option<std::io::Error> = None;
    loop {
        let read = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if first_chunk {
            first_chunk = false;
            if multiline_array(&chunk[..read]).is_some() {
                // A pretty-printed JSON document: it is one value, so read it whole (capped).
                let mut whole = chunk[..read].to_vec();
                let cap = normalizer.config().max_line_bytes as u64;
                (&mut reader)
                    .take(cap.saturating_sub(read as u64) + 1)
                    .read_to_end(&mut whole)?;
                let mut diagnostics = Vec::new();
                feed(normalizer, &whole, &mut events, &mut diagnostics);
                diagnostics.into_iter().for_each(&mut on_diagnostic);
                for event in events.drain(..) {
                    on_event(event)?;
                }
                return Ok(());
            }
        }
        splitter.push(&chunk[..read], |line| {
            if failure.is_some() {
                return;
            }
            match line {
                Line::Complete { bytes, number } => {
                    if let Err(diagnostic) = normalizer.push_line(bytes, number, &mut events) {
                        on_diagnostic(diagnostic);
                    }
                }
                Line::TooLong { len, number } => {
                    normalizer.skipped_line();
                    on_diagnostic(Diagnostic {
                        line: number,
                        kind: DiagnosticKind::TooLong {
                            len,
                            cap: normalizer.config().max_line_bytes as u64,
                        },
                    });
                }
            }
            for event in events.drain(..) {
                if let Err(err) = on_event(event) {
                    failure = Some(err);
                    break;
                }
            }
        });
        if let Some(err) = failure.take() {
            return Err(err);
        }
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
