//! Byte-level string scanning for [`super`]: where the next `"`, `\` or control byte of a
//! JSON string lies (64 bytes a step, SSE2 masks on x86-64, a plain loop elsewhere) and how
//! long an escape is. No JSON structure here: the cursor in `mod.rs` decides what bytes mean.

/// Bit i set when byte `at + i` is `"`, `\` or a control byte, for the 64 bytes from `at`;
/// `None` when fewer than 64 are left.
#[inline]
pub(super) fn window_mask(bytes: &[u8], at: usize) -> Option<u64> {
    let window: &[u8; WINDOW] = bytes.get(at..at + WINDOW)?.try_into().ok()?;
    #[cfg(target_arch = "x86_64")]
    {
        let mut mask = 0u64;
        for (index, chunk) in window.chunks_exact(16).enumerate() {
            let chunk: &[u8; 16] = chunk.try_into().ok()?;
            mask |= u64::from(sse2::special_mask(chunk)) << (16 * index);
        }
        Some(mask)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut mask = 0u64;
        for (index, &byte) in window.iter().enumerate() {
            mask |= u64::from(is_special(byte)) << index;
        }
        Some(mask)
    }
}

/// Bytes of a string examined at once.
pub(super) const WINDOW: usize = 64;

fn is_special(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// Offset of the first `"`, `\` or control character in `bytes` (the tail of a line,
/// under a window).
pub(super) fn special_offset(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&byte| is_special(byte))
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };

    /// Bit i set when byte i of the 16 is `"`, `\` or below 0x20.
    #[inline]
    pub(super) fn special_mask(chunk: &[u8; 16]) -> u32 {
        // SAFETY: SSE2 is part of the x86-64 baseline (every CPU this runs on has it), and the
        // unaligned load reads exactly the 16 bytes `chunk` refers to.
        unsafe {
            let bytes = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
            let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
            // min(b, 0x1f) == b exactly when b <= 0x1f (unsigned).
            let control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1f)), bytes);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
        }
    }
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
