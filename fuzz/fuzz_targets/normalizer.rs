//! Fuzz target: arbitrary bytes through the normalizer, three ways.
//!
//! The same input goes through `normalize_bytes` (the whole input at once), through a
//! `LineSplitter` fed in arbitrary chunks with `Normalizer::push_line` per line (what the live
//! tailer does), and through `normalize_read` from a reader that returns arbitrary short reads
//! (what `familiar events` does on a pipe). Besides "never panics", the oracle is that all three
//! agree on every event and diagnostic: chunk boundaries must never change the result.
#![no_main]

use std::io::Read;

use familiar_transcript::usage::{self, Ledger};
use familiar_transcript::{
    Diagnostic, DiagnosticKind, Event, Line, LineSplitter, Normalizer, NormalizerConfig, OwnedLine,
    normalize_bytes, normalize_read,
};
use libfuzzer_sys::fuzz_target;

/// Small deterministic generator: chunk sizes are derived from the input itself, so a crash
/// reproduces from the artifact alone and the corpus stays plain transcript bytes.
struct Rng(u64);

impl Rng {
    fn new(data: &[u8]) -> Rng {
        // FNV-1a over the input.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in data {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        Rng(hash | 1)
    }

    fn next(&mut self) -> u64 {
        // xorshift64
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A chunk length: mostly tiny (to split inside UTF-8 sequences and `\r\n`), sometimes big.
    fn chunk(&mut self) -> usize {
        match self.next() % 8 {
            0..=3 => 1 + (self.next() % 4) as usize,
            4..=6 => 1 + (self.next() % 200) as usize,
            _ => 1 + (self.next() % 70_000) as usize,
        }
    }
}

/// A reader handing out the input in the generator's chunk sizes.
struct ChunkReader<'a> {
    data: &'a [u8],
    rng: Rng,
}

impl Read for ChunkReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rng.chunk().min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// A line out of the splitter, whichever way it was handed over.
enum Piece {
    Complete(Vec<u8>, u64),
    TooLong(u64, u64),
}

/// The live tailer's way: a splitter fed in chunks (each handed over by `push` or by
/// `push_owned`, as the tailer does), one `push_line` per complete line, feeding a usage
/// ledger from the same parse as `familiar stats` does.
fn by_lines(
    data: &[u8],
    config: &NormalizerConfig,
    rng: &mut Rng,
) -> ((Vec<Event>, Vec<Diagnostic>), Ledger) {
    let mut normalizer = Normalizer::new(config.clone());
    let mut ledger = Ledger::new();
    let mut splitter = LineSplitter::new(config.max_line_bytes);
    let (mut events, mut diagnostics) = (Vec::new(), Vec::new());
    let mut rest = data;
    let mut pieces = Vec::new();
    while !rest.is_empty() {
        let n = rng.chunk().min(rest.len());
        let (chunk, tail) = rest.split_at(n);
        rest = tail;
        if rng.next() % 2 == 0 {
            splitter.push(chunk, |line| {
                pieces.push(match line {
                    Line::Complete { bytes, number } => Piece::Complete(bytes.to_vec(), number),
                    Line::TooLong { len, number } => Piece::TooLong(len, number),
                })
            });
        } else {
            splitter.push_owned(chunk, |line| {
                pieces.push(match line {
                    OwnedLine::Complete { bytes, number } => Piece::Complete(bytes, number),
                    OwnedLine::TooLong { len, number } => Piece::TooLong(len, number),
                })
            });
        }
        for piece in pieces.drain(..) {
            match piece {
                Piece::Complete(bytes, number) => {
                    let pushed =
                        usage::push_line(&mut normalizer, &mut ledger, &bytes, number, &mut events);
                    if let Err(diagnostic) = pushed {
                        diagnostics.push(diagnostic);
                    }
                }
                Piece::TooLong(len, number) => {
                    normalizer.skipped_line();
                    diagnostics.push(Diagnostic {
                        line: number,
                        kind: DiagnosticKind::TooLong {
                            len,
                            cap: config.max_line_bytes as u64,
                        },
                    });
                }
            }
        }
    }
    // The input ended: what waited for a later record goes out (as `normalize_bytes` does).
    normalizer.flush(&mut events);
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
    ((events, diagnostics), ledger)
}

fuzz_target!(|data: &[u8]| {
    let mut rng = Rng::new(data);
    let config = NormalizerConfig {
        // A small cap now and then, so over-long lines (and their split across chunks) happen.
        max_line_bytes: match rng.next() % 4 {
            0 => 1 + (rng.next() % 300) as usize,
            _ => familiar_transcript::DEFAULT_MAX_LINE_BYTES,
        },
        context_limit: None,
        keep_raw: rng.next() % 2 == 0,
        ..NormalizerConfig::default()
    };

    let whole = normalize_bytes(data, &config);

    // A document that opens a JSON array is read whole by design, so only the line-by-line
    // paths are compared on everything else.
    if data.trim_ascii_start().starts_with(b"[") {
        return;
    }

    let (lines, ledger) = by_lines(data, &config, &mut rng);
    assert_eq!(
        whole, lines,
        "chunked LineSplitter + push_line differs from normalize_bytes"
    );
    // `familiar stats` counts usage from the normalizer's parse of each line; scanning the
    // text alone must count the same (lines over a small cap are skipped by the splitter
    // only, so only with the default cap).
    if config.max_line_bytes == familiar_transcript::DEFAULT_MAX_LINE_BYTES {
        let scanned = usage::scan_bytes(data);
        assert_eq!(ledger.tokens_by_model(), scanned.tokens_by_model());
    }

    let mut normalizer = Normalizer::new(config.clone());
    let (mut events, mut diagnostics) = (Vec::new(), Vec::new());
    let reader = ChunkReader {
        data,
        rng: Rng(rng.next() | 1),
    };
    let result = normalize_read(
        reader,
        &mut normalizer,
        |event| {
            events.push(event);
            Ok(())
        },
        |diagnostic| diagnostics.push(diagnostic),
    );
    assert!(result.is_ok());
    // normalize_read reports diagnostics as each batch is flushed; the order by line is the
    // contract, so compare sorted by line.
    let mut whole_diagnostics = whole.1.clone();
    whole_diagnostics.sort_by_key(|d| d.line);
    diagnostics.sort_by_key(|d| d.line);
    assert_eq!(
        whole.0, events,
        "normalize_read (short reads) differs from normalize_bytes"
    );
    assert_eq!(whole_diagnostics, diagnostics);
});
