//! Familiar's pixel font: text turned into a small bitmap on the CPU, with exact metrics, no
//! GPU and no Bevy, so it is unit-tested like any pure function. `view::text` shows the
//! bitmaps ([`PixelText`](crate::view) labels) and `view::layout` measures with the same
//! [`width`], so what the layout reserves is exactly what is drawn.
//!
//! - `glyphs`: the project's own glyphs (printable ASCII, Latin-1, Latin Extended-A, the HUD's
//!   symbols), drawn by hand in source; accented letters are a base glyph and a mark;
//! - `fallback`: GNU Unifont (8×16 and 16×16 bitmaps, the whole BMP and the emoji of plane 1,
//!   through the `unifont-bitmap` crate) for every other character: CJK, kana, hangul,
//!   emoji, other scripts. Wide glyphs take two cells (16 px).
//!
//! Every line is [`LINE_HEIGHT`] pixels: Unifont's 16 rows, its baseline under row 13; the
//! own glyphs' capitals stand on the same baseline, [`CAP_TOP`] to 13, with room above them
//! for accents. A character nobody covers is a visible box, never nothing and never a panic.
//! Cutting (`fit`, `wrap`) happens between grapheme clusters only.

mod fallback;
mod glyphs;

use std::collections::HashMap;
use std::sync::LazyLock;

use unicode_segmentation::UnicodeSegmentation;

use glyphs::Mark;

/// Height of a line of text, in canvas pixels.
pub const LINE_HEIGHT: u32 = 16;
/// First row of a capital letter in a line.
pub const CAP_TOP: u32 = 7;
/// First row under the baseline.
pub const BASELINE: u32 = 14;
/// What ends a cut text.
pub const ELLIPSIS: char = '…';

/// One pixel of a rendered text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pixel {
    Clear,
    Ink,
    /// The one-pixel drop shadow under and right of the ink (`render(.., true)`).
    Shadow,
}

/// A rendered text: `width × height` pixels, row by row from the top.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextBitmap {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<Pixel>,
}

impl TextBitmap {
    pub fn get(&self, x: u32, y: u32) -> Pixel {
        if x < self.width && y < self.height {
            self.pixels[(y * self.width + x) as usize]
        } else {
            Pixel::Clear
        }
    }

    fn set(&mut self, x: i64, y: i64, p: Pixel) {
        if x >= 0 && y >= 0 && (x as u32) < self.width && (y as u32) < self.height {
            self.pixels[(y as u32 * self.width + x as u32) as usize] = p;
        }
    }

    /// Whether any pixel is ink.
    pub fn has_ink(&self) -> bool {
        self.pixels.contains(&Pixel::Ink)
    }

    /// RGBA bytes: ink white, the shadow black at 80 %, the rest transparent. White so a
    /// sprite's or image node's colour tints it without drawing it again.
    pub fn to_rgba(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.pixels.len() * 4);
        for p in &self.pixels {
            out.extend_from_slice(match p {
                Pixel::Clear => &[0, 0, 0, 0],
                Pixel::Ink => &[255, 255, 255, 255],
                Pixel::Shadow => &[0, 0, 0, 204],
            });
        }
        out
    }
}

/// An own glyph, parsed: each row a bit mask (bit 0 the leftmost column).
struct Own {
    width: u32,
    rows: Vec<u16>,
}

impl Own {
    fn parse(rows: &str) -> Own {
        let rows: Vec<&str> = rows.split('|').collect();
        let width = rows.iter().map(|r| r.chars().count()).max().unwrap_or(0) as u32;
        let rows = rows
            .iter()
            .map(|r| {
                r.chars()
                    .enumerate()
                    .filter(|(_, c)| *c == '#')
                    .fold(0u16, |m, (i, _)| m | (1 << i))
            })
            .collect();
        Own { width, rows }
    }

    fn ink(&self, x: u32, row: usize) -> bool {
        self.rows.get(row).is_some_and(|r| r & (1 << x) != 0)
    }

