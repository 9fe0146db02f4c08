//! Procedural pixel art: every picture the game shows is drawn here, in plain Rust, from a few
//! primitives (filled ellipses, triangles, lines, an outline pass). The `gen-sprites` binary
//! writes the results to `assets/*.png`, which are committed and embedded into the game with
//! `include_bytes!` (see `assets.rs`); a test checks that the committed files still match this
//! code, so the art can only change through here.
//!
//! Sheet layouts (frame size, rows, frame counts, frame rates) live in [`SHEET`] and
//! [`COMPANION_SHEET`], shared with the animation code so they cannot disagree.

use crate::anim::Anim;

/// An RGBA colour.
pub type Rgba = [u8; 4];

const CLEAR: Rgba = [0, 0, 0, 0];
const OUT: Rgba = [35, 22, 54, 255];
const SHADE: Rgba = [88, 62, 170, 255];
const BASE: Rgba = [128, 100, 220, 255];
const LIGHT: Rgba = [172, 150, 245, 255];
const CREAM: Rgba = [246, 236, 255, 255];
const PINK: Rgba = [255, 150, 185, 255];
const HAT: Rgba = [40, 70, 160, 255];
const HAT_SHADE: Rgba = [28, 48, 120, 255];
const HAT_LIGHT: Rgba = [78, 118, 215, 255];
const GOLD: Rgba = [255, 214, 80, 255];
const GOLD_DARK: Rgba = [200, 140, 30, 255];
const WHITE: Rgba = [255, 255, 255, 255];
const PUPIL: Rgba = [30, 20, 50, 255];
const SPARK: Rgba = [170, 230, 255, 255];
const BOOK: Rgba = [150, 78, 44, 255];
const BOOK_DARK: Rgba = [100, 50, 30, 255];
const PAGE: Rgba = [250, 244, 225, 255];
const RED: Rgba = [240, 64, 72, 255];
const SWEAT: Rgba = [130, 200, 255, 255];
const SHIELD: Rgba = [120, 220, 255, 255];
const SMOKE: Rgba = [206, 200, 228, 255];
const SMOKE_SHADE: Rgba = [150, 142, 180, 255];
const ZZZ: Rgba = [205, 215, 255, 255];

/// A small RGBA canvas.
#[derive(Debug, Clone, PartialEq)]
pub struct Canvas {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<Rgba>,
}

