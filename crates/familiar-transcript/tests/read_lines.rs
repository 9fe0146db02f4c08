//! [`read_lines_with`] (one read buffer for many inputs, the first read split in place) hands
//! out exactly the lines of a plain model of the input: one [`LineSplitter`] over all of it,
//! or, for a JSON array pretty-printed over several lines, the whole array as line 1; with
//! the buffer reused across inputs, whatever sizes the reads come in.

mod common;

use std::io::Read;

use common::real_fixtures;
use familiar_transcript::{Line, LineSplitter, ReadLine, read_lines, read_lines_with};

/// What a reader hands out: owned, to compare.
#[derive(Debug, PartialEq, Eq)]
enum Got {
    Line(u64, Vec<u8>),
    TooLong(u64, u64),
    Unfinished(u64, u64),
}

/// The model: the whole input at once.
fn model(input: &[u8], cap: usize) -> Vec<Got> {
    let trimmed = input.trim_ascii();
    let first = trimmed
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or(b"")
        .trim_ascii();
    if first.starts_with(b"[") && !first.ends_with(b"]") {
        return vec![Got::Line(1, trimmed.to_vec())];
    }
    let mut got = Vec::new();
    let mut splitter = LineSplitter::new(cap);
    splitter.push(input, |line| {
        got.push(match line {
            Line::Complete { bytes, number } => Got::Line(number, bytes.to_vec()),
            Line::TooLong { len, number } => Got::TooLong(number, len),
        })
    });
    if let Some(unfinished) = splitter.unfinished()
        && !unfinished.bytes.is_some_and(|b| b.trim_ascii().is_empty())
    {
        got.push(Got::Unfinished(unfinished.number, unfinished.len));
    }
    got
}

/// A reader that returns at most `piece` bytes per read (a pipe, a slow writer).
struct Pieces<'a> {
    bytes: &'a [u8],
    piece: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.piece.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

fn read(input: &[u8], cap: usize, piece: usize, chunk: Option<&mut Vec<u8>>) -> Vec<Got> {
    let mut got = Vec::new();
    let reader = Pieces {
        bytes: input,
        piece,
    };
    let on_line = |line: ReadLine<'_>| {
        got.push(match line {
            ReadLine::Line { number, bytes } => Got::Line(number, bytes.to_vec()),
            ReadLine::TooLong { number, len } => Got::TooLong(number, len),
            ReadLine::Unfinished { number, len } => Got::Unfinished(number, len),
        });
        Ok(())
    };
    match chunk {
        Some(chunk) => read_lines_with(reader, Some(input.len() as u64), cap, chunk, on_line),
        None => read_lines(reader, cap, on_line),
    }
    .expect("in-memory read");
    got
}

#[test]
fn one_buffer_reused_across_inputs_gives_the_lines_of_each_input() {
    let long_first_line = {
        // A first line longer than the read buffer (1 MiB): read_head's own path.
        let mut line = format!("{{\"type\":\"user\",\"x\":\"{}\"}}\n", "a".repeat(3 << 20));
        line.push_str("{\"type\":\"assistant\"}\n{\"unfinished\"");
        line.into_bytes()
    };
    let mut inputs: Vec<(Vec<u8>, usize)> = vec![
        (b"".to_vec(), 1 << 20),
        (b"{\"a\":1}".to_vec(), 1 << 20),
        (b"{\"a\":1}\r\n\n{\"b\":2}\n  \n".to_vec(), 1 << 20),
        (b"{\"a\":1}\n{\"b\":2}\n   ".to_vec(), 1 << 20),
        (
            b"[\n  {\"type\":\"user\"},\n  {\"type\":\"assistant\"}\n]\n".to_vec(),
            1 << 20,
        ),
        (b"[{\"type\":\"user\"}]\n{\"a\":1}\n".to_vec(), 1 << 20),
        // Lines over a small cap, the first one among them.
        (
            b"{\"long\":\"0123456789\"}\n{}\n{\"long\":\"0123456789\"}\n{}".to_vec(),
            8,
        ),
        (long_first_line, 64 << 20),
        (long_first_line_over_cap(), 1 << 20),
        (array_with_a_long_first_line(), 64 << 20),
    ];
    for path in real_fixtures() {
        inputs.push((std::fs::read(&path).expect("fixture"), 64 << 20));
    }
    let mut chunk = Vec::new();
    for piece in [usize::MAX, 1 << 20, 4093, 7] {
        for (index, (input, cap)) in inputs.iter().enumerate() {
            if piece == 7 && input.len() > 1 << 20 {
                continue; // seconds of 7-byte reads: the small inputs cover that shape
            }
            let expected = model(input, *cap);
            assert_eq!(
                read(input, *cap, piece, Some(&mut chunk)),
                expected,
                "input {index}, reads of {piece}, reused buffer"
            );
            assert_eq!(
                read(input, *cap, piece, None),
                expected,
                "input {index}, reads of {piece}"
            );
        }
    }
}

/// A first line over the cap and over the read buffer, then a good line.
fn long_first_line_over_cap() -> Vec<u8> {
    let mut line = format!("{{\"x\":\"{}\"}}\n", "b".repeat(2 << 20)).into_bytes();
    line.extend_from_slice(b"{\"type\":\"user\"}\n");
    line
}

/// A pretty-printed array whose first line is longer than the read buffer and has a `]`
/// exactly where the first read ends: only the whole first line tells it is an array.
fn array_with_a_long_first_line() -> Vec<u8> {
    let open = "[{\"x\":\"";
    let mut text = open.to_owned();
    text.push_str(&"a".repeat((1 << 20) - 1 - open.len()));
    text.push_str("]yyy\"},\n{\"y\":1}\n]\n");
    assert_eq!(text.as_bytes()[(1 << 20) - 1], b']');
    text.into_bytes()
}