    /// First line row with ink.
    fn top(&self) -> u32 {
        let first = self.rows.iter().position(|r| *r != 0).unwrap_or(0);
        CAP_TOP + first as u32
    }

    /// Whether it has ink under the baseline.
    fn descends(&self) -> bool {
        self.rows
            .iter()
            .skip((BASELINE - CAP_TOP) as usize)
            .any(|r| *r != 0)
    }
}

struct Tables {
    own: HashMap<char, Own>,
    marks: HashMap<Mark, Own>,
    decomposed: HashMap<char, (char, Mark)>,
    pairs: HashMap<char, &'static str>,
    /// The caron written as a tick after ď, ľ, Ľ, ť.
    tick: Own,
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| Tables {
    own: glyphs::GLYPHS
        .iter()
        .map(|(c, rows)| (*c, Own::parse(rows)))
        .collect(),
    marks: glyphs::DECOMPOSED
        .iter()
        .map(|(_, _, m)| (*m, Own::parse(m.rows())))
        .collect(),
    decomposed: glyphs::DECOMPOSED
        .iter()
        .map(|(c, base, m)| (*c, (*base, *m)))
        .collect(),
    pairs: glyphs::PAIRS.iter().copied().collect(),
    tick: Own::parse("#|#"),
});

/// Whether the pixel font draws `c` itself (not through the fallback).
pub fn covers(c: char) -> bool {
    let t = &*TABLES;
    t.own.contains_key(&c) || t.decomposed.contains_key(&c) || t.pairs.contains_key(&c)
}

/// Characters that are drawn as nothing by design (joiners, variation selectors, tags).
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{200b}'..='\u{200f}'
        | '\u{2060}'..='\u{2064}'
        | '\u{fe00}'..='\u{fe0f}'
        | '\u{feff}'
        | '\u{1f3fb}'..='\u{1f3ff}'
        | '\u{e0000}'..='\u{e007f}'
        | '\u{e0100}'..='\u{e01ef}')
}

fn combining(c: char) -> bool {
    matches!(c,
        '\u{300}'..='\u{36f}'
        | '\u{1ab0}'..='\u{1aff}'
        | '\u{1dc0}'..='\u{1dff}'
        | '\u{20d0}'..='\u{20ff}'
        | '\u{fe20}'..='\u{fe2f}')
}

