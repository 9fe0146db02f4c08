//! Byte-level string scanning for [`super`]: where the next `"`, `\` or control byte of a
//! JSON string lies, and for a long string which characters its backslashes escape (64 bytes
//! a step, SSE2 masks on x86-64, a plain loop elsewhere); how long an escape is. No JSON
//! structure here: the cursor in `mod.rs` decides what bytes mean.

/// Bit i set when byte `at + i` is `"`, `\` or a control byte, for the 64 bytes from `at`;
/// `None` when fewer than 64 are left. A string's first window: most strings (keys, ids,
/// names) end in it before any escape.
#[inline]
pub(super) fn window_mask(bytes: &[u8], at: usize) -> Option<u64> {
    let window: &[u8; WINDOW] = bytes.get(at..at + WINDOW)?.try_into().ok()?;
    let mut mask = 0u64;
    for (index, chunk) in window.chunks_exact(16).enumerate() {
        let chunk: &[u8; 16] = chunk.try_into().ok()?;
        mask |= u64::from(special_mask(chunk)) << (16 * index);
    }
    Some(mask)
}

/// What a long string's window holds, one bit a byte (bit i for byte `at + i`).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(super) struct Masks {
    pub(super) quote: u64,
    pub(super) backslash: u64,
    /// Below 0x20: refused anywhere in a string.
    pub(super) control: u64,
    /// The escapes nearly every text uses after a backslash besides `"` and `\`: `n`, `t`.
    pub(super) common: u64,
}

/// [`Masks`] of the 64 bytes from `at`; `None` when fewer than 64 are left.
#[inline]
pub(super) fn window_masks(bytes: &[u8], at: usize) -> Option<Masks> {
    let window: &[u8; WINDOW] = bytes.get(at..at + WINDOW)?.try_into().ok()?;
    let mut masks = Masks::default();
    for (index, chunk) in window.chunks_exact(16).enumerate() {
        let chunk: &[u8; 16] = chunk.try_into().ok()?;
        let part = chunk_masks(chunk);
        let shift = 16 * index;
        masks.quote |= u64::from(part.quote) << shift;
        masks.backslash |= u64::from(part.backslash) << shift;
        masks.control |= u64::from(part.control) << shift;
        masks.common |= u64::from(part.common) << shift;
    }
    Some(masks)
}

/// The characters a window's backslashes escape (the byte after each backslash that is not
/// itself escaped), without a branch: simdjson's carry-less odd-run trick. `carry` is 1 when
/// the window's first byte is escaped by the last backslash of the window before, and is set
/// for the next window.
#[inline]
pub(super) fn escaped(backslash: u64, carry: &mut u64) -> u64 {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let backslash = backslash & !*carry;
    let follows = (backslash << 1) | *carry;
    let odd_starts = backslash & !EVEN & !follows;
    let (even_runs, overflow) = odd_starts.overflowing_add(backslash);
    *carry = u64::from(overflow);
    (EVEN ^ (even_runs << 1)) & follows
}

/// Bytes of a string examined at once.
pub(super) const WINDOW: usize = 64;

/// One chunk's masks (16 bits of [`Masks`]).
#[derive(Clone, Copy)]
struct ChunkMasks {
    quote: u32,
    backslash: u32,
    control: u32,
    common: u32,
}

