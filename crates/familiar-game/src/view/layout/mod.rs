//! Where things go: the pure geometry of the scene for a canvas size (`canvas::CANVAS` in the
//! game) and a number of familiars, shared by `spawn`, `draw` and `hud`, tested without a
//! window. Units are canvas pixels; text is measured by `font`, lines are 16 pixels.
//!
//! The screen is stacked top to bottom, so no text can land on other text: the top row (quest
//! banner on the left, replay status on the right), the log strip, the sessions' plates (one
//! row above their familiars while they fit, else a grid of compact plates; with more than
//! one session each ends in a line of what it is doing now), then the familiars standing on
//! the floor. Every text node is clipped to its rectangle.
//!
//! The panel of what the agent is doing (plan, quest, last actions) takes the free space that
//! is left: left of the plate of a lone familiar (which stands at the right for it), or a band between the plates and the
//! familiars of a party when the window is tall enough. A focused session's card (its
//! details) takes the band from the top row down to the familiars' art, in place of the log
//! strip, the plates and the bubbles, which hide meanwhile. Pointer hits (`hit`) are in the
//! same coordinates. The sky's geometry (backdrop, hills, sun or moon, clouds) is in `sky`.

use bevy::prelude::*;

use crate::sheet::SHEET;

/// The sky's part: the backdrop, the hills, the sun or moon's room, the clouds' band.
mod sky;

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
    /// Whether each plate ends in a line of what its session is doing (with more than one
    /// session, while there is room).
    pub doing: bool,
}

/// Gap between boxes and around the screen's edge.
pub const MARGIN: f32 = 4.0;
/// Half the width of a familiar's number under its feet ("10": two glyphs).
pub const TAG_HALF_WIDTH: f32 = 6.0;
/// A companion's label narrower than this (two glyphs and the ellipsis) is not shown.
pub const MIN_COMPANION_LABEL: f32 = 14.0;
pub const TOP_ROW_HEIGHT: f32 = 20.0;
pub const STATUS_WIDTH: f32 = 64.0;
/// Log lines shown (the newest).
pub const LOG_LINES: usize = 3;
pub const LOG_LINE_HEIGHT: f32 = crate::font::LINE_HEIGHT as f32;
pub const LOG_HEIGHT: f32 = LOG_LINES as f32 * LOG_LINE_HEIGHT + 4.0;
pub const PLATE_HEIGHT: f32 = 56.0;
pub const COMPACT_PLATE_HEIGHT: f32 = 30.0;
/// The line under a plate's own parts, of what its session is doing now (with more than one
/// session: a lone one has the panel for that).
pub const DOING_HEIGHT: f32 = 16.0;
/// Room kept above the familiars of a party whose plates have doing lines, for the floaters
/// rising from them and the sky between.
const DOING_ROOM: f32 = 24.0;
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
/// The XP bar inside a full plate: from `XP_BAR_LEFT` (after "Lv 12"), 46 px down, 6 high.
const XP_BAR_TOP: f32 = 46.0;
const XP_BAR_HEIGHT: f32 = 6.0;
/// Line height of the panel and the focus card's text: the pixel font's line.
pub const PANEL_LINE: f32 = crate::font::LINE_HEIGHT as f32;
const MIN_PANEL_WIDTH: f32 = 100.0;
const MAX_PANEL_WIDTH: f32 = 280.0;
/// Panel lines at most (quest, plan, actions and their headings).
pub const MAX_PANEL_LINES: usize = 14;
/// The floater's rise over its life (14 px/s for 1.8 s, `draw_floaters`) plus its line.
const FLOATER_RISE: f32 = 26.0 + 14.0;
/// The floater's widest text (28 characters at 11 px, `short_target`).
const FLOATER_WIDTH: f32 = 28.0 * 11.0 * 0.6;
/// The top row of the tallest hat in any frame (the archmage's, in the victory jump), in art
/// pixels from the top of the familiar's frame; a test measures `wearables.png`.
pub const HAT_TOP: f32 = 0.0;
/// How far the widest hat reaches either side of the frame's centre, in art pixels (the
/// archmage's brim while attacking; measured by the same test).
pub const HAT_HALF_WIDTH: f32 = 14.0;
/// The sun and the moon are drawn at this scale (their frame is 32 art pixels).
pub const SKY_BODY_SCALE: f32 = 2.0;

