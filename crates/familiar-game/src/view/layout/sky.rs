//! The layout's sky: the backdrop's scale and place, the far hills' line, where the sun or
//! the moon may go without any text over it, and the band the clouds drift in. Part of
//! `layout`.

use bevy::prelude::*;

use super::*;

/// The backdrop's floor: the row of its art (of [`crate::sheet::SKY_SIZE`]) the familiars and
/// the decor stand on.
const FLOOR_ROW: f32 = 84.0;

impl Layout {
    /// The backdrop's scale (it is `sheet::SKY_SIZE` art pixels, covering the canvas) and its
    /// centre in world coordinates, its floor under the familiars' feet.
    pub fn backdrop(&self) -> (f32, Vec2) {
        let [w, h] = crate::sheet::SKY_SIZE;
        let (w, h) = (w as f32, h as f32);
        let scale = (self.window.x / w).max(self.window.y / h).ceil();
        let floor_from_bottom = (h - FLOOR_ROW) * scale;
        let y = self.ground_y - floor_from_bottom + h / 2.0 * scale;
        let half = h / 2.0 * scale;
        let y = y
            .max(self.window.y / 2.0 - half)
            .min(-self.window.y / 2.0 + half);
        (scale, Vec2::new(0.0, y))
    }

    /// Where the art of a decor layer drawn at `scale` stands on screen: `art` is its box in
    /// the layer (`[x0, y0, x1, y1]`, pixels of the backdrop-sized layer,
    /// `view::wardrobe::decor_art`). See [`Layout::decor_layer`].
    pub fn decor_rect(&self, scale: f32, art: [u32; 4]) -> Rect {
        let (left, top) = self.decor_origin(scale, art);
        let at = |v: u32| v as f32 * scale;
        Rect::new(
            left + at(art[0]),
            top + at(art[1]),
            left + at(art[2]),
            top + at(art[3]),
        )
    }

    /// The centre (world coordinates, as [`Layout::backdrop`]) of the layer whose art is
    /// `art`, drawn at `scale`: standing on the backdrop's floor (its row 84), and held to the
    /// side of the canvas its art is on (a prop in the left half of the layer keeps its
    /// distance from the canvas's left edge, or from the backdrop's where that is inside), so
    /// that a smaller scale leaves the middle, where the familiars stand, free.
    pub fn decor_layer(&self, scale: f32, art: [u32; 4]) -> Vec2 {
        let [w, h] = crate::sheet::SKY_SIZE;
        let (left, top) = self.decor_origin(scale, art);
        let centre = Vec2::new(left + w as f32 / 2.0 * scale, top + h as f32 / 2.0 * scale);
        Vec2::new(
            centre.x - self.window.x / 2.0,
            self.window.y / 2.0 - centre.y,
        )
    }

    /// The screen position of the top-left corner of the layer of `art` drawn at `scale`.
    fn decor_origin(&self, scale: f32, art: [u32; 4]) -> (f32, f32) {
        let (backdrop, centre) = self.backdrop();
        let [w, h] = crate::sheet::SKY_SIZE;
        let (w, h) = (w as f32, h as f32);
        let c = self.to_screen(centre);
        let floor = c.y + (FLOOR_ROW - h / 2.0) * backdrop;
        let top = floor - FLOOR_ROW * scale;
        let left = if art[0] + art[2] < w as u32 {
            (c.x - w / 2.0 * backdrop).max(0.0)
        } else {
            (c.x + w / 2.0 * backdrop).min(self.window.x) - w * scale
        };
        (left, top)
    }

    /// Whether decor with this art, drawn at `scale`, stands behind no familiar and under no
    /// text that stays (issue 27: the bookshelf stood behind the leftmost familiar of a party
    /// and under the log). Where it cannot, it is not drawn.
    pub fn decor_fits(&self, scale: f32, art: [u32; 4]) -> bool {
        let r = self.decor_rect(scale, art);
        let clear = |other: Rect| r.intersect(other).is_empty();
        (0..self.count).all(|i| clear(self.body_rect(i)))
            && self.text_rects().0.into_iter().all(clear)
    }

    /// The scale to draw the decor at: the largest whole one, no larger than the backdrop's
    /// and at which the backdrop fits in the canvas, at which every prop of `arts` fits (down
    /// to 2); if none does, that largest one (the props that do not fit are then not drawn).
    pub fn decor_scale(&self, arts: &[[u32; 4]]) -> f32 {
        let [w, h] = crate::sheet::SKY_SIZE;
        let largest = (self.window.x / w as f32)
            .min(self.window.y / h as f32)
            .floor()
            .clamp(1.0, self.backdrop().0);
        let mut scale = largest;
        while scale >= 2.0 {
            if arts.iter().all(|art| self.decor_fits(scale, *art)) {
                return scale;
            }
            scale -= 1.0;
        }
        largest
    }

