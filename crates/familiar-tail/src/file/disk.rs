//! Positioned reads of a followed file itself, apart from the line stream: its identity
//! (device and inode), whether its first bytes still match the generation's fingerprint, and
//! where a primed start-up read begins ([`prime_start`]).

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};

use super::{FINGERPRINT_BYTES, OVERLAP_BYTES};

pub(super) fn identity(meta: &Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

/// A generation's first bytes (up to [`FINGERPRINT_BYTES`]) as a length and a hash: 48 bytes
/// held per followed file instead of 4 KiB (5,000 sessions held 20 MB of first bytes). Bytes
/// can be added as they are read and the state is that of all of them, however they were
/// split. Eight bytes a step (FxHash's mix), word `i` into lane `i % 4`: every read checks the
/// first bytes again, so the four lanes' independent chains run side by side (one chain's
/// multiplications wait on each other). FNV-1a's byte a step was a third of a watcher's time
/// at 1,000 live sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Fingerprint {
    len: usize,
    lanes: [u64; LANES],
    /// The bytes after the last whole word (`len % 8` of them), little-endian.
    pending: u64,
}

const LANES: usize = 4;

fn mix(lane: u64, word: u64) -> u64 {
    (lane.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95)
}

fn word(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

impl Fingerprint {
    pub(super) fn of(bytes: &[u8]) -> Fingerprint {
        let mut fingerprint = Fingerprint::default();
        fingerprint.extend(bytes);
        fingerprint
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Word number `index` of the bytes.
    fn mix(&mut self, index: usize, word: u64) {
        let lane = &mut self.lanes[index % LANES];
        *lane = mix(*lane, word);
    }

    /// Add the bytes that follow (the caller keeps to [`FINGERPRINT_BYTES`] in all).
    pub(super) fn extend(&mut self, mut bytes: &[u8]) {
        let mut filled = self.len % 8;
        // The word the next byte belongs to.
        let mut index = self.len / 8;
        self.len += bytes.len();
        if filled > 0 {
            while filled < 8 {
                let Some((&byte, rest)) = bytes.split_first() else {
                    return;
                };
                self.pending |= u64::from(byte) << (8 * filled);
                filled += 1;
                bytes = rest;
            }
            let word = std::mem::take(&mut self.pending);
            self.mix(index, word);
            index += 1;
        }
        while !index.is_multiple_of(LANES) && bytes.len() >= 8 {
            self.mix(index, word(bytes));
            (index, bytes) = (index + 1, &bytes[8..]);
        }
        let mut groups = bytes.chunks_exact(8 * LANES);
        for group in &mut groups {
            let [a, b, c, d] = &mut self.lanes;
            *a = mix(*a, word(&group[0..]));
            *b = mix(*b, word(&group[8..]));
            *c = mix(*c, word(&group[16..]));
            *d = mix(*d, word(&group[24..]));
            index += LANES;
        }
        let mut words = groups.remainder().chunks_exact(8);
        for chunk in &mut words {
            self.mix(index, word(chunk));
            index += 1;
        }
        for (at, &byte) in words.remainder().iter().enumerate() {
            self.pending |= u64::from(byte) << (8 * at);
        }
    }
}

/// The last bytes read of a generation, before its offset (up to [`OVERLAP_BYTES`]), as a
/// length and a hash. Each read starts that many bytes early and finds them unchanged, which
/// proves the new bytes are the same generation's, in the read itself: comparing the first
/// bytes instead took a second `pread` of 4 KiB and its hash for every change (a tenth of the
/// tailer's time at 1,000 live sessions). Empty when those bytes are not known (a generation
/// resumed after a restart or a rename): that read compares the first bytes instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Overlap {
    len: u8,
    hash: u64,
}

impl Overlap {
    /// The last [`OVERLAP_BYTES`] (or fewer) of `read`, the bytes before the new offset.
    pub(super) fn after(read: &[u8]) -> Overlap {
        let last = &read[read.len().saturating_sub(OVERLAP_BYTES)..];
        let fingerprint = Fingerprint::of(last);
        Overlap {
            len: last.len() as u8,
            hash: fingerprint
                .lanes
                .iter()
                .fold(fingerprint.pending, |hash, &lane| mix(hash, lane)),
        }
    }

    /// How many bytes before the offset the next read starts.
    pub(super) fn len(&self) -> usize {
        usize::from(self.len)
    }
}

/// Do the file's first bytes still give `fingerprint`?
pub(super) fn prefix_matches(file: &File, fingerprint: &Fingerprint) -> io::Result<bool> {
    if fingerprint.len == 0 {
        return Ok(true);
    }
    let mut head = [0u8; FINGERPRINT_BYTES];
    let head = &mut head[..fingerprint.len.min(FINGERPRINT_BYTES)];
    let read = read_at_most(file, head)?;
    Ok(read == fingerprint.len && Fingerprint::of(head) == *fingerprint)
}

/// Fill `buf` from the file's start as far as the file goes.
pub(super) fn read_at_most(file: &File, buf: &mut [u8]) -> io::Result<usize> {
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

    use std::fs;

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

#[cfg(test)]
mod fingerprint_tests {
    use super::{Fingerprint, OVERLAP_BYTES, Overlap};

    proptest::proptest! {
        /// However the first bytes arrive (the reads of a tailer cut them anywhere), the
        /// fingerprint is that of all of them; and a changed byte changes it.
        #[test]
        fn pieces_in_any_cut_give_the_same_fingerprint(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 1..512),
            cuts in proptest::collection::vec(0usize..512, 0..8),
            flip in 0usize..512,
        ) {
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % bytes.len()).collect();
            cuts.sort_unstable();
            let mut pieces = Fingerprint::default();
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                pieces.extend(&bytes[from..cut.max(from)]);
                from = cut.max(from);
            }
            proptest::prop_assert_eq!(pieces, Fingerprint::of(&bytes));
            let mut changed = bytes.clone();
            let at = flip % changed.len();
            changed[at] ^= 0x20;
            proptest::prop_assert_ne!(Fingerprint::of(&changed), Fingerprint::of(&bytes));
        }
    }

    #[test]
    fn an_overlap_is_the_last_bytes_read_and_tells_any_of_them_changed() {
        let line = b"{\"type\":\"user\",\"message\":{\"content\":\"a prompt of some length\"}}\n";
        let overlap = Overlap::after(line);
        assert_eq!(overlap.len(), OVERLAP_BYTES);
        // Only the last bytes count: what came before them in the read does not.
        assert_eq!(overlap, Overlap::after(&line[line.len() - OVERLAP_BYTES..]));
        assert_eq!(overlap, Overlap::after(&[b"xx", &line[..]].concat()));
        for at in line.len() - OVERLAP_BYTES..line.len() {
            let mut changed = line.to_vec();
            changed[at] ^= 0x01;
            assert_ne!(Overlap::after(&changed), overlap, "byte {at}");
        }
        // A read shorter than the overlap: all of it, and its length.
        assert_eq!(Overlap::after(b"{}\n").len(), 3);
        assert_ne!(Overlap::after(b"{}\n"), Overlap::after(b"[]\n"));
        assert_eq!(Overlap::after(b""), Overlap::default());
    }

    #[test]
    fn bytes_added_in_pieces_give_the_fingerprint_of_all_of_them() {
        let mut pieces = Fingerprint::of(b"{\"type\":");
        pieces.extend(b"\"user\"}");
        assert_eq!(pieces, Fingerprint::of(b"{\"type\":\"user\"}"));
        assert_eq!(pieces.len(), 15);
        assert_ne!(
            Fingerprint::of(b"{\"type\":\"user\"}"),
            Fingerprint::of(b"{\"type\":\"usEr\"}")
        );
    }
}
