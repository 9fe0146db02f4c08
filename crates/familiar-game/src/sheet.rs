//! Sprite-sheet layouts: frame size, rows, frame counts and frame rates of each sheet the
//! game shows. The `gen-sprites` binary draws the sheets by these layouts; the view cuts them
//! into frames and `anim` times them by the same numbers, so they cannot disagree. The
//! sheets themselves are embedded PNGs (`assets`): nothing is drawn at run time.

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

/// The familiar's sheet, rows in the order of [`crate::anim::Anim::ALL`] (48×48 frames).
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
        (4, 4.0),  // ask
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

/// Props of the world (32×32 frames): row 0 the campfire of rest and sleep (4 frames), row 1
/// a light cloud, a dark rain cloud, the sun and the moon.
pub const WORLD: SheetLayout = SheetLayout {
    frame: 32,
    columns: 4,
    rows: &[(4, 6.0), (4, 1.0)],
};

pub const WORLD_CLOUD: usize = 4;
pub const WORLD_RAIN_CLOUD: usize = 5;
/// The sun and the moon: their own sprites, not painted into the backdrops, so the layout can
/// keep every label off them (`view::Layout::sky_body_rect`, issue 14: the replay speed and
/// the log strip covered the moon).
pub const WORLD_SUN: usize = 6;
pub const WORLD_MOON: usize = 7;
/// The sun's or moon's radius in its frame, in art pixels; its frame is centred on it.
pub const SKY_BODY_RADIUS: f32 = 6.0;

/// The tops of the far and near hills at column `x` of a backdrop (`SKY_SIZE`), shared by
/// every backdrop `gen-sprites` paints and by the layout, which keeps the sun and the moon
/// above them.
pub fn hills(x: i32) -> (f32, f32) {
    let xf = x as f32;
    let far = 66.0 + 6.0 * (xf * 0.05).sin() + 3.0 * (xf * 0.13 + 1.0).sin();
    let near = 74.0 + 4.0 * (xf * 0.07 + 2.0).sin() + 2.0 * (xf * 0.21).sin();
    (far, near)
}

/// The backdrops: one picture per phase of the day (`crate::ambience::Phase` order: night, dawn,
/// day, dusk), each `SKY_SIZE`, stacked top to bottom in `sky.png`.
pub const SKY_SIZE: [u32; 2] = [160, 100];
pub const SKY_PHASES: u32 = 4;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::Anim;

    #[test]
    fn every_row_fits_the_sheet() {
        assert_eq!(SHEET.rows.len(), Anim::ALL.len());
        for (frames, fps) in SHEET.rows {
            assert!(*frames >= 1 && *frames <= SHEET.columns);
            assert!(*fps > 0.0);
        }
    }
}
