//! Splitting a byte stream into lines, shared by file reading (`familiar events`) and the live
//! tailer, so both see exactly the same lines whatever the chunk boundaries.
//!
//! A line is handed out only once its `\n` has arrived; the bytes after the last newline are an
//! unfinished write, kept until more arrives. A line longer than the cap is not buffered: its
//! bytes are counted and dropped until its newline, so memory stays bounded by the cap.

/// Default cap on one line: 64 MiB.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// One piece of output from [`LineSplitter::push`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A complete line, without its `\n` (and without a trailing `\r`).
    Complete { bytes: &'a [u8], number: u64 },
    /// A line over the cap, skipped; `len` counts its bytes without the newline.
    TooLong { len: u64, number: u64 },
}

/// One piece of output from [`LineSplitter::push_owned`].
#[derive(Debug, PartialEq, Eq)]
pub enum OwnedLine {
    /// A complete line, without its `\n` (and without a trailing `\r`).
    Complete { bytes: Vec<u8>, number: u64 },
    /// A line over the cap, skipped; `len` counts its bytes without the newline.
    TooLong { len: u64, number: u64 },
}

/// A completed line as the splitter has it ([`LineSplitter::push_split`]).
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Within the chunk fed (without its `\n` and trailing `\r`).
    InChunk(&'a [u8]),
    /// Gathered from several chunks in the splitter's buffer, which the taker may keep
    /// (`std::mem::take`, or a swap with a buffer of its own) instead of copying it.
    Held(&'a mut Vec<u8>),
    /// Over the cap, skipped: its length without the newline.
    TooLong(u64),
}

/// An unfinished line this long is big ([`LineSplitter::needs_room`]).
pub const BIG_LINE: usize = 1 << 20;

/// Incremental line splitter with a partial-line buffer and a length cap.
#[derive(Debug, Clone)]
pub struct LineSplitter {
    max_line_bytes: usize,
    partial: Vec<u8>,
    /// Bytes of the current over-long line seen so far (`Some` while skipping one).
    skipping: Option<u64>,
    /// Number of the next line to complete (1-based).
    next_number: u64,
}

impl LineSplitter {
    pub fn new(max_line_bytes: usize) -> LineSplitter {
        LineSplitter {
            max_line_bytes: max_line_bytes.max(1),
            partial: Vec::new(),
            skipping: None,
            next_number: 1,
        }
    }

    /// Start numbering at `number` (the tailer resumes in the middle of a file).
    pub fn with_first_line(mut self, number: u64) -> LineSplitter {
        self.next_number = number.max(1);
        self
    }

    /// Number the next complete line will get.
    pub fn next_line_number(&self) -> u64 {
        self.next_number
    }

    /// Would pushing `chunk` grow the buffer of a big unfinished line (over [`BIG_LINE`])?
    /// Then the reader can say how much can follow at most ([`LineSplitter::room_for`]).
    pub fn needs_room(&self, chunk: &[u8]) -> bool {
        let at_most = self.partial.len().saturating_add(chunk.len());
        if self.skipping.is_some()
            || self.partial.is_empty()
            || at_most <= self.partial.capacity()
            || at_most <= BIG_LINE
        {
            return false;
        }
        // Only what comes before the line's end counts (a read of 1 MiB that ends a short
        // line and goes on with others does not make it big).
        let line = self.partial.len() + memchr::memchr(b'\n', chunk).unwrap_or(chunk.len());
        line > self.partial.capacity() && line > BIG_LINE
    }

    /// At most `rest` more bytes follow what was pushed so far (what is left of the input as
    /// far as it is written): the unfinished line gets room for all of them at once, up to
    /// the line cap, instead of a buffer that doubles, which holds its old and new copies at
    /// once while it moves (a watcher read a 50 MB record at 2.2 times its size). At least
    /// four times what it holds, for a line still being written: room not yet written to is
    /// address space, not memory, and each move then copies a quarter of the new size at most.
    pub fn room_for(&mut self, rest: u64) {
        make_room(&mut self.partial, rest, self.max_line_bytes);
    }

    /// Every reader's one rule for a big line: when [`LineSplitter::needs_room`]`(chunk)`,
    /// exactly its room if it ends in `chunk`, else [`LineSplitter::room_for`] what is left
    /// of the input before `chunk`, asked of `left` only then (a file's size, less what was
    /// read; `None`: not known, a pipe, and the line gets four times what it holds).
    /// Returns the size of the line's old buffer when it moved to a bigger one (the old one
    /// is freed, and the caller may give it back at once), else 0.
    pub fn make_room(&mut self, chunk: &[u8], left: impl FnOnce() -> Option<u64>) -> u64 {
        if !self.needs_room(chunk) {
            return 0;
        }
        let (held, before) = (self.partial.len() as u64, self.partial.as_ptr());
        match memchr::memchr(b'\n', chunk) {
            Some(end) => self.partial.reserve_exact(end),
            None => self.room_for(left().unwrap_or(0)),
        }
        if self.partial.as_ptr() == before {
            0
        } else {
            held
        }
    }

    /// Bytes of an unfinished line held (or being skipped) right now.
    pub fn pending_len(&self) -> u64 {
        self.skipping.unwrap_or(self.partial.len() as u64)
    }

    /// Feed a chunk; `on_line` is called for every line the chunk completes, in order.
    pub fn push(&mut self, chunk: &[u8], mut on_line: impl FnMut(Line<'_>)) {
        self.push_split(chunk, |piece, number| {
            on_line(match piece {
                Piece::InChunk(bytes) => Line::Complete { bytes, number },
                Piece::Held(buffer) => Line::Complete {
                    bytes: buffer,
                    number,
                },
                Piece::TooLong(len) => Line::TooLong { len, number },
            })
        });
    }

    /// [`LineSplitter::push`], handing each line over as its own bytes: a line that arrived in
    /// pieces is the buffer it was gathered in, not a copy of it (a 50 MB record is held
    /// once, not twice).
    pub fn push_owned(&mut self, chunk: &[u8], mut on_line: impl FnMut(OwnedLine)) {
        self.push_split(chunk, |piece, number| {
            on_line(match piece {
                Piece::InChunk(bytes) => OwnedLine::Complete {
                    bytes: bytes.to_vec(),
                    number,
                },
                Piece::Held(buffer) => OwnedLine::Complete {
                    bytes: std::mem::take(buffer),
                    number,
                },
                Piece::TooLong(len) => OwnedLine::TooLong { len, number },
            })
        });
    }

    /// Feed a chunk; `on_line` gets every line it completes, in order, with its number, as
    /// the splitter has it: a line gathered from several chunks can be taken, not copied.
    pub fn push_split(&mut self, mut chunk: &[u8], mut on_line: impl FnMut(Piece<'_>, u64)) {
        while !chunk.is_empty() {
            let Some(newline) = memchr::memchr(b'\n', chunk) else {
                self.hold(chunk);
                return;
            };
            let (head, rest) = (&chunk[..newline], &chunk[newline + 1..]);
            chunk = rest;
            let number = self.next_number;
            self.next_number += 1;
            if let Some(seen) = self.skipping.take() {
                on_line(Piece::TooLong(seen + head.len() as u64), number);
            } else if self.partial.is_empty() {
                if head.len() > self.max_line_bytes {
                    on_line(Piece::TooLong(head.len() as u64), number);
                } else {
                    on_line(Piece::InChunk(trim_cr(head)), number);
                }
            } else if self.partial.len() + head.len() > self.max_line_bytes {
                let len = (self.partial.len() + head.len()) as u64;
                self.partial.clear();
                on_line(Piece::TooLong(len), number);
            } else {
                self.partial.extend_from_slice(head);
                if self.partial.last() == Some(&b'\r') {
                    self.partial.pop();
                }
                on_line(Piece::Held(&mut self.partial), number);
                self.partial.clear();
            }
        }
        // Give back memory after a big line so a long-running tailer stays small.
        if self.partial.capacity() > 1 << 20 && self.partial.is_empty() {
            self.partial = Vec::new();
        }
    }

    fn hold(&mut self, bytes: &[u8]) {
        if let Some(seen) = self.skipping.as_mut() {
            *seen += bytes.len() as u64;
        } else if self.partial.len() + bytes.len() > self.max_line_bytes {
            self.skipping = Some((self.partial.len() + bytes.len()) as u64);
            self.partial = Vec::new();
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }

    /// The unfinished last line, if any bytes arrived after the last newline. Not consumed:
    /// a tailer keeps waiting for the rest; a one-shot reader reports it as unfinished.
    pub fn unfinished(&self) -> Option<Unfinished<'_>> {
        match self.skipping {
            Some(len) => Some(Unfinished {
                bytes: None,
                len,
                number: self.next_number,
            }),
            None if !self.partial.is_empty() => Some(Unfinished {
                bytes: Some(&self.partial),
                len: self.partial.len() as u64,
                number: self.next_number,
            }),
            None => None,
        }
    }

    /// Forget everything (the file was truncated or replaced); numbering restarts at 1.
    pub fn reset(&mut self) {
        self.partial = Vec::new();
        self.skipping = None;
        self.next_number = 1;
    }
}

impl Default for LineSplitter {
    fn default() -> LineSplitter {
        LineSplitter::new(DEFAULT_MAX_LINE_BYTES)
    }
}

/// Bytes after the last newline.
#[derive(Debug, PartialEq, Eq)]
pub struct Unfinished<'a> {
    /// `None` when the line is already over the cap and was not kept.
    pub bytes: Option<&'a [u8]>,
    pub len: u64,
    pub number: u64,
}

/// Room in `line` for `rest` more bytes at once, or four times what it holds, up to `cap`
/// ([`LineSplitter::room_for`]).
pub(crate) fn make_room(line: &mut Vec<u8>, rest: u64, cap: usize) {
    let len = line.len();
    let wanted = len
        .saturating_add(usize::try_from(rest).unwrap_or(usize::MAX))
        .max(len.saturating_mul(4))
        .min(cap.max(len));
    if wanted > line.capacity() {
        line.reserve_exact(wanted - len);
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(splitter: &mut LineSplitter, chunks: &[&[u8]]) -> Vec<String> {
        let mut out = Vec::new();
        for chunk in chunks {
            splitter.push(chunk, |line| {
                out.push(match line {
                    Line::Complete { bytes, number } => {
                        format!("{number}:{}", String::from_utf8_lossy(bytes))
                    }
                    Line::TooLong { len, number } => format!("{number}:too long ({len})"),
                })
            });
        }
        out
    }

    /// A big line told how much can follow is gathered in one buffer that never moves (no
    /// doubling that would hold two copies), and comes out whole; a chunk whose newline ends
    /// the line within the room asks for no more.
    #[test]
    fn a_big_line_given_room_for_the_rest_never_moves() {
        let line: Vec<u8> = (0..3 * BIG_LINE).map(|i| b'a' + (i % 26) as u8).collect();
        let mut input = line.clone();
        input.extend_from_slice(b"\nnext\n");
        let mut splitter = LineSplitter::new(DEFAULT_MAX_LINE_BYTES);
        let mut lines = Vec::new();
        let (mut asked, mut buffer) = (0, None);
        for (at, chunk) in input
            .chunks(64 * 1024)
            .enumerate()
            .map(|(n, c)| (n * 64 * 1024, c))
        {
            if splitter.needs_room(chunk) {
                asked += 1;
                splitter.room_for((input.len() - at) as u64);
                buffer = Some(splitter.partial.as_ptr());
            }
            if let Some(buffer) = buffer
                && !splitter.partial.is_empty()
            {
                assert_eq!(splitter.partial.as_ptr(), buffer, "moved at {at}");
            }
            splitter.push_owned(chunk, |owned| {
                if let OwnedLine::Complete { bytes, .. } = owned {
                    lines.push(bytes);
                }
            });
        }
        assert_eq!(asked, 1);
        assert_eq!(lines, [line, b"next".to_vec()]);
    }

    #[test]
    fn only_a_line_over_a_mib_asks_for_room_however_large_the_read() {
        // Reads of 1 MiB (the bulk reader's): a short line begun in one and ended early in
        // the next is not big, whatever follows it.
        let mut splitter = LineSplitter::new(DEFAULT_MAX_LINE_BYTES);
        splitter.push(b"{\"a short line", |_| {});
        let mut read = b"\"}\n".to_vec();
        read.resize(BIG_LINE, b'x');
        assert!(!splitter.needs_room(&read));
        // One that goes on past a MiB is, and gets exactly its room when it ends in the read.
        let mut long = vec![b'y'; BIG_LINE];
        long.extend_from_slice(b"\nnext");
        assert!(splitter.needs_room(&long));
        splitter.make_room(&long, || None);
        let held = splitter.partial.as_ptr();
        let mut lines = Vec::new();
        splitter.push(&long, |line| {
            if let Line::Complete { bytes, .. } = line {
                lines.push((bytes.len(), bytes.as_ptr()));
            }
        });
        assert_eq!(lines, [(b"{\"a short line".len() + BIG_LINE, held)]);
    }

    #[test]
    fn owned_lines_are_the_lines() {
        let chunks: [&[u8]; 4] = [b"{\"a\"", b":1}\r\n{\"b\":2}\n{\"c", b"\":3", b"}\n"];
        let mut borrowed = LineSplitter::default();
        let want = collect(&mut borrowed, &chunks);
        let mut owned = LineSplitter::default();
        let mut got = Vec::new();
        for chunk in chunks {
            owned.push_owned(chunk, |line| {
                got.push(match line {
                    OwnedLine::Complete { bytes, number } => {
                        format!("{number}:{}", String::from_utf8_lossy(&bytes))
                    }
                    OwnedLine::TooLong { len, number } => format!("{number}:too long ({len})"),
                });
            });
        }
        assert_eq!(got, want);
        assert_eq!(want, ["1:{\"a\":1}", "2:{\"b\":2}", "3:{\"c\":3}"]);
    }

    #[test]
    fn a_line_is_given_only_once_its_newline_arrives() {
        let mut splitter = LineSplitter::default();
        assert_eq!(
            collect(&mut splitter, &[b"{\"a\"", b":1"]),
            Vec::<String>::new()
        );
        assert_eq!(splitter.pending_len(), 6);
        assert_eq!(
            collect(&mut splitter, &[b"}\n{\"b\":2}\n{"]),
            ["1:{\"a\":1}", "2:{\"b\":2}"]
        );
        let unfinished = splitter.unfinished().expect("a partial line is held");
        assert_eq!(unfinished.bytes, Some(&b"{"[..]));
        assert_eq!(unfinished.number, 3);
    }

    #[test]
    fn lines_over_the_cap_are_skipped_in_bounded_memory() {
        let mut splitter = LineSplitter::new(8);
        let out = collect(
            &mut splitter,
            &[b"short\n0123", b"456789", b"abcdef", b"\nok\n0123456789\n"],
        );
        assert_eq!(
            out,
            ["1:short", "2:too long (16)", "3:ok", "4:too long (10)"]
        );
        assert!(splitter.partial.capacity() <= 16);
    }

    #[test]
    fn crlf_line_endings_are_trimmed_and_empty_lines_counted() {
        let mut splitter = LineSplitter::default();
        assert_eq!(
            collect(&mut splitter, &[b"a\r\n\nb\n"]),
            ["1:a", "2:", "3:b"]
        );
    }
}
