//! Where things go: the pure geometry of the scene for a window size and a number of
//! familiars, shared by `spawn` and `draw` and tested without a window.

use bevy::prelude::*;

use crate::sheet::SHEET;

/// Where things go for a window size and number of familiars. World coordinates have their
/// origin at the window centre, y up, one unit per logical pixel; screen rectangles are in
/// logical pixels from the top-left corner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layout {
    pub window: Vec2,
    pub count: usize,
    /// Integer pixel-art scale.
    pub scale: f32,
    /// World y of the floor line.
    pub ground_y: f32,
    pub bar_width: f32,
}

pub const BAR_HEIGHT: f32 = 12.0;
pub(super) const HUD_HEIGHT: f32 = 44.0;

pub fn layout(window: Vec2, count: usize) -> Layout {
    let count = count.max(1);
    let spacing = window.x / count as f32;
    let scale = (spacing / 60.0)
        .min(window.y / 100.0)
        .floor()
        .clamp(1.0, 4.0);
    Layout {
        window,
        count,
        scale,
        ground_y: -window.y / 2.0 + (window.y * 0.1).max(16.0),
        bar_width: (spacing - 24.0).clamp(60.0, 150.0),
    }
}

impl Layout {
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

    /// Screen y of the top of the familiar's hat.
    fn head_top_screen(&self) -> f32 {
        self.to_screen(Vec2::new(0.0, self.ground_y + 40.0 * self.scale))
            .y
    }

    /// Screen rectangle of the familiar's HUD block (label, mana bar, XP bar).
    pub fn hud_rect(&self, index: usize) -> Rect {
        let x = self.to_screen(Vec2::new(self.familiar_x(index), 0.0)).x;
        let bottom = self.head_top_screen() - 4.0;
        let top = (bottom - HUD_HEIGHT).max(46.0);
        Rect::new(
            x - self.bar_width / 2.0,
            top,
            x + self.bar_width / 2.0,
            top + HUD_HEIGHT,
        )
    }

    /// Screen rectangle of the mana bar including its 2-pixel border.
    pub fn mana_bar_rect(&self, index: usize) -> Rect {
        let hud = self.hud_rect(index);
        let top = hud.min.y + 16.0;
        Rect::new(hud.min.x, top, hud.max.x, top + BAR_HEIGHT)
    }

    pub fn to_screen(&self, world: Vec2) -> Vec2 {
        Vec2::new(world.x + self.window.x / 2.0, self.window.y / 2.0 - world.y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_keeps_things_inside_the_window() {
        for (w, h) in [(480.0, 320.0), (320.0, 200.0), (1280.0, 720.0)] {
            for n in 1..=4 {
                let l = layout(Vec2::new(w, h), n);
                for i in 0..n {
                    let s = l.sprite_rect(i);
                    assert!(
                        s.min.x >= -1.0 && s.max.x <= w + 1.0,
                        "{w}x{h} n={n}: {s:?}"
                    );
                    assert!(s.max.y <= h, "{w}x{h} n={n}: {s:?}");
                    let bar = l.mana_bar_rect(i);
                    assert!(
                        bar.min.y > 0.0 && bar.max.y < s.min.y + 20.0,
                        "{bar:?} {s:?}"
                    );
                }
            }
        }
        assert_eq!(layout(Vec2::new(480.0, 320.0), 1).scale, 3.0);
    }
}