    /// The familiar's body at `index` (its frame is wider than it is), for the art that must
    /// keep off it.
    pub fn body_rect(&self, index: usize) -> Rect {
        let sprite = self.sprite_rect(index);
        let body = 17.0 * self.scale;
        Rect::new(
            sprite.center().x - body,
            sprite.min.y,
            sprite.center().x + body,
            sprite.max.y,
        )
    }

    /// Screen y of the far hills' top at screen column `x`.
    pub(super) fn hills_top(&self, x: f32) -> f32 {
        let (scale, centre) = self.backdrop();
        let [w, h] = crate::sheet::SKY_SIZE;
        let left = self.to_screen(centre).x - w as f32 / 2.0 * scale;
        let top = self.to_screen(centre).y - h as f32 / 2.0 * scale;
        let column = ((x - left) / scale).floor() as i32;
        top + crate::sheet::hills(column).0.floor() * scale
    }

    /// Whether `r` is above the far hills over its whole width.
    pub(super) fn under_no_hill(&self, r: Rect) -> bool {
        let mut x = r.min.x;
        while x < r.max.x {
            if r.max.y > self.hills_top(x) {
                return false;
            }
            x += 1.0;
        }
        true
    }

    /// Every box of text that stays on screen (the top row, the log strip, the plates, the
    /// panel), then the speech bubbles and the floaters, which come and go (the focus card and
    /// tooltips are overlays the user opens).
    pub fn text_rects(&self) -> (Vec<Rect>, Vec<Rect>) {
        let mut kept = vec![self.banner_rect(), self.status_rect()];
        kept.extend(self.log_rect());
        kept.extend((0..self.count).map(|i| self.plate_rect(i)));
        kept.extend(self.panel_rect());
        let passing = (0..self.count)
            .flat_map(|i| {
                self.bubble_rect(i)
                    .into_iter()
                    .chain([self.floater_rect(i)])
            })
            .collect();
        (kept, passing)
    }

    /// Where the sun or the moon stands: the highest free spot of the column nearest the right
    /// edge that has one (then from the left edge: the scene decor stands at the sides, the
    /// sun is behind it), above the hills, clear of every text box and of the familiars; when the
    /// sky has no such room, with a familiar in front of it (art may stand before the moon),
    /// then with a speech bubble or floater passing over it, never under the text that stays
    /// (`text_rects`); `None` (not drawn) when the sky has no such room. Issue 14: the replay
    /// speed and the log strip covered the moon painted into the backdrop.
    pub fn sky_body_rect(&self) -> Option<Rect> {
        let half = crate::sheet::SKY_BODY_RADIUS * SKY_BODY_SCALE + 1.0;
        let (kept, passing) = self.text_rects();
        let art: Vec<Rect> = (0..self.count).map(|i| self.body_rect(i)).collect();
        let (w, h) = (self.window.x, self.window.y);
        // Columns from the right edge inwards, then from the left.
        let mut xs = Vec::new();
        let mut x = w - MARGIN - half;
        while x > w / 2.0 {
            xs.push(x);
            x -= 4.0;
        }
        let mut x = MARGIN + half;
        while x < w / 2.0 {
            xs.push(x);
            x += 4.0;
        }
        let free = |r: Rect, avoid: &[&[Rect]]| {
            !avoid
                .iter()
                .flat_map(|rects| rects.iter())
                .any(|t| !t.intersect(r).is_empty())
                && r.min.x >= 0.0
                && r.max.x <= w
                && r.min.y >= 0.0
                && r.max.y <= h
                && self.under_no_hill(r)
        };
        let passes: [&[&[Rect]]; 3] = [&[&kept, &passing, &art], &[&kept, &passing], &[&kept]];
        for avoid in passes {
            for x in &xs {
                let mut y = self.plates_bottom() + half;
                while y + half < h {
                    let r = Rect::new(x - half, y - half, x + half, y + half);
                    if free(r, avoid) {
                        return Some(r);
                    }
                    y += 2.0;
                }
            }
        }
        None
    }

    /// Where the weather's clouds drift (their art's visible rows, at the scale returned):
    /// under the plates, above every floater's text (a light cloud behind a floater made it
    /// unreadable); they are drawn behind the familiars.
    pub fn cloud_band(&self) -> (Rect, f32) {
        let top = self.plates_bottom();
        let floaters = (0..self.count)
            .map(|i| self.floater_rect(i).min.y)
            .fold(self.window.y, f32::min);
        // 14 rows of art, and 2 of drift down; smaller when 2× does not fit (a window too
        // small for both is not the canvas: then they pass behind the floaters).
        let scale = if top + 32.0 <= floaters && self.scale >= 2.0 {
            2.0
        } else {
            1.0
        };
        (
            Rect::new(0.0, top, self.window.x, top + 16.0 * scale),
            scale,
        )
    }

    /// Screen y above which nothing of the familiars is drawn: their hats and floaters.
    pub(super) fn art_top(&self) -> f32 {
        (0..self.count)
            .map(|i| {
                let hat = self.hat_rect(i).min.y;
                hat.min(self.floater_rect(i).min.y)
            })
            .fold(self.window.y, f32::min)
    }
}