#[cfg(target_arch = "x86_64")]
use sse2::{chunk_masks, special_mask};

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    use super::ChunkMasks;

    /// The 16 bytes, and where they are `"`, `\` and below 0x20 (0xff in each such byte).
    #[inline]
    fn specials(chunk: &[u8; 16]) -> [__m128i; 4] {
        // SAFETY: SSE2 is part of the x86-64 baseline (every CPU this runs on has it), and the
        // unaligned load reads exactly the 16 bytes `chunk` refers to.
        unsafe {
            let bytes = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
            // min(b, 0x1f) == b exactly when b <= 0x1f (unsigned).
            let control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
            [bytes, quote, backslash, control]
        }
    }

    /// Bit i set when byte i of the 16 is `"`, `\` or below 0x20: one mask where a long
    /// string's window needs four.
    #[inline]
    pub(super) fn special_mask(chunk: &[u8; 16]) -> u32 {
        let [_, quote, backslash, control] = specials(chunk);
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe { _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32 }
    }

    #[inline]
    pub(super) fn chunk_masks(chunk: &[u8; 16]) -> ChunkMasks {
        let [bytes, quote, backslash, control] = specials(chunk);
        // SAFETY: SSE2 is part of the x86-64 baseline.
        unsafe {
            let equal = |byte: u8| _mm_cmpeq_epi8(bytes, _mm_set1_epi8(byte as i8));
            ChunkMasks {
                quote: _mm_movemask_epi8(quote) as u32,
                backslash: _mm_movemask_epi8(backslash) as u32,
                control: _mm_movemask_epi8(control) as u32,
                common: _mm_movemask_epi8(_mm_or_si128(equal(b'n'), equal(b't'))) as u32,
            }
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn special_mask(chunk: &[u8; 16]) -> u32 {
    let masks = chunk_masks(chunk);
    masks.quote | masks.backslash | masks.control
}

#[cfg(not(target_arch = "x86_64"))]
#[inline]
fn chunk_masks(chunk: &[u8; 16]) -> ChunkMasks {
    let mut masks = ChunkMasks {
        quote: 0,
        backslash: 0,
        control: 0,
        common: 0,
    };
    for (index, &byte) in chunk.iter().enumerate() {
        masks.quote |= u32::from(byte == b'"') << index;
        masks.backslash |= u32::from(byte == b'\\') << index;
        masks.control |= u32::from(byte < 0x20) << index;
        masks.common |= u32::from(byte == b'n' || byte == b't') << index;
    }
    masks
}

/// Length of the escape after a backslash (`n`, `"`, `u0041`, ...), if it is one.
#[inline]
pub(super) fn escape_len(after: &[u8]) -> Option<usize> {
    match after.first()? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(1),
        b'u' => after
            .get(1..5)?
            .iter()
            .all(u8::is_ascii_hexdigit)
            .then_some(5),
        _ => None,
    }
}

/// The contents of a JSON string (between its quotes, already validated by
/// [`super::cursor::Cursor::string`]) with its escapes decoded, in one allocation no larger
/// than the contents: a decoded escape is never longer than its text. (serde_json decodes into
/// a buffer grown by doubling and then copies it: a 20 MB text peaked at 2.4 times its size on
/// top of its line.) `None` where serde_json refuses the string: a lone surrogate.
pub(super) fn unescape(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(at) = memchr::memchr(b'\\', rest.as_bytes()) {
        out.push_str(&rest[..at]);
        let (decoded, len) = escape(rest.as_bytes().get(at..)?)?;
        out.push(decoded);
        rest = rest.get(at + len..)?;
    }
    out.push_str(rest);
    Some(out)
}

/// [`unescape`] of the contents `buffer[start..end]` (valid UTF-8, validated as a string by
/// the cursor), decoded in place at the buffer's start, which then becomes the decoded text:
/// no second allocation. A decoded escape is never longer than its text, so what is written
/// never overtakes what is still to read.
pub(super) fn unescape_in_place(mut buffer: Vec<u8>, start: usize, end: usize) -> Option<String> {
    let (mut read, mut written) = (start, 0);
    while let Some(at) = memchr::memchr(b'\\', buffer.get(read..end)?) {
        buffer.copy_within(read..read + at, written);
        written += at;
        read += at;
        let (decoded, len) = escape(buffer.get(read..end)?)?;
        let mut utf8 = [0; 4];
        let utf8 = decoded.encode_utf8(&mut utf8).as_bytes();
        buffer[written..written + utf8.len()].copy_from_slice(utf8);
        written += utf8.len();
        read += len;
    }
    buffer.copy_within(read..end, written);
    buffer.truncate(written + end - read);
    String::from_utf8(buffer).ok()
}

/// The escape at the start of `text` (its backslash first): the character it stands for and
/// its length. `None` where serde_json refuses it (a lone surrogate).
fn escape(text: &[u8]) -> Option<(char, usize)> {
    Some(match text.get(1)? {
        b'"' => ('"', 2),
        b'\\' => ('\\', 2),
        b'/' => ('/', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        b'n' => ('\n', 2),
        b'r' => ('\r', 2),
        b't' => ('\t', 2),
        b'u' => {
            let high = hex4(text.get(2..6)?)?;
            match high {
                0xD800..=0xDBFF => {
                    if text.get(6..8)? != b"\\u" {
                        return None;
                    }
                    let low = hex4(text.get(8..12)?)?;
                    if !(0xDC00..=0xDFFF).contains(&low) {
                        return None;
                    }
                    let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                    (char::from_u32(code)?, 12)
                }
                0xDC00..=0xDFFF => return None,
                _ => (char::from_u32(high)?, 6),
            }
        }
        _ => return None,
    })
}

/// Four hex digits.
fn hex4(digits: &[u8]) -> Option<u32> {
    let digits = std::str::from_utf8(digits).ok()?;
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod unescape_tests {
    use super::{unescape, unescape_in_place};
    use proptest::strategy::Strategy as _;

    /// [`unescape_in_place`] of `raw` set between other bytes, as a string's contents lie in
    /// its record: the same as [`unescape`].
    fn in_place(raw: &str) -> Option<String> {
        let buffer = format!("{{\"key\":\"{raw}\",\"after\":1}}").into_bytes();
        unescape_in_place(buffer, 8, 8 + raw.len())
    }

    /// serde_json's reading of the JSON string whose contents are `raw`.
    fn serde(raw: &str) -> Option<String> {
        serde_json::from_str::<String>(&format!("\"{raw}\"")).ok()
    }

    #[test]
    fn escapes_decode_as_serde_decodes_them() {
        for raw in [
            r#"plain"#,
            r#"a\"b\\c\/d\be\ff\ng\rh\ti"#,
            r#"\u00e9\u6F22\ud83d\ude00"#,
            r#"\ud83d"#,
            r#"\ud83dx"#,
            r#"\ud83d\u0041"#,
            r#"\ude00"#,
            r#"\u0000"#,
            r#"end\\"#,
        ] {
            assert_eq!(unescape(raw), serde(raw), "{raw}");
            assert_eq!(in_place(raw), serde(raw), "in place: {raw}");
        }
    }

    proptest::proptest! {
        /// Any string written by serde_json reads back; any mix of escapes (surrogates lone
        /// and paired among them) decodes as serde_json decodes it, or is refused as it is.
        #[test]
        fn any_string_decodes_as_serde_decodes_it(
            text in "\\PC*",
            pieces in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(&[
                        "\\n", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\r", "\\t", "a", "é",
                        "\\ud83d", "\\ude00", "\\uDBFF", "\\uDC00", "\\u0041", "\\u00e9",
                    ][..]).prop_map(str::to_owned),
                    "[a-z]{0,3}",
                ],
                0..12,
            ),
        ) {
            let written = serde_json::to_string(&text).expect("a string writes");
            let raw = &written[1..written.len() - 1];
            proptest::prop_assert_eq!(unescape(raw), Some(text.clone()));
            proptest::prop_assert_eq!(in_place(raw), Some(text));
            let raw = pieces.concat();
            proptest::prop_assert_eq!(unescape(&raw), serde(&raw), "{}", raw);
            proptest::prop_assert_eq!(in_place(&raw), serde(&raw), "in place: {}", raw);
        }
    }
}