/// One drawn character: an own glyph with up to three marks, a fallback glyph, or the box.
#[derive(Clone, Copy)]
enum Piece {
    Own {
        base: char,
        marks: [Option<Mark>; 3],
    },
    Pair(&'static str),
    Fallback(fallback::Glyph),
    Missing {
        wide: bool,
    },
}

fn piece(c: char) -> Option<Piece> {
    let t = &*TABLES;
    let c = if c == '\t' { ' ' } else { c };
    if invisible(c) {
        return None;
    }
    if t.own.contains_key(&c) {
        return Some(Piece::Own {
            base: c,
            marks: [None; 3],
        });
    }
    if let Some((base, mark)) = t.decomposed.get(&c) {
        return Some(Piece::Own {
            base: *base,
            marks: [Some(*mark), None, None],
        });
    }
    if let Some(pair) = t.pairs.get(&c) {
        return Some(Piece::Pair(pair));
    }
    if !c.is_control()
        && let Some(g) = fallback::glyph(c)
    {
        return Some(Piece::Fallback(g));
    }
    let wide = unicode_width::UnicodeWidthChar::width(c) == Some(2);
    Some(Piece::Missing { wide })
}

/// The pieces of a text, in order: marks join the own glyph before them; a mark nobody can
/// place (after a fallback glyph, or unknown) is dropped with its cluster kept.
fn pieces(text: &str, mut f: impl FnMut(Piece)) {
    let mut pending: Option<Piece> = None;
    for c in text.chars() {
        if combining(c) {
            if let (Some(Piece::Own { marks, .. }), Some(m)) =
                (pending.as_mut(), Mark::from_combining(c))
                && let Some(slot) = marks.iter_mut().find(|s| s.is_none())
            {
                *slot = Some(m);
            }
            continue;
        }
        let Some(p) = piece(c) else { continue };
        if let Some(done) = pending.replace(p) {
            f(done);
        }
    }
    if let Some(done) = pending {
        f(done);
    }
}

/// Whether a caron on `base` is written as a tick after it (ď, ľ, Ľ, ť).
fn caron_tick(base: char, mark: Mark) -> bool {
    mark == Mark::Caron && matches!(base, 'd' | 'l' | 'L' | 't')
}

/// The base glyph actually drawn: i and j lose their dot under a mark.
fn dotless(base: char, marks: &[Option<Mark>; 3]) -> char {
    let above = marks.iter().flatten().any(|m| !m.below());
    match base {
        'i' if above => 'ı',
        'j' if above => '\u{237}',
        _ => base,
    }
}

/// Width of an own glyph with its marks: a mark wider than a narrow letter (î) widens it,
/// so it never touches the neighbours.
fn composed_width(base: char, marks: &[Option<Mark>; 3]) -> u32 {
    let t = &*TABLES;
    let w = t.own.get(&dotless(base, marks)).map_or(0, |g| g.width);
    marks
        .iter()
        .flatten()
        .filter(|m| !caron_tick(base, **m))
        .filter_map(|m| t.marks.get(m))
        .fold(w, |w, m| w.max(m.width))
}

fn advance(p: &Piece) -> u32 {
    match p {
        Piece::Own { base, marks } => {
            let tick = marks.iter().flatten().any(|m| caron_tick(*base, *m));
            composed_width(*base, marks) + 1 + if tick { 2 } else { 0 }
        }
        Piece::Pair(s) => width(s),
        Piece::Fallback(g) => g.width(),
        Piece::Missing { wide } => {
            if *wide {
                16
            } else {
                8
            }
        }
    }
}

fn draw(p: &Piece, out: &mut TextBitmap, x: i64, top: i64) {
    let t = &*TABLES;
    match p {
        Piece::Own { base, marks } => {
            let Some(g) = t.own.get(&dotless(*base, marks)) else {
                return;
            };
            // The letter centred in its box, which a wider mark may have widened.
            let boxed = composed_width(*base, marks) as i64;
            let x = x + (boxed - g.width as i64) / 2;
            for (row, _) in g.rows.iter().enumerate() {
                for col in 0..g.width {
                    if g.ink(col, row) {
                        out.set(
                            x + col as i64,
                            top + (CAP_TOP as usize + row) as i64,
                            Pixel::Ink,
                        );
                    }
                }
            }
            let mut above = g.top() as i64 - 1; // the blank row between letter and mark
            for m in marks.iter().flatten() {
                let Some(mg) = t.marks.get(m) else { continue };
                let h = mg.rows.len() as i64;
                let (mx, my) = if caron_tick(*base, *m) {
                    (g.width as i64 + 1, CAP_TOP as i64)
                } else if m.below() && !g.descends() {
                    let mx = if *m == Mark::Ogonek {
                        g.width as i64 - mg.width as i64
                    } else {
                        (g.width as i64 - mg.width as i64) / 2
                    };
                    (mx, BASELINE as i64)
                } else {
                    above -= h;
                    let y = above;
                    above -= 1;
                    ((g.width as i64 - mg.width as i64) / 2, y)
                };
                let rows = if caron_tick(*base, *m) { &t.tick } else { mg };
                for (row, _) in rows.rows.iter().enumerate() {
                    for col in 0..rows.width {
                        if rows.ink(col, row) {
                            out.set(x + mx + col as i64, top + my + row as i64, Pixel::Ink);
                        }
                    }
                }
            }
        }
        Piece::Pair(s) => {
            let mut x = x;
            pieces(s, |q| {
                draw(&q, out, x, top);
                x += advance(&q) as i64;
            });
        }
        Piece::Fallback(g) => {
            for row in 0..16 {
                for col in 0..g.width() {
                    if g.ink(col, row) {
                        out.set(x + col as i64, top + row as i64, Pixel::Ink);
                    }
                }
            }
        }
        Piece::Missing { wide } => {
            let right = if *wide { 14 } else { 6 };
            for col in 1..=right {
                for row in 3..=14 {
                    if col == 1 || col == right || row == 3 || row == 14 {
                        out.set(x + col, top + row, Pixel::Ink);
                    }
                }
            }
        }
    }
}

/// Width in pixels of one line of text, as drawn (each own glyph is followed by its blank
/// column; fallback glyphs are 8 or 16 pixels).
pub fn width(line: &str) -> u32 {
    let mut w = 0;
    pieces(line, |p| w += advance(&p));
    w
}

/// `text` on one line, cut between grapheme clusters and ended with `…` when it is wider
/// than `max` pixels. Never wider than `max`.
pub fn fit(text: &str, max: u32) -> String {
    cut(text, max, false)
}

/// `fit`, with the `…` also when `more` says text follows (the last line of a wrap).
fn cut(text: &str, max: u32, more: bool) -> String {
    if !more && width(text) <= max {
        return text.to_string();
    }
    let dots = width(&ELLIPSIS.to_string());
    let room = max.saturating_sub(dots);
    let mut used = 0;
    let mut out = String::new();
    for g in text.graphemes(true) {
        let w = width(g);
        if used + w > room {
            break;
        }
        used += w;
        out.push_str(g);
    }
    if dots <= max {
        out.push(ELLIPSIS);
    }
    out
}

/// `text` broken into at most `max_lines` lines of at most `max` pixels: between words where
/// it can, between grapheme clusters inside a word too long for a line; the last line is
/// cut with `…` if text remains. `\n` starts a new line.
pub fn wrap(text: &str, max: u32, max_lines: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for para in text.split('\n') {
        let mut line = String::new();
        for word in para.split(' ') {
            let candidate = if line.is_empty() {
                word.to_string()
            } else {
                format!("{line} {word}")
            };
            if width(&candidate) <= max {
                line = candidate;
                continue;
            }
            if !line.is_empty() {
                lines.push(std::mem::take(&mut line));
            }
            // A word wider than a line: break it between clusters.
            for g in word.graphemes(true) {
                if !line.is_empty() && width(&line) + width(g) > max {
                    lines.push(std::mem::take(&mut line));
                }
                line.push_str(g);
            }
        }
        lines.push(line);
    }
    if lines.len() > max_lines.max(1) {
        let keep = max_lines.max(1);
        let rest = lines[keep - 1..].join(" ");
        lines.truncate(keep - 1);
        let last = cut(&rest, max, true);
        lines.push(last);
    }
    lines
}

/// The lines drawn one under the other, left-aligned, with the optional drop shadow.
pub fn render(lines: &[&str], shadow: bool) -> TextBitmap {
    let extra = u32::from(shadow);
    let width = lines.iter().map(|l| width(l)).max().unwrap_or(0) + extra;
    let height = lines.len() as u32 * LINE_HEIGHT + extra;
    let mut out = TextBitmap {
        width,
        height,
        pixels: vec![Pixel::Clear; (width * height) as usize],
    };
    for (i, line) in lines.iter().enumerate() {
        let top = (i as u32 * LINE_HEIGHT) as i64;
        let mut x = 0i64;
        pieces(line, |p| {
            draw(&p, &mut out, x, top);
            x += advance(&p) as i64;
        });
    }
    if shadow {
        for y in (0..height).rev() {
            for x in (0..width).rev() {
                if out.get(x, y) == Pixel::Clear
                    && x > 0
                    && y > 0
                    && out.get(x - 1, y - 1) == Pixel::Ink
                {
                    out.set(x as i64, y as i64, Pixel::Shadow);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
