//! Where things go: the pure geometry of the scene for a canvas size (`canvas::CANVAS` in the
//! game) and a number of familiars, shared by `spawn`, `draw` and `hud`, tested without a
//! window. Units are canvas pixels; text is measured by `font`, lines are 16 pixels.
//!
//! The screen is stacked top to bottom, so no text can land on other text: the top row (quest
//! banner on the left, replay status on the right), the log strip, the sessions' plates (one
//! row above their familiars while they fit, else a grid of compact plates), then the
//! familiars standing on the floor. Every text node is clipped to its rectangle.

use bevy::prelude::*;

use crate::sheet::SHEET;

/// Where things go for a canvas size and number of familiars. World coordinates have their
/// origin at the canvas centre, y up, one unit per canvas pixel; screen rectangles are in
/// canvas pixels from the top-left corner (`window` is the canvas's size).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    pub window: Vec2,
    pub count: usize,
    /// Integer pixel-art scale.
    pub scale: f32,
    /// World y of the floor line.
    pub ground_y: f32,
    /// Plates per row.
    pub columns: usize,
    /// Compact plates (one line of text and the mana bar) when full ones leave no room.
    pub compact: bool,
    /// Whether the log strip has room (not with many sessions in a small window).
    pub log: bool,
}

/// Gap between boxes and around the screen's edge.
pub const MARGIN: f32 = 4.0;
pub const TOP_ROW_HEIGHT: f32 = 20.0;
pub const STATUS_WIDTH: f32 = 64.0;
/// Log lines shown (the newest).
pub const LOG_LINES: usize = 3;
pub const LOG_LINE_HEIGHT: f32 = crate::font::LINE_HEIGHT as f32;
pub const LOG_HEIGHT: f32 = LOG_LINES as f32 * LOG_LINE_HEIGHT + 4.0;
pub const PLATE_HEIGHT: f32 = 56.0;
pub const COMPACT_PLATE_HEIGHT: f32 = 30.0;
const MIN_PLATE_WIDTH: f32 = 112.0;
const MIN_COMPACT_WIDTH: f32 = 96.0;
const MAX_PLATE_WIDTH: f32 = 200.0;
/// Padding inside a plate.
pub const PAD: f32 = 3.0;
/// Height of the mana bar, border included.
pub const BAR_HEIGHT: f32 = 12.0;
/// Rows of a sprite frame above the floor line (the frame has two empty rows under the feet).
const SPRITE_ROWS: f32 = 46.0;
const BUBBLE_HEIGHT: f32 = 40.0;

pub fn layout(window: Vec2, count: usize) -> Layout {
    let count = count.max(1);
    let ground_y = -window.y / 2.0 + (window.y * 0.1).max(16.0);
    let ground_screen = window.y / 2.0 - ground_y;
    // The richest arrangement that leaves the familiars room to stand: full plates, then
    // compact ones, then compact ones without the log strip.
    let options = [(false, true), (true, true), (true, false)];
    let mut l = Layout {
        window,
        count,
        scale: 1.0,
        ground_y,
        columns: 1,
        compact: false,
        log: true,
    };
    for (compact, log) in options {
        let min = if compact {
            MIN_COMPACT_WIDTH
        } else {
            MIN_PLATE_WIDTH
        };
        let fit = (((window.x - MARGIN) / (min + MARGIN)).floor() as usize).max(1);
        l.columns = count.min(fit);
        l.compact = compact;
        l.log = log;
        if l.plates_bottom() + MARGIN + SPRITE_ROWS <= ground_screen {
            break;
        }
    }
    let room = ground_screen - l.plates_bottom() - MARGIN;
    let spacing = window.x / count as f32;
    l.scale = (spacing / 60.0)
        .min(room / SPRITE_ROWS)
        .floor()
        .clamp(1.0, 4.0);
    l
}

impl Layout {
    fn plate_height(&self) -> f32 {
        if self.compact {
            COMPACT_PLATE_HEIGHT
        } else {
            PLATE_HEIGHT
        }
    }