impl Canvas {
    pub fn new(width: u32, height: u32) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![CLEAR; (width * height) as usize],
        }
    }

    pub fn get(&self, x: i32, y: i32) -> Rgba {
        if x < 0 || y < 0 || x >= self.width as i32 || y >= self.height as i32 {
            return CLEAR;
        }
        self.pixels[(y as u32 * self.width + x as u32) as usize]
    }

    pub fn set(&mut self, x: i32, y: i32, c: Rgba) {
        if x < 0 || y < 0 || x >= self.width as i32 || y >= self.height as i32 {
            return;
        }
        let i = (y as u32 * self.width + x as u32) as usize;
        self.pixels[i] = blend(self.pixels[i], c);
    }

    fn ellipse(&mut self, cx: f32, cy: f32, rx: f32, ry: f32, c: Rgba) {
        let (x0, x1) = ((cx - rx).floor() as i32, (cx + rx).ceil() as i32);
        let (y0, y1) = ((cy - ry).floor() as i32, (cy + ry).ceil() as i32);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let dx = (x as f32 + 0.5 - cx) / rx;
                let dy = (y as f32 + 0.5 - cy) / ry;
                if dx * dx + dy * dy <= 1.0 {
                    self.set(x, y, c);
                }
            }
        }
    }

    /// A three-tone ball: shade rim at the lower right, base, highlight at the upper left.
    fn ball(&mut self, cx: f32, cy: f32, rx: f32, ry: f32, tones: [Rgba; 3]) {
        self.ellipse(cx, cy, rx, ry, tones[0]);
        self.ellipse(cx - 0.6, cy - 0.8, rx - 0.9, ry - 1.0, tones[1]);
        self.ellipse(
            cx - rx * 0.35,
            cy - ry * 0.4,
            (rx * 0.35).max(1.0),
            (ry * 0.3).max(0.8),
            tones[2],
        );
    }

    fn rect(&mut self, x: i32, y: i32, w: i32, h: i32, c: Rgba) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.set(xx, yy, c);
            }
        }
    }

    fn triangle(&mut self, a: (f32, f32), b: (f32, f32), c: (f32, f32), col: Rgba) {
        let min_x = a.0.min(b.0).min(c.0).floor() as i32;
        let max_x = a.0.max(b.0).max(c.0).ceil() as i32;
        let min_y = a.1.min(b.1).min(c.1).floor() as i32;
        let max_y = a.1.max(b.1).max(c.1).ceil() as i32;
        let edge = |p: (f32, f32), q: (f32, f32), r: (f32, f32)| {
            (q.0 - p.0) * (r.1 - p.1) - (q.1 - p.1) * (r.0 - p.0)
        };
        let area = edge(a, b, c);
        if area.abs() < f32::EPSILON {
            return;
        }
        for y in min_y..=max_y {
            for x in min_x..=max_x {
                let p = (x as f32 + 0.5, y as f32 + 0.5);
                let w0 = edge(b, c, p) / area;
                let w1 = edge(c, a, p) / area;
                let w2 = edge(a, b, p) / area;
                if w0 >= 0.0 && w1 >= 0.0 && w2 >= 0.0 {
                    self.set(x, y, col);
                }
            }
        }
    }

    fn line(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, c: Rgba) {
        let (dx, dy) = ((x1 - x0).abs(), -(y1 - y0).abs());
        let (sx, sy) = (if x0 < x1 { 1 } else { -1 }, if y0 < y1 { 1 } else { -1 });
        let (mut x, mut y, mut err) = (x0, y0, dx + dy);
        loop {
            self.set(x, y, c);
            if x == x1 && y == y1 {
                break;
            }
            let e2 = 2 * err;
            if e2 >= dy {
                err += dy;
                x += sx;
            }
            if e2 <= dx {
                err += dx;
                y += sy;
            }
        }
    }

    /// Draws a dark outline around every opaque shape (4-neighbourhood), the classic sprite look.
    fn outline(&mut self, c: Rgba) {
        let src = self.clone();
        for y in 0..self.height as i32 {
            for x in 0..self.width as i32 {
                if src.get(x, y)[3] != 0 {
                    continue;
                }
                let near = [(1, 0), (-1, 0), (0, 1), (0, -1)]
                    .iter()
                    .any(|(dx, dy)| src.get(x + dx, y + dy)[3] > 128);
                if near {
                    self.set(x, y, c);
                }
            }
        }
    }

    /// Copies `other` over this canvas at (`ox`, `oy`), alpha-blended.
    pub fn blit(&mut self, other: &Canvas, ox: i32, oy: i32) {
        for y in 0..other.height as i32 {
            for x in 0..other.width as i32 {
                let c = other.get(x, y);
                if c[3] != 0 {
                    self.set(ox + x, oy + y, c);
                }
            }
        }
    }

    /// Mixes every opaque pixel towards `c` by `amount` (0..1), for flashes.
    fn tint(&mut self, c: Rgba, amount: f32) {
        for p in &mut self.pixels {
            if p[3] != 0 {
                for i in 0..3 {
                    p[i] = (f32::from(p[i]) * (1.0 - amount) + f32::from(c[i]) * amount) as u8;
                }
            }
        }
    }

    /// Raw RGBA bytes, row by row.
    pub fn to_rgba_bytes(&self) -> Vec<u8> {
        self.pixels.iter().flatten().copied().collect()
    }
}

fn blend(dst: Rgba, src: Rgba) -> Rgba {
    let a = u32::from(src[3]);
    if a == 255 || dst[3] == 0 {
        return src;
    }
    if a == 0 {
        return dst;
    }
    let mix = |d: u8, s: u8| ((u32::from(s) * a + u32::from(d) * (255 - a)) / 255) as u8;
    [
        mix(dst[0], src[0]),
        mix(dst[1], src[1]),
        mix(dst[2], src[2]),
        (a + u32::from(dst[3]) * (255 - a) / 255).min(255) as u8,
    ]
}

fn with_alpha(c: Rgba, a: u8) -> Rgba {
    [c[0], c[1], c[2], a]
}

/// Layout of a sprite sheet: square frames, one row per animation.
#[derive(Debug, Clone, Copy)]
pub struct SheetLayout {
    pub frame: u32,
    pub columns: u32,
    /// (frames, frames per second) of each row.
    pub rows: &'static [(u32, f32)],
}

impl SheetLayout {
    pub fn width(&self) -> u32 {
        self.frame * self.columns
    }
    pub fn height(&self) -> u32 {
        self.frame * self.rows.len() as u32
    }
}

