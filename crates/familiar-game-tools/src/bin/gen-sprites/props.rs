//! Everything but the familiar: the companion wisp's sheet, the status icons and the night-sky
//! backdrop.

use familiar_game::sheet::{COMPANION_SHEET, ICONS};

use crate::brushes::{smoke, sparkle, star, zed};
use crate::canvas::*;

/// A companion: a small light wisp, drawn pale so the game can tint it per subagent type.
pub(crate) fn wisp(dy: f32, scale: f32, eyes_open: bool, glow: bool) -> Canvas {
    let mut c = Canvas::new(24, 24);
    let (cx, cy) = (12.0, 14.0 + dy);
    let tones = [
        [170, 170, 190, 255],
        [225, 225, 238, 255],
        [255, 255, 255, 255],
    ];
    // Flame tip.
    c.triangle(
        (cx - 4.5 * scale, cy - 1.0),
        (cx + 4.5 * scale, cy - 1.0),
        (cx + 1.5 * scale, cy - 9.0 * scale),
        tones[1],
    );
    c.ball(cx, cy + 1.0, 5.5 * scale, 5.0 * scale, tones);
    c.outline([40, 35, 60, 255]);
    if scale > 0.6 {
        let ey = (cy + 1.0).round() as i32;
        if eyes_open {
            c.rect(9, ey - 1, 1, 2, PUPIL);
            c.rect(14, ey - 1, 1, 2, PUPIL);
        } else {
            c.rect(8, ey, 2, 1, PUPIL);
            c.rect(14, ey, 2, 1, PUPIL);
        }
        c.rect(7, ey + 2, 1, 1, PINK);
        c.rect(16, ey + 2, 1, 1, PINK);
    }
    if glow {
        sparkle(&mut c, 3, 6 + (dy as i32), 1, WHITE);
    }
    c
}

/// Companion sheet, laid out by [`COMPANION_SHEET`].
pub fn companion_sheet() -> Canvas {
    let mut sheet = Canvas::new(COMPANION_SHEET.width(), COMPANION_SHEET.height());
    let bob = [0.0, -1.0, -2.0, -1.0];
    for f in 0..4 {
        let idle = wisp(bob[f], 1.0, f != 2, false);
        sheet.blit(&idle, f as i32 * 24, 0);
        let mut work = wisp(bob[(f + 1) % 4], 1.0, true, false);
        let a = f as f32 * std::f32::consts::FRAC_PI_2;
        sparkle(
            &mut work,
            (12.0 + 9.0 * a.cos()) as i32,
            (13.0 + 8.0 * a.sin()) as i32,
            1,
            GOLD,
        );
        sheet.blit(&work, f as i32 * 24, 24);
        let mut enter = wisp(0.0, [0.3, 0.6, 0.9, 1.0][f], true, f == 3);
        smoke(
            &mut enter,
            12.0,
            16.0,
            [5.0, 7.0, 6.0, 4.0][f],
            [200, 170, 110, 60][f],
        );
        sheet.blit(&enter, f as i32 * 24, 48);
    }
    sheet
}

