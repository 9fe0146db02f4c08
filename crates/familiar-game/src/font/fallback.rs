//! The fallback for what the pixel font does not draw: GNU Unifont's bitmaps (8×16, or 16×16
//! for wide characters), embedded compressed by the `unifont-bitmap` crate and decompressed
//! one page of 256 characters at a time on first use. Unifont is dual-licensed SIL OFL 1.1 /
//! GPL-2+ with the font embedding exception; `assets/fonts/UNIFONT-LICENSE.txt` says so.

use std::sync::{LazyLock, Mutex};

use unifont_bitmap::Unifont;

/// A Unifont glyph, copied out of the cache: 16 rows, bit 15 the leftmost column.
#[derive(Clone, Copy)]
pub(super) struct Glyph {
    wide: bool,
    rows: [u16; 16],
}

impl Glyph {
    pub(super) fn width(&self) -> u32 {
        if self.wide { 16 } else { 8 }
    }

    pub(super) fn ink(&self, x: u32, row: usize) -> bool {
        x < 16 && self.rows[row] & (0x8000 >> x) != 0
    }
}

struct Cache {
    font: Unifont,
    /// U+FFFD's bitmap: what the crate returns for a character Unifont lacks.
    replacement: Vec<u8>,
}

/// Boxed: `Unifont` holds a table of its 4,352 pages (136 KiB), and a `LazyLock` not yet run
/// is not all zero bytes, so unboxed the whole table would sit in the executable's `.data`
/// (issue 31: the window executable's size).
static CACHE: LazyLock<Mutex<Box<Cache>>> = LazyLock::new(|| {
    let mut font = Unifont::open();
    let replacement = font.load_bitmap(0xfffd).get_bytes().to_vec();
    Mutex::new(Box::new(Cache { font, replacement }))
});

/// Unifont's glyph for `c`, or `None` where Unifont has none.
pub(super) fn glyph(c: char) -> Option<Glyph> {
    // A poisoned lock only means another thread panicked mid-lookup; the cache is still valid.
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let Cache { font, replacement } = &mut **cache;
    let bitmap = font.load_bitmap(u32::from(c));
    let bytes = bitmap.get_bytes();
    if c != '\u{fffd}' && bytes == replacement.as_slice() {
        return None;
    }
    let wide = bitmap.is_wide();
    let mut rows = [0u16; 16];
    for (i, row) in rows.iter_mut().enumerate() {
        *row = if wide {
            u16::from_be_bytes([bytes[2 * i], bytes[2 * i + 1]])
        } else {
            u16::from(bytes[i]) << 8
        };
    }
    Some(Glyph { wide, rows })
}