/// The familiar's sheet, rows in the order of [`Anim::ALL`] (48×48 frames).
pub const SHEET: SheetLayout = SheetLayout {
    frame: 48,
    columns: 6,
    rows: &[
        (4, 3.0),  // idle
        (6, 8.0),  // enter
        (4, 8.0),  // cast
        (4, 10.0), // attack
        (4, 8.0),  // write
        (4, 4.0),  // think
        (6, 8.0),  // victory
        (4, 8.0),  // hurt
        (4, 6.0),  // blocked
        (4, 2.0),  // rest
    ],
};

/// Companion rows: idle, work, enter (24×24 frames).
pub const COMPANION_SHEET: SheetLayout = SheetLayout {
    frame: 24,
    columns: 4,
    rows: &[(4, 4.0), (4, 8.0), (4, 8.0)],
};

/// Icons, one row of 16×16: `!`, `?`, star, Z.
pub const ICONS: SheetLayout = SheetLayout {
    frame: 16,
    columns: 4,
    rows: &[(4, 1.0)],
};

pub const ICON_EXCLAIM: usize = 0;
pub const ICON_QUESTION: usize = 1;
pub const ICON_STAR: usize = 2;
pub const ICON_Z: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Eyes {
    Open { look_x: f32, look_y: f32 },
    Closed,
    Happy,
    Dizzy,
    Squeeze,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mouth {
    Smile,
    Open,
    Flat,
    Wobble,
}

#[derive(Debug, Clone, Copy)]
struct Pose {
    dx: f32,
    dy: f32,
    /// Positive: wider and shorter (breathing, landing).
    squash: f32,
    eyes: Eyes,
    mouth: Mouth,
    paw_l: (f32, f32),
    paw_r: (f32, f32),
    tail: f32,
    hat_tilt: f32,
}

impl Default for Pose {
    fn default() -> Pose {
        Pose {
            dx: 0.0,
            dy: 0.0,
            squash: 0.0,
            eyes: Eyes::Open {
                look_x: 0.0,
                look_y: 0.0,
            },
            mouth: Mouth::Smile,
            paw_l: (0.0, 0.0),
            paw_r: (0.0, 0.0),
            tail: 0.0,
            hat_tilt: 0.0,
        }
    }
}

/// Draws the familiar (a small violet cat in a wizard's hat) into a 48×48 layer, outlined.
fn draw_familiar(p: &Pose) -> Canvas {
    let mut c = Canvas::new(48, 48);
    let (ox, oy) = (p.dx, p.dy);
    let sq = p.squash;
    let body = [SHADE, BASE, LIGHT];

    // Tail first, so the body covers its root.
    let segments = 10;
    for i in 0..=segments {
        let t = i as f32 / segments as f32;
        let sway = p.tail * t * t;
        let x = 29.5 + ox + 8.0 * t + sway;
        let y = 41.0 + oy - 11.0 * t * t + sway.abs() * 0.3;
        let r = 1.9 - 0.5 * t;
        let col = if t > 0.8 { CREAM } else { BASE };
        c.ellipse(x, y, r, r, col);
    }
    // Feet.
    c.ellipse(20.0 + ox, 44.3 + oy.min(0.0) * 0.0 + oy, 2.8, 1.6, SHADE);
    c.ellipse(28.0 + ox, 44.3 + oy, 2.8, 1.6, SHADE);
    // Body and belly.
    c.ball(
        24.0 + ox,
        37.5 + oy + sq * 0.5,
        7.2 + sq,
        6.0 - sq * 0.5,
        body,
    );
    c.ellipse(24.0 + ox, 39.0 + oy + sq * 0.5, 4.2 + sq * 0.5, 3.4, CREAM);
    // Ears.
    let hy = oy + sq * 0.8;
    c.triangle(
        (14.5 + ox, 26.0 + hy),
        (15.5 + ox, 14.5 + hy),
        (22.0 + ox, 21.0 + hy),
        BASE,
    );
    c.triangle(
        (33.5 + ox, 26.0 + hy),
        (32.5 + ox, 14.5 + hy),
        (26.0 + ox, 21.0 + hy),
        BASE,
    );
    c.triangle(
        (16.5 + ox, 22.0 + hy),
        (16.8 + ox, 17.0 + hy),
        (20.0 + ox, 20.5 + hy),
        PINK,
    );
    c.triangle(
        (31.5 + ox, 22.0 + hy),
        (31.2 + ox, 17.0 + hy),
        (28.0 + ox, 20.5 + hy),
        PINK,
    );
    // Head.
    c.ball(24.0 + ox, 28.0 + hy, 10.2 + sq * 0.6, 8.0 - sq * 0.4, body);
    // Hat: cone, band, brim, star.
    let tip = (26.5 + ox + p.hat_tilt, 6.5 + hy);
    c.triangle((18.5 + ox, 21.0 + hy), (30.0 + ox, 21.0 + hy), tip, HAT);
    c.triangle(
        (24.5 + ox, 21.0 + hy),
        (30.0 + ox, 21.0 + hy),
        tip,
        HAT_SHADE,
    );
    c.triangle(
        (19.5 + ox, 20.5 + hy),
        (22.0 + ox, 20.5 + hy),
        (tip.0 - 0.5, tip.1 + 3.0),
        HAT_LIGHT,
    );
    c.ellipse(24.5 + ox, 21.2 + hy, 8.0, 1.7, HAT_SHADE);
    c.ellipse(24.0 + ox, 20.8 + hy, 7.4, 1.2, HAT);
    let sx = (24.0 + ox + p.hat_tilt * 0.4).round() as i32;
    let sy = (15.0 + hy).round() as i32;
    c.set(sx, sy, GOLD);
    c.set(sx - 1, sy, GOLD);
    c.set(sx + 1, sy, GOLD);
    c.set(sx, sy - 1, GOLD);
    c.set(sx, sy + 1, GOLD);
    // Paws (drawn after the body so raised paws overlap it).
    let paw = |c: &mut Canvas, x: f32, y: f32| {
        c.ellipse(x, y, 2.3, 2.0, SHADE);
        c.ellipse(x - 0.3, y - 0.4, 1.7, 1.4, LIGHT);
    };
    paw(&mut c, 17.8 + ox + p.paw_l.0, 37.5 + oy + p.paw_l.1);
    paw(&mut c, 30.2 + ox + p.paw_r.0, 37.5 + oy + p.paw_r.1);

    c.outline(OUT);

    // Face details after the outline so they stay crisp inside the head.
    let ex = [(19.5 + ox), (28.5 + ox)];
    let ey = 28.5 + hy;
    for (i, x) in ex.iter().enumerate() {
        let xi = x.round() as i32;
        let yi = ey.round() as i32;
        match p.eyes {
            Eyes::Open { look_x, look_y } => {
                c.ellipse(*x, ey, 2.1, 2.7, WHITE);
                let px = (x + look_x - 0.5).round() as i32;
                let py = (ey + look_y - 1.0).round() as i32;
                c.rect(px, py, 2, 3, PUPIL);
                c.set(px, py, WHITE);
            }
            Eyes::Closed => {
                c.line(xi - 2, yi, xi + 1, yi, PUPIL);
                c.set(xi - 2, yi - 1, PUPIL);
                c.set(xi + 1, yi - 1, PUPIL);
            }
            Eyes::Happy => {
                c.line(xi - 2, yi, xi - 1, yi - 1, PUPIL);
                c.line(xi, yi - 1, xi + 1, yi, PUPIL);
            }
            Eyes::Dizzy => {
                c.line(xi - 2, yi - 2, xi + 1, yi + 1, PUPIL);
                c.line(xi - 2, yi + 1, xi + 1, yi - 2, PUPIL);
            }
            Eyes::Squeeze => {
                // > <
                if i == 0 {
                    c.line(xi - 2, yi - 2, xi, yi, PUPIL);
                    c.line(xi, yi, xi - 2, yi + 2, PUPIL);
                } else {
                    c.line(xi + 1, yi - 2, xi - 1, yi, PUPIL);
                    c.line(xi - 1, yi, xi + 1, yi + 2, PUPIL);
                }
            }
        }
    }
    let mx = (24.0 + ox).round() as i32;
    let my = (32.0 + hy).round() as i32;
    c.rect(mx - 7, my - 1, 2, 1, PINK);
    c.rect(mx + 5, my - 1, 2, 1, PINK);
    match p.mouth {
        Mouth::Smile => {
            c.set(mx - 1, my, PUPIL);
            c.set(mx, my + 1, PUPIL);
            c.set(mx + 1, my, PUPIL);
        }
        Mouth::Open => {
            c.rect(mx - 1, my, 3, 2, PUPIL);
            c.set(mx, my + 1, PINK);
        }
        Mouth::Flat => c.line(mx - 1, my, mx + 1, my, PUPIL),
        Mouth::Wobble => {
            c.set(mx - 2, my + 1, PUPIL);
            c.set(mx - 1, my, PUPIL);
            c.set(mx, my + 1, PUPIL);
            c.set(mx + 1, my, PUPIL);
            c.set(mx + 2, my + 1, PUPIL);
        }
    }
    c
}

/// A four-point sparkle.
fn sparkle(c: &mut Canvas, x: i32, y: i32, size: i32, col: Rgba) {
    c.set(x, y, WHITE);
    for d in 1..=size {
        let fade = with_alpha(col, (255 - (d - 1) * 60).clamp(80, 255) as u8);
        c.set(x + d, y, fade);
        c.set(x - d, y, fade);
        c.set(x, y + d, fade);
        c.set(x, y - d, fade);
    }
}

fn star(c: &mut Canvas, cx: f32, cy: f32, r: f32) {
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
fn zed(c: &mut Canvas, x: i32, y: i32, s: i32, col: Rgba) {
    c.line(x, y, x + s, y, col);
    c.line(x + s, y, x, y + s, col);
    c.line(x, y + s, x + s, y + s, col);
}

fn smoke(c: &mut Canvas, cx: f32, cy: f32, r: f32, alpha: u8) {
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

/// One frame of an animation: the pose plus its effects layer.
fn frame(anim: Anim, f: u32) -> Canvas {
    let mut out = Canvas::new(48, 48);
    let mut fx = Canvas::new(48, 48);
    let mut fx_front = Canvas::new(48, 48);
    let mut pose = Pose::default();
    let ff = f as f32;
    let mut draw_char = true;
    let mut flash: Option<(Rgba, f32)> = None;
    match anim {
        Anim::Idle => {
            pose.squash = [0.0, 0.4, 0.8, 0.4][f as usize % 4];
            pose.tail = [0.0, 1.0, 2.0, 1.0][f as usize % 4];
            if f == 3 {
                pose.eyes = Eyes::Closed;
            }
        }
        Anim::Enter => {
            let r = [7.0, 11.0, 12.0, 11.0, 8.0, 5.0][f as usize % 6];
            let a = [200, 230, 210, 170, 120, 70][f as usize % 6];
            draw_char = f >= 2;
            pose.eyes = Eyes::Happy;
            pose.mouth = Mouth::Open;
            pose.dy = [0.0, 0.0, -3.0, -2.0, 0.0, 0.0][f as usize % 6];
            smoke(&mut fx_front, 24.0, 34.0, r, a);
            if f >= 3 {
                sparkle(&mut fx_front, 10, 18 - f as i32, 2, SPARK);
                sparkle(&mut fx_front, 38, 22 - f as i32, 2, GOLD);
            }
        }
        Anim::Cast => {
            pose.eyes = Eyes::Open {
                look_x: 0.0,
                look_y: 1.0,
            };
            pose.paw_l = (3.0, 1.5);
            pose.paw_r = (-3.0, 1.5);
            pose.squash = [0.0, 0.3, 0.0, 0.3][f as usize % 4];
            // Open book held in front.
            let by = 39;
            fx_front.rect(16, by, 16, 6, BOOK_DARK);
            fx_front.rect(17, by - 1, 7, 6, PAGE);
            fx_front.rect(24, by - 1, 7, 6, PAGE);
            fx_front.rect(23, by - 1, 2, 7, BOOK);
            for l in 0..2 {
                fx_front.line(18, by + 1 + l * 2, 22, by + 1 + l * 2, [180, 170, 150, 255]);
                fx_front.line(26, by + 1 + l * 2, 30, by + 1 + l * 2, [180, 170, 150, 255]);
            }
            // Sparkles rising from the pages.
            for (i, x) in [19, 29, 24].iter().enumerate() {
                let y = 36 - ((f as i32 * 4 + i as i32 * 6) % 16);
                sparkle(
                    &mut fx_front,
                    *x + (i as i32 - 1) * (f as i32 % 2),
                    y,
                    1 + (i as i32 + f as i32) % 2,
                    if i == 1 { GOLD } else { SPARK },
                );
            }
        }
        Anim::Attack => {
            pose.dx = [-2.0, 3.0, 3.0, 1.0][f as usize % 4];
            pose.squash = [0.6, -0.4, 0.0, 0.2][f as usize % 4];
            pose.eyes = Eyes::Open {
                look_x: 1.0,
                look_y: 0.0,
            };
            pose.mouth = if f == 1 { Mouth::Open } else { Mouth::Flat };
            pose.paw_r = [(-1.0, -4.0), (5.0, -6.0), (6.0, 0.0), (2.0, 0.0)][f as usize % 4];
            pose.hat_tilt = [-2.0, 2.0, 2.0, 1.0][f as usize % 4];
            if f == 1 || f == 2 {
                // A crescent slash in front.
                let (cx, cy) = (33.0, 30.0);
                for i in 0..24 {
                    let a = -1.3 + 2.4 * (i as f32) / 23.0;
                    let r = 11.0;
                    let x = cx + r * a.cos();
                    let y = cy + r * a.sin();
                    let col = if f == 1 { WHITE } else { GOLD };
                    fx_front.ellipse(x, y, 1.3, 1.3, col);
                    if f == 1 {
                        fx_front.ellipse(x - 1.5, y, 0.8, 0.8, GOLD);
                    }
                }
                if f == 2 {
                    sparkle(&mut fx_front, 44, 24, 2, WHITE);
                    sparkle(&mut fx_front, 42, 38, 1, GOLD);
                }
            }
        }
        Anim::Write => {
            pose.eyes = Eyes::Open {
                look_x: 1.0,
                look_y: 1.0,
            };
            pose.mouth = Mouth::Flat;
            let wiggle = [(0.0, 0.0), (1.5, -0.5), (3.0, 0.0), (1.5, 0.5)][f as usize % 4];
            pose.paw_r = (-2.0 + wiggle.0, 3.0 + wiggle.1);
            pose.paw_l = (2.0, 3.0);
            // A scroll at the feet, with the line being written.
            fx_front.rect(17, 41, 18, 5, PAGE);
            fx_front.rect(16, 40, 2, 7, [210, 190, 150, 255]);
            fx_front.rect(34, 40, 2, 7, [210, 190, 150, 255]);
            let written = 20 + (f as i32 * 3);
            fx_front.line(19, 43, written, 43, PUPIL);
            // Quill in the right paw.
            let (qx, qy) = ((30.2 + wiggle.0 - 2.0) as i32, (40.5 + wiggle.1) as i32);
            fx_front.line(qx, qy, qx + 5, qy - 9, WHITE);
            fx_front.line(qx + 1, qy - 1, qx + 6, qy - 9, WHITE);
            fx_front.line(qx + 2, qy - 3, qx + 6, qy - 7, [200, 200, 230, 255]);
            fx_front.set(qx, qy + 1, GOLD);
            if f % 2 == 1 {
                fx_front.set(written + 1, 42, [60, 40, 90, 255]);
            }
        }
        Anim::Think => {
            pose.eyes = Eyes::Open {
                look_x: 1.0,
                look_y: -1.0,
            };
            pose.mouth = Mouth::Flat;
            pose.paw_r = (-3.0, -3.0);
            pose.hat_tilt = 1.0;
            // Thought bubble with growing dots.
            fx.ellipse(36.0, 19.0, 1.3, 1.3, WHITE);
            fx.ellipse(39.0, 14.5, 1.8, 1.8, WHITE);
            fx.ellipse(40.0, 6.5, 7.0, 5.0, WHITE);
            fx.outline([90, 80, 120, 255]);
            let dots = (f as i32 + 1).min(3);
            for d in 0..dots {
                fx.rect(36 + d * 3, 6, 2, 2, PUPIL);
            }
        }
        Anim::Victory => {
            pose.dy = [0.0, -4.0, -7.0, -7.0, -4.0, 0.0][f as usize % 6];
            pose.squash = [0.8, -0.5, -0.3, -0.3, -0.5, 0.6][f as usize % 6];
            pose.eyes = Eyes::Happy;
            pose.mouth = Mouth::Open;
            pose.paw_l = (-1.0, -7.0);
            pose.paw_r = (1.0, -7.0);
            pose.tail = 3.0;
            let spin = ff * 0.9;
            for i in 0..3 {
                let a = spin + i as f32 * 2.1;
                star(
                    &mut fx,
                    24.0 + 17.0 * a.cos(),
                    24.0 + 10.0 * a.sin(),
                    2.5 + (i as f32 * 0.5),
                );
            }
            fx.outline(GOLD_DARK);
        }
        Anim::Hurt => {
            pose.dx = [-1.0, -3.0, -2.0, -1.0][f as usize % 4];
            pose.squash = [0.8, 0.4, 0.2, 0.0][f as usize % 4];
            pose.eyes = if f < 2 { Eyes::Squeeze } else { Eyes::Dizzy };
            pose.mouth = Mouth::Wobble;
            pose.hat_tilt = -3.0;
            pose.paw_l = (1.0, -2.0);
            pose.paw_r = (-1.0, -2.0);
            if f < 2 {
                flash = Some((RED, 0.45 - ff * 0.2));
                // Impact burst at the right.
                for i in 0..6 {
                    let a = i as f32 * 1.047;
                    let (x, y) = (37.0 + 5.0 * a.cos(), 27.0 + 5.0 * a.sin());
                    fx_front.line(
                        37,
                        27,
                        x as i32,
                        y as i32,
                        if i % 2 == 0 { RED } else { GOLD },
                    );
                }
            }
            // Sweat drop.
            let sy = 17 + f as i32;
            fx.ellipse(13.0, sy as f32 + 2.0, 1.5, 2.0, SWEAT);
            fx.set(13, sy, SWEAT);
            fx.outline([40, 80, 140, 255]);
        }
        Anim::Blocked => {
            pose.dx = -1.0;
            pose.eyes = Eyes::Squeeze;
            pose.mouth = Mouth::Flat;
            pose.paw_l = (4.0, -3.0);
            pose.paw_r = (-4.0, -3.0);
            pose.squash = 0.4;
            // A pulsing "not allowed" rune in front.
            let r = [9.0, 10.0, 10.5, 10.0][f as usize % 4];
            let a = [150, 200, 230, 200][f as usize % 4];
            fx_front.ellipse(36.0, 30.0, r, r, with_alpha(SHIELD, 70));
            for i in 0..40 {
                let t = i as f32 / 40.0 * std::f32::consts::TAU;
                fx_front.ellipse(
                    36.0 + (r - 1.0) * t.cos(),
                    30.0 + (r - 1.0) * t.sin(),
                    1.0,
                    1.0,
                    with_alpha(RED, a),
                );
            }
            let d = (r * 0.6) as i32;
            for w in 0..2 {
                fx_front.line(36 - d + w, 30 - d, 36 + d + w, 30 + d, with_alpha(RED, a));
            }
        }
        Anim::Rest => {
            pose.eyes = Eyes::Closed;
            pose.mouth = Mouth::Flat;
            pose.squash = [1.2, 1.5, 1.8, 1.5][f as usize % 4];
            pose.dy = 1.0;
            pose.hat_tilt = -4.0;
            pose.tail = -2.0;
            for i in 0..3 {
                let t = ((f as i32 + i) % 4) as f32;
                let s = 2 + i;
                zed(
                    &mut fx,
                    33 + (t * 2.0) as i32 + i,
                    20 - (t * 4.0) as i32 - i * 2,
                    s,
                    with_alpha(ZZZ, (255.0 - t * 50.0) as u8),
                );
            }
            // Bubble at the nose.
            let r = [1.0, 1.8, 2.6, 1.8][f as usize % 4];
            fx_front.ellipse(27.5, 33.0, r, r, with_alpha(SWEAT, 170));
            fx_front.set(27, 32, WHITE);
        }
    }
    out.blit(&fx, 0, 0);
    if draw_char {
        let mut ch = draw_familiar(&pose);
        if let Some((col, amount)) = flash {
            ch.tint(col, amount.max(0.0));
        }
        out.blit(&ch, 0, 0);
    }
    out.blit(&fx_front, 0, 0);
    out
}

/// The familiar's whole sheet, laid out by [`SHEET`].
pub fn familiar_sheet() -> Canvas {
    let mut sheet = Canvas::new(SHEET.width(), SHEET.height());
    for (row, anim) in Anim::ALL.iter().enumerate() {
        let (frames, _) = SHEET.rows[row];
        for f in 0..frames {
            let fr = frame(*anim, f);
            sheet.blit(
                &fr,
                (f * SHEET.frame) as i32,
                (row as u32 * SHEET.frame) as i32,
            );
        }
    }
    sheet
}

/// A companion: a small light wisp, drawn pale so the game can tint it per subagent type.
fn wisp(dy: f32, scale: f32, eyes_open: bool, glow: bool) -> Canvas {
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
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }
    fn below(&mut self, n: u32) -> u32 {
        self.next() % n.max(1)
    }
}

/// Night-sky backdrop (160×100): gradient, stars, moon, hills and a stone floor.
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
    // Moon with a bite.
    c.ellipse(132.0, 18.0, 8.0, 8.0, [250, 240, 200, 255]);
    c.ellipse(129.5, 16.0, 2.0, 1.5, [225, 212, 170, 255]);
    c.ellipse(135.0, 21.0, 1.5, 1.2, [225, 212, 170, 255]);
    // Hills.
    for x in 0..w as i32 {
        let xf = x as f32;
        let far = 66.0 + 6.0 * (xf * 0.05).sin() + 3.0 * (xf * 0.13 + 1.0).sin();
        let near = 74.0 + 4.0 * (xf * 0.07 + 2.0).sin() + 2.0 * (xf * 0.21).sin();
        for y in far as i32..h as i32 {
            c.set(x, y, [44, 34, 78, 255]);
        }
        for y in near as i32..h as i32 {
            c.set(x, y, [34, 26, 60, 255]);
        }
    }
    // Stone floor.
    for y in 82..h as i32 {
        for x in 0..w as i32 {
            let row = (y - 82) / 6;
            let off = if row % 2 == 0 { 0 } else { 6 };
            let edge = (y - 82) % 6 == 0 || (x + off) % 12 == 0;
            let col = if edge {
                [40, 30, 62, 255]
            } else if (y - 82) % 6 == 1 {
                [84, 70, 118, 255]
            } else {
                [66, 54, 98, 255]
            };
            c.set(x, y, col);
        }
    }
    c
}

/// Every asset file the generator writes, with its canvas.
pub fn all_assets() -> Vec<(&'static str, Canvas)> {
    vec![
        ("familiar.png", familiar_sheet()),
        ("companion.png", companion_sheet()),
        ("icons.png", icons()),
        ("background.png", background()),
    ]
}

/// Encodes a canvas as PNG bytes.
pub fn encode_png(c: &Canvas) -> Result<Vec<u8>, image::ImageError> {
    let mut out = Vec::new();
    let encoder = image::codecs::png::PngEncoder::new(&mut out);
    image::ImageEncoder::write_image(
        encoder,
        &c.to_rgba_bytes(),
        c.width,
        c.height,
        image::ExtendedColorType::Rgba8,
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_fits_the_sheet() {
        assert_eq!(SHEET.rows.len(), Anim::ALL.len());
        for (frames, fps) in SHEET.rows {
            assert!(*frames >= 1 && *frames <= SHEET.columns);
            assert!(*fps > 0.0);
        }
    }

    #[test]
    fn every_frame_draws_something_and_frames_differ() {
        let sheet = familiar_sheet();
        for (row, (frames, _)) in SHEET.rows.iter().enumerate() {
            let mut seen = Vec::new();
            for f in 0..*frames {
                let mut fr = Canvas::new(48, 48);
                for y in 0..48 {
                    for x in 0..48 {
                        let c = sheet.get((f * 48) as i32 + x, (row as u32 * 48) as i32 + y);
                        fr.set(x, y, c);
                    }
                }
                let opaque = fr.pixels.iter().filter(|p| p[3] > 0).count();
                assert!(opaque > 100, "row {row} frame {f}: only {opaque} pixels");
                seen.push(fr);
            }
            if *frames > 1 {
                assert!(
                    seen.windows(2).any(|w| w[0] != w[1]),
                    "row {row} never changes"
                );
            }
        }
    }

    #[test]
    fn outline_surrounds_shapes() {
        let mut c = Canvas::new(8, 8);
        c.rect(3, 3, 2, 2, WHITE);
        c.outline(OUT);
        assert_eq!(c.get(2, 3), OUT);
        assert_eq!(c.get(5, 4), OUT);
        assert_eq!(c.get(3, 3), WHITE);
        assert_eq!(c.get(0, 0), CLEAR);
    }

    #[test]
    fn committed_assets_match_the_generator() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets");
        for (name, canvas) in all_assets() {
            let path = dir.join(name);
            let bytes = std::fs::read(&path).unwrap_or_else(|e| {
                panic!(
                    "{}: {e}; run `cargo run -p familiar-game --bin gen-sprites`",
                    path.display()
                )
            });
            let decoded = image::load_from_memory(&bytes)
                .unwrap_or_else(|e| panic!("{name}: {e}"))
                .to_rgba8();
            assert_eq!(
                (decoded.width(), decoded.height()),
                (canvas.width, canvas.height),
                "{name} size"
            );
            assert!(
                decoded.as_raw() == &canvas.to_rgba_bytes(),
                "{name} is stale: run `cargo run -p familiar-game --bin gen-sprites`"
            );
        }
    }
}