/// What the pointer is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hit {
    /// The mana bar of the familiar at this index.
    ManaBar(usize),
    /// Its XP bar.
    XpBar(usize),
    /// Its plate's first line (project and branch).
    Name(usize),
    /// The familiar (its sprite or its plate).
    Familiar(usize),
    /// The focus card.
    Card,
    Nothing,
}

pub fn layout(window: Vec2, count: usize) -> Layout {
    let count = count.max(1);
    let ground_y = -window.y / 2.0 + (window.y * 0.1).max(16.0);
    let ground_screen = window.y / 2.0 - ground_y;
    // The richest arrangement that leaves the familiars room to stand: full plates, then
    // compact ones, then compact ones without the log strip, then without the doing lines.
    // A party's plates with their doing lines also leave the floaters and the sky room.
    let party = count > 1;
    let options = [
        (false, true, party),
        (true, true, party),
        (true, false, party),
        (true, false, false),
    ];
    let mut l = Layout {
        window,
        count,
        scale: 1.0,
        ground_y,
        columns: 1,
        compact: false,
        log: true,
        doing: party,
    };
    for (compact, log, doing) in options {
        let min = if compact {
            MIN_COMPACT_WIDTH
        } else {
            MIN_PLATE_WIDTH
        };
        let fit = (((window.x - MARGIN) / (min + MARGIN)).floor() as usize).max(1);
        l.columns = count.min(fit);
        l.compact = compact;
        l.log = log;
        l.doing = doing;
        let room = if doing { DOING_ROOM } else { 0.0 };
        if l.plates_bottom() + MARGIN + SPRITE_ROWS + room <= ground_screen {
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
        let own = if self.compact {
            COMPACT_PLATE_HEIGHT
        } else {
            PLATE_HEIGHT
        };
        if self.doing_line() {
            own + DOING_HEIGHT
        } else {
            own
        }
    }

    /// Whether each plate has a line of what its session is doing now: with more than one
    /// session while there is room (a lone session's panel says it at length).
    pub fn doing_line(&self) -> bool {
        self.doing
    }

    /// The doing line's rectangle on the screen, inside the plate under its bars (`None`
    /// without one).
    pub fn doing_rect(&self, index: usize) -> Option<Rect> {
        let top = self.doing_top()?;
        let plate = self.plate_rect(index);
        // A line of the pixel font, its capitals on rows 7 to 13.
        Some(Rect::new(
            plate.min.x + PAD,
            plate.min.y + top + 6.0,
            plate.max.x - PAD,
            plate.min.y + top + 14.0,
        ))
    }

    /// Where the doing line's text goes in the plate, from its top (`None` without one).
    pub fn doing_top(&self) -> Option<f32> {
        let own = if self.compact {
            COMPACT_PLATE_HEIGHT
        } else {
            PLATE_HEIGHT
        };
        // The line's capitals on its rows 7 to 13: two pixels up keeps them off the border.
        self.doing_line().then_some(own - 3.0)
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

    /// The plate of the session at `index`: above its familiar while plates fit in one row
    /// (a lone familiar's at the right, for the panel), else in a grid, left to right.
    pub fn plate_rect(&self, index: usize) -> Rect {
        let h = self.plate_height();
        if self.count == 1 {
            // A lone familiar's plate stands at the right, leaving the left to the panel.
            let w = MAX_PLATE_WIDTH.min(self.window.x - 2.0 * MARGIN);
            let top = self.plates_top();
            let right = self.window.x - MARGIN;
            return Rect::new(right - w, top, right, top + h);
        }
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

    /// The plate's first line: its project and branch (hovered, the tooltip says them whole).
    pub fn name_rect(&self, index: usize) -> Rect {
        let plate = self.plate_rect(index);
        let bottom = if self.compact {
            plate.min.y + 14.0
        } else {
            plate.min.y + 15.0
        };
        Rect::new(plate.min.x, plate.min.y, plate.max.x, bottom)
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

    /// How far from its familiar a companion of `rank` stands (its oldest on the right, the
    /// next on the left, and so on outwards), in canvas pixels: negative to the left.
    pub fn companion_offset(&self, rank: usize) -> f32 {
        let side = if rank.is_multiple_of(2) { 1.0 } else { -1.0 };
        side * (26.0 + (rank / 2) as f32 * 16.0) * self.scale
    }

    /// The widest a companion's kind label may be, centred under the companion of `rank` of a
    /// familiar with `companions` of them: clear of the familiar's number (while plates stand
    /// in a grid), of the middle of the gap to the next familiar (whose companions stand on
    /// their side of it), of the familiar's middle while a companion stands on its other side,
    /// and of its own other companions on its side. 0 when there is no room. Regression: with
    /// six sessions a `general-purpose` label covered the next familiar's number.
    pub fn companion_label_width(&self, rank: usize, companions: usize) -> f32 {
        let away = self.companion_offset(rank).abs();
        let spacing = self.window.x / self.count.max(1) as f32;
        let mut half = spacing / 2.0 - away - 1.0;
        if self.grid() {
            half = half.min(away - TAG_HALF_WIDTH - 1.0);
        }
        if companions > 1 {
            half = half.min(away - 1.0);
        }
        let outer = rank + 2 < companions;
        if rank >= 2 || outer {
            half = half.min(8.0 * self.scale - 1.0);
        }
        let width = (2.0 * half).floor();
        if width < MIN_COMPANION_LABEL {
            0.0
        } else {
            width
        }
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

    /// The XP bar of a full plate (compact plates have none).
    pub fn xp_bar_rect(&self, index: usize) -> Option<Rect> {
        if self.compact {
            return None;
        }
        let plate = self.plate_rect(index);
        let top = plate.min.y + XP_BAR_TOP;
        Some(Rect::new(
            plate.min.x + super::XP_BAR_LEFT,
            top,
            plate.max.x - PAD,
            top + XP_BAR_HEIGHT,
        ))
    }

    /// Where the tool target floating up from the familiar may be during its life: it rises
    /// from the middle of the familiar's frame, on its left, between its own hat and the hat
    /// of the familiar on its left (or the canvas's edge), and is cut to that width
    /// (`draw_floaters`). Issue 14: it lay over the familiar's hat.
    pub fn floater_rect(&self, index: usize) -> Rect {
        let centre = self.to_screen(self.sprite_center(index));
        let right = centre.x - (HAT_HALF_WIDTH + 1.0) * self.scale;
        let left = match index.checked_sub(1) {
            Some(prev) => self.hat_rect(prev).max.x + self.scale,
            None => MARGIN / 2.0,
        };
        let left = left.max(right - FLOATER_WIDTH).min(right);
        let bottom = centre.y - 2.0 * self.scale;
        Rect::new(left, bottom - FLOATER_RISE, right, bottom)
    }

    /// Where the familiar's hat may be in any frame: from the tallest hat's top to the middle
    /// of the frame, as wide as the widest brim.
    pub fn hat_rect(&self, index: usize) -> Rect {
        let sprite = self.sprite_rect(index);
        let x = sprite.center().x;
        let half = HAT_HALF_WIDTH * self.scale;
        Rect::new(
            x - half,
            sprite.min.y + HAT_TOP * self.scale,
            x + half,
            sprite.center().y,
        )
    }

    /// The panel of what the agent is doing, when no session is focused: beside a lone
    /// familiar's plate, else a band under the plates and bubbles; `None` without room.
    pub fn panel_rect(&self) -> Option<Rect> {
        let bottom = self.art_top() - MARGIN;
        let r = if self.count == 1 && !self.grid() {
            let plate = self.plate_rect(0);
            let right = (plate.min.x - MARGIN).min(MARGIN + MAX_PANEL_WIDTH);
            span(MARGIN, self.plates_top(), right, bottom)
        } else {
            let top = (0..self.count)
                .filter_map(|i| self.bubble_rect(i))
                .map(|b| b.max.y)
                .fold(self.plates_bottom(), f32::max)
                + MARGIN;
            span(
                MARGIN,
                top,
                (self.window.x - MARGIN).min(MARGIN + 2.0 * MAX_PANEL_WIDTH),
                bottom,
            )
        };
        let max_height = MAX_PANEL_LINES as f32 * PANEL_LINE + 2.0 * PAD;
        let r = r?;
        let r = Rect::new(r.min.x, r.min.y, r.max.x, r.max.y.min(r.min.y + max_height));
        (r.width() >= MIN_PANEL_WIDTH && r.height() >= 3.0 * PANEL_LINE).then_some(r)
    }

    /// The focused session's card: under the top row, across the window, down to the
    /// familiars' art (the log strip, plates, bubbles and panel hide meanwhile).
    pub fn card_rect(&self) -> Option<Rect> {
        let top = MARGIN + TOP_ROW_HEIGHT + MARGIN;
        let bottom = self.art_top() - MARGIN;
        let r = span(MARGIN, top, self.window.x - MARGIN, bottom)?;
        (r.width() >= MIN_PANEL_WIDTH && r.height() >= 4.0 * PANEL_LINE).then_some(r)
    }

    /// The mark under the focused familiar's feet (a short bar on the floor, no text).
    pub fn focus_mark_rect(&self, index: usize) -> Rect {
        let sprite = self.sprite_rect(index);
        let feet = sprite.max.y - 2.0 * self.scale;
        let half = 10.0 * self.scale;
        let x = sprite.center().x;
        Rect::new(
            x - half,
            feet + 1.0,
            x + half,
            (feet + 3.0).min(self.window.y),
        )
    }

    /// What is under the pointer at screen point `p`, with or without a focused card.
    pub fn hit(&self, p: Vec2, focused: bool) -> Hit {
        if focused && self.card_rect().is_some_and(|r| r.contains(p)) {
            return Hit::Card;
        }
        for i in 0..self.count {
            if !focused {
                if self.mana_bar_rect(i).contains(p) {
                    return Hit::ManaBar(i);
                }
                if self.xp_bar_rect(i).is_some_and(|r| r.contains(p)) {
                    return Hit::XpBar(i);
                }
                if self.name_rect(i).contains(p) {
                    return Hit::Name(i);
                }
                if self.plate_rect(i).contains(p) {
                    return Hit::Familiar(i);
                }
            }
            // The cat's body: 17 px of art either side of its centre, hat to feet.
            let sprite = self.sprite_rect(i);
            let half = 17.0 * self.scale;
            let body = Rect::new(
                sprite.center().x - half,
                sprite.min.y + 6.0 * self.scale,
                sprite.center().x + half,
                sprite.max.y,
            );
            if body.contains(p) {
                return Hit::Familiar(i);
            }
        }
        Hit::Nothing
    }

    /// A tooltip `width` wide and one line high for what is at `anchor`: under it, else over
    /// it, kept inside the window.
    pub fn tooltip_rect(&self, anchor: Rect, width: f32) -> Rect {
        let h = PANEL_LINE + 2.0 * PAD;
        let w = width.min(self.window.x - 2.0 * MARGIN);
        let left = anchor.min.x.clamp(MARGIN, self.window.x - MARGIN - w);
        let below = anchor.max.y + 2.0;
        let top = if below + h <= self.window.y - MARGIN {
            below
        } else {
            (anchor.min.y - 2.0 - h).max(0.0)
        };
        Rect::new(left, top, left + w, top + h)
    }

    pub fn to_screen(&self, world: Vec2) -> Vec2 {
        Vec2::new(world.x + self.window.x / 2.0, self.window.y / 2.0 - world.y)
    }
}

/// The rectangle from `(left, top)` to `(right, bottom)`, `None` when empty or inverted
/// (`Rect::new` would swap the corners).
fn span(left: f32, top: f32, right: f32, bottom: f32) -> Option<Rect> {
    (right > left && bottom > top).then(|| Rect::new(left, top, right, bottom))
}

#[cfg(test)]
mod tests;