    /// Whether the plates stand in a grid (numbered, like their familiars) rather than each
    /// above its own familiar.
    pub fn grid(&self) -> bool {
        self.rows() > 1
    }

    fn rows(&self) -> usize {
        self.count.div_ceil(self.columns)
    }

    fn plates_top(&self) -> f32 {
        let log = if self.log { LOG_HEIGHT + MARGIN } else { 0.0 };
        MARGIN + TOP_ROW_HEIGHT + MARGIN + log
    }

    /// Screen y under the last row of plates.
    pub fn plates_bottom(&self) -> f32 {
        self.plates_top() + self.rows() as f32 * (self.plate_height() + MARGIN)
    }

    /// The quest banner, top left.
    pub fn banner_rect(&self) -> Rect {
        Rect::new(
            MARGIN,
            MARGIN,
            self.window.x - 2.0 * MARGIN - STATUS_WIDTH,
            MARGIN + TOP_ROW_HEIGHT,
        )
    }

    /// The replay status (`x2`, `PAUSED`), top right.
    pub fn status_rect(&self) -> Rect {
        Rect::new(
            self.window.x - MARGIN - STATUS_WIDTH,
            MARGIN,
            self.window.x - MARGIN,
            MARGIN + TOP_ROW_HEIGHT,
        )
    }

    /// The log strip, under the top row, when it has room.
    pub fn log_rect(&self) -> Option<Rect> {
        let top = MARGIN + TOP_ROW_HEIGHT + MARGIN;
        self.log
            .then(|| Rect::new(MARGIN, top, self.window.x - MARGIN, top + LOG_HEIGHT))
    }

    /// The plate of the session at `index`: above its familiar while plates fit in one row,
    /// else in a grid, left to right.
    pub fn plate_rect(&self, index: usize) -> Rect {
        let h = self.plate_height();
        if self.rows() == 1 {
            let spacing = self.window.x / self.count as f32;
            let w = (spacing - MARGIN).min(MAX_PLATE_WIDTH);
            let x = self.to_screen(Vec2::new(self.familiar_x(index), 0.0)).x;
            let top = self.plates_top();
            return Rect::new(x - w / 2.0, top, x + w / 2.0, top + h);
        }
        let w = (self.window.x - MARGIN) / self.columns as f32 - MARGIN;
        let (col, row) = (index % self.columns, index / self.columns);
        let left = MARGIN + col as f32 * (w + MARGIN);
        let top = self.plates_top() + row as f32 * (h + MARGIN);
        Rect::new(left, top, left + w, top + h)
    }

    /// The mana bar inside the plate, border included.
    pub fn mana_bar_rect(&self, index: usize) -> Rect {
        let plate = self.plate_rect(index);
        let top = plate.min.y + if self.compact { 15.0 } else { 30.0 };
        Rect::new(plate.min.x + PAD, top, plate.max.x - PAD, top + BAR_HEIGHT)
    }

    /// Where the familiar's speech bubble may go: beside it when alone, else in its column
    /// under the plates. `None` when there is no room.
    pub fn bubble_rect(&self, index: usize) -> Option<Rect> {
        let top = self.plates_bottom();
        let r = if self.count == 1 {
            let sprite = self.sprite_rect(index);
            let left = sprite.max.x + MARGIN;
            Rect::new(
                left,
                top,
                self.window.x - MARGIN,
                (top + BUBBLE_HEIGHT).min(sprite.max.y),
            )
        } else {
            let spacing = self.window.x / self.count as f32;
            let left = spacing * index as f32 + MARGIN / 2.0;
            Rect::new(left, top, left + spacing - MARGIN, top + BUBBLE_HEIGHT)
        };
        (r.width() >= 60.0 && r.height() >= 20.0 && r.max.y <= self.window.y).then_some(r)
    }

    /// World x of the familiar at `index` (0-based, left to right).
    pub fn familiar_x(&self, index: usize) -> f32 {
        let spacing = self.window.x / self.count as f32;
        -self.window.x / 2.0 + spacing * (index as f32 + 0.5)
    }

