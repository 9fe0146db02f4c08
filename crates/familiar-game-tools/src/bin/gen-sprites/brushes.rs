//! Small effects drawn on any canvas: sparkles, stars, the sleeping Zs and smoke puffs, shared by
//! the familiar, the companion and the icons.

use crate::canvas::*;

/// A four-point sparkle.
pub(crate) fn sparkle(c: &mut Canvas, x: i32, y: i32, size: i32, col: Rgba) {
    c.set(x, y, WHITE);
    for d in 1..=size {
        let fade = with_alpha(col, (255 - (d - 1) * 60).clamp(80, 255) as u8);
        c.set(x + d, y, fade);
        c.set(x - d, y, fade);
        c.set(x, y + d, fade);
        c.set(x, y - d, fade);
    }
}

pub(crate) fn star(c: &mut Canvas, cx: f32, cy: f32, r: f32) {
    let pts: Vec<(f32, f32)> = (0..10)
        .map(|i| {
            let a = std::f32::consts::PI * (i as f32) / 5.0 - std::f32::consts::FRAC_PI_2;
            let rr = if i % 2 == 0 { r } else { r * 0.45 };
            (cx + rr * a.cos(), cy + rr * a.sin())
        })
        .collect();
    for i in 0..10 {
        c.triangle((cx, cy), pts[i], pts[(i + 1) % 10], GOLD);
    }
}

/// Pixel-font glyph for the sleeping Zs.
pub(crate) fn zed(c: &mut Canvas, x: i32, y: i32, s: i32, col: Rgba) {
    c.line(x, y, x + s, y, col);
    c.line(x + s, y, x, y + s, col);
    c.line(x, y + s, x + s, y + s, col);
}

pub(crate) fn smoke(c: &mut Canvas, cx: f32, cy: f32, r: f32, alpha: u8) {
    let puffs = [
        (-0.6, 0.2),
        (0.6, 0.25),
        (0.0, -0.45),
        (-0.3, -0.2),
        (0.35, -0.15),
    ];
    for (dx, dy) in puffs {
        c.ellipse(
            cx + dx * r,
            cy + dy * r + 1.0,
            r * 0.6,
            r * 0.5,
            with_alpha(SMOKE_SHADE, alpha),
        );
    }
    for (dx, dy) in puffs {
        c.ellipse(
            cx + dx * r - 0.5,
            cy + dy * r,
            r * 0.55,
            r * 0.45,
            with_alpha(SMOKE, alpha),
        );
    }
}