/// Icons for status marks and effects, laid out by [`ICONS`].
pub fn icons() -> Canvas {
    let mut sheet = Canvas::new(ICONS.width(), ICONS.height());
    // ! : a gold badge.
    let mut ex = Canvas::new(16, 16);
    ex.ellipse(8.0, 8.0, 6.5, 7.0, GOLD);
    ex.ellipse(7.5, 7.0, 4.5, 5.0, [255, 236, 140, 255]);
    ex.outline(OUT);
    ex.rect(7, 3, 2, 6, RED);
    ex.rect(7, 11, 2, 2, RED);
    sheet.blit(&ex, 0, 0);
    // ? : a sky-blue badge.
    let mut q = Canvas::new(16, 16);
    q.ellipse(8.0, 8.0, 6.5, 7.0, [110, 200, 255, 255]);
    q.ellipse(7.5, 7.0, 4.5, 5.0, [170, 228, 255, 255]);
    q.outline(OUT);
    q.rect(6, 3, 4, 1, PUPIL);
    q.rect(5, 4, 2, 2, PUPIL);
    q.rect(9, 4, 2, 3, PUPIL);
    q.rect(8, 7, 2, 2, PUPIL);
    q.rect(8, 11, 2, 2, PUPIL);
    sheet.blit(&q, 16, 0);
    let mut s = Canvas::new(16, 16);
    star(&mut s, 8.0, 8.5, 7.0);
    s.outline(GOLD_DARK);
    sheet.blit(&s, 32, 0);
    let mut z = Canvas::new(16, 16);
    for w in 0..2 {
        zed(&mut z, 3, 3 + w, 9, ZZZ);
    }
    z.outline([60, 60, 110, 255]);
    sheet.blit(&z, 48, 0);
    sheet
}

/// Deterministic pseudo-random numbers (a tiny LCG), so the art is the same on every run.
pub(crate) struct Lcg(pub(crate) u64);

impl Lcg {
    pub(crate) fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        self.next() % n.max(1)
    }
}

/// Night-sky backdrop (160×100): gradient, stars, hills and a stone floor (the moon is its own
/// sprite, `backdrop::moon`, placed by the layout).
pub fn background() -> Canvas {
    let (w, h) = (160u32, 100u32);
    let mut c = Canvas::new(w, h);
    let top = [18.0, 14.0, 38.0];
    let bottom = [58.0, 38.0, 90.0];
    for y in 0..h as i32 {
        let t = y as f32 / (h as f32 - 1.0);
        // Banded gradient: pixel art dithers in steps, not smoothly.
        let t = (t * 8.0).floor() / 8.0;
        let col = [
            (top[0] + (bottom[0] - top[0]) * t) as u8,
            (top[1] + (bottom[1] - top[1]) * t) as u8,
            (top[2] + (bottom[2] - top[2]) * t) as u8,
            255,
        ];
        for x in 0..w as i32 {
            c.pixels[(y as u32 * w + x as u32) as usize] = col;
        }
    }
    let mut rng = Lcg(0x5eed_f00d);
    for _ in 0..70 {
        let x = rng.below(w) as i32;
        let y = rng.below(60) as i32;
        let bright = 120 + rng.below(135) as u8;
        c.set(x, y, [bright, bright, 255, 255]);
        if rng.below(9) == 0 {
            sparkle(&mut c, x, y, 1, [200, 200, 255, 255]);
        }
    }
    // Hills.
    for x in 0..w as i32 {
        let (far, near) = hills(x);
        for y in far as i32..h as i32 {
            c.set(x, y, [44, 34, 78, 255]);
        }
        for y in near as i32..h as i32 {
            c.set(x, y, [34, 26, 60, 255]);
        }
    }
    floor(
        &mut c,
        [[40, 30, 62, 255], [84, 70, 118, 255], [66, 54, 98, 255]],
    );
    c
}

/// The tops of the far and near hills at column `x` (shared by every backdrop and the layout).
pub(crate) fn hills(x: i32) -> (f32, f32) {
    familiar_game::sheet::hills(x)
}

/// The stone floor from row 82 down: `[joint, lit edge, stone]` colours.
pub(crate) fn floor(c: &mut Canvas, [joint, lit, stone]: [Rgba; 3]) {
    let (w, h) = (c.width as i32, c.height as i32);
    for y in 82..h {
        for x in 0..w {
            let row = (y - 82) / 6;
            let off = if row % 2 == 0 { 0 } else { 6 };
            let edge = (y - 82) % 6 == 0 || (x + off) % 12 == 0;
            let col = if edge {
                joint
            } else if (y - 82) % 6 == 1 {
                lit
            } else {
                stone
            };
            c.set(x, y, col);
        }
    }
}