    /// World centre of the familiar's sprite (its frame has two empty rows under the feet).
    pub fn sprite_center(&self, index: usize) -> Vec2 {
        Vec2::new(
            self.familiar_x(index),
            self.ground_y + (SHEET.frame as f32 / 2.0 - 2.0) * self.scale,
        )
    }

    /// Screen rectangle of the familiar's sprite.
    pub fn sprite_rect(&self, index: usize) -> Rect {
        let c = self.to_screen(self.sprite_center(index));
        let half = SHEET.frame as f32 * self.scale / 2.0;
        Rect::new(c.x - half, c.y - half, c.x + half, c.y + half)
    }

    pub fn to_screen(&self, world: Vec2) -> Vec2 {
        Vec2::new(world.x + self.window.x / 2.0, self.window.y / 2.0 - world.y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [(f32, f32); 4] = [
        (480.0, 320.0),
        (640.0, 400.0),
        (320.0, 240.0),
        (1280.0, 720.0),
    ];

    fn inside(r: Rect, w: f32, h: f32) -> bool {
        r.min.x >= 0.0 && r.min.y >= 0.0 && r.max.x <= w && r.max.y <= h && r.width() > 0.0
    }

    fn overlap(a: Rect, b: Rect) -> bool {
        !a.intersect(b).is_empty()
    }

    /// Issue 14: labels overlapped each other, the status hid behind the moon, a label was cut.
    #[test]
    fn no_label_overlaps_another_or_leaves_the_canvas_for_1_to_10_sessions() {
        for (w, h) in SIZES {
            for n in 1..=10 {
                let l = layout(Vec2::new(w, h), n);
                let mut labels = vec![("banner", l.banner_rect()), ("status", l.status_rect())];
                labels.extend(l.log_rect().map(|r| ("log", r)));
                for i in 0..n {
                    labels.push(("plate", l.plate_rect(i)));
                    if let Some(b) = l.bubble_rect(i) {
                        labels.push(("bubble", b));
                    }
                }
                for (i, (name, r)) in labels.iter().enumerate() {
                    assert!(
                        inside(*r, w, h),
                        "{w}x{h} n={n}: {name} {r:?} leaves the canvas"
                    );
                    for (other, s) in &labels[i + 1..] {
                        assert!(
                            !overlap(*r, *s),
                            "{w}x{h} n={n}: {name} {r:?} overlaps {other} {s:?}"
                        );
                    }
                }
                for i in 0..n {
                    let bar = l.mana_bar_rect(i);
                    let plate = l.plate_rect(i);
                    assert!(
                        plate.contains(bar.min) && plate.contains(bar.max),
                        "{w}x{h} n={n}: the mana bar {bar:?} leaves its plate {plate:?}"
                    );
                    // The cat (ears to tail) spans 17 pixels either side of its frame's centre.
                    let sprite = l.sprite_rect(i);
                    let (cx, art) = (sprite.center().x, 17.0 * l.scale);
                    assert!(
                        cx - art >= -2.0 && cx + art <= w + 2.0 && sprite.max.y <= h,
                        "{w}x{h} n={n}: familiar {i} {sprite:?} leaves the canvas"
                    );
                    // The hat may touch the plates' margin, never a label.
                    let hat = sprite.min.y + 6.0 * l.scale;
                    assert!(
                        hat >= l.plates_bottom() - MARGIN,
                        "{w}x{h} n={n}: familiar {i} (hat at {hat}) under the plates ({})",
                        l.plates_bottom()
                    );
                }
            }
        }
    }

    #[test]
    fn one_familiar_stands_large_and_ten_still_fit() {
        assert_eq!(layout(Vec2::new(480.0, 320.0), 1).scale, 3.0);
        let ten = layout(Vec2::new(480.0, 320.0), 10);
        assert!(ten.compact);
        assert_eq!(ten.scale, 1.0);
    }
}
