//! The canvas the art is drawn on: an RGBA buffer with a few primitives (filled ellipses,
//! triangles, lines, an outline pass), and the palette every picture shares.

/// An RGBA colour.
pub type Rgba = [u8; 4];

pub(crate) const CLEAR: Rgba = [0, 0, 0, 0];
pub(crate) const OUT: Rgba = [35, 22, 54, 255];
pub(crate) const SHADE: Rgba = [88, 62, 170, 255];
pub(crate) const BASE: Rgba = [128, 100, 220, 255];
pub(crate) const LIGHT: Rgba = [172, 150, 245, 255];
pub(crate) const CREAM: Rgba = [246, 236, 255, 255];
pub(crate) const PINK: Rgba = [255, 150, 185, 255];
pub(crate) const HAT: Rgba = [40, 70, 160, 255];
pub(crate) const HAT_SHADE: Rgba = [28, 48, 120, 255];
pub(crate) const HAT_LIGHT: Rgba = [78, 118, 215, 255];
pub(crate) const GOLD: Rgba = [255, 214, 80, 255];
pub(crate) const GOLD_DARK: Rgba = [200, 140, 30, 255];
pub(crate) const WHITE: Rgba = [255, 255, 255, 255];
pub(crate) const PUPIL: Rgba = [30, 20, 50, 255];
pub(crate) const SPARK: Rgba = [170, 230, 255, 255];
pub(crate) const BOOK: Rgba = [150, 78, 44, 255];
pub(crate) const BOOK_DARK: Rgba = [100, 50, 30, 255];
pub(crate) const PAGE: Rgba = [250, 244, 225, 255];
pub(crate) const RED: Rgba = [240, 64, 72, 255];
pub(crate) const SWEAT: Rgba = [130, 200, 255, 255];
pub(crate) const SHIELD: Rgba = [120, 220, 255, 255];
pub(crate) const SMOKE: Rgba = [206, 200, 228, 255];
pub(crate) const SMOKE_SHADE: Rgba = [150, 142, 180, 255];
pub(crate) const ZZZ: Rgba = [205, 215, 255, 255];

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

    pub(crate) fn ellipse(&mut self, cx: f32, cy: f32, rx: f32, ry: f32, c: Rgba) {
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
    pub(crate) fn ball(&mut self, cx: f32, cy: f32, rx: f32, ry: f32, tones: [Rgba; 3]) {
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

    pub(crate) fn rect(&mut self, x: i32, y: i32, w: i32, h: i32, c: Rgba) {
        for yy in y..y + h {
            for xx in x..x + w {
                self.set(xx, yy, c);
            }
        }
    }

    pub(crate) fn triangle(&mut self, a: (f32, f32), b: (f32, f32), c: (f32, f32), col: Rgba) {
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

    pub(crate) fn line(&mut self, x0: i32, y0: i32, x1: i32, y1: i32, c: Rgba) {
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
    pub(crate) fn outline(&mut self, c: Rgba) {
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
    pub(crate) fn tint(&mut self, c: Rgba, amount: f32) {
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

pub(crate) fn blend(dst: Rgba, src: Rgba) -> Rgba {
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

pub(crate) fn with_alpha(c: Rgba, a: u8) -> Rgba {
    [c[0], c[1], c[2], a]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(crate) fn outline_surrounds_shapes() {
        let mut c = Canvas::new(8, 8);
        c.rect(3, 3, 2, 2, WHITE);
        c.outline(OUT);
        assert_eq!(c.get(2, 3), OUT);
        assert_eq!(c.get(5, 4), OUT);
        assert_eq!(c.get(3, 3), WHITE);
        assert_eq!(c.get(0, 0), CLEAR);
    }
}
