//! The scenes of work (`familiar_game::ambience::WorkScene`): backdrop-sized overlays (`sheet::
//! SKY_SIZE`, stacked in `WorkScene::OVERLAID` order in `scenes.png`) that dress the far hills
//! for the kind of work going on: hills of books while the agent reads or writes, a forge's
//! glowing rock and furnaces while it runs commands. They paint only inside the far hills'
//! silhouette (`sheet::hills`), so the sky, and the sun or moon the layout places above the
//! hills, stay as they are.

use familiar_game::ambience::WorkScene;
use familiar_game::sheet::{SKY_SIZE, hills};

use crate::canvas::*;
use crate::props::Lcg;

const BOOKS: [Rgba; 6] = [
    [150, 58, 62, 255],
    [62, 96, 150, 255],
    [70, 124, 82, 255],
    [170, 130, 60, 255],
    [110, 70, 130, 255],
    [200, 186, 150, 255],
];
const SHELF: Rgba = [84, 54, 38, 255];
const SHELF_DARK: Rgba = [58, 36, 28, 255];
const ROCK: Rgba = [46, 36, 44, 255];
const ROCK_LIT: Rgba = [74, 50, 50, 255];
const EMBER: Rgba = [255, 120, 40, 255];
const GLOW: Rgba = [255, 200, 90, 255];

/// The rows of the far hills at column `x`, floor excluded (the floor starts at row 82).
fn hill_rows(x: i32) -> std::ops::Range<i32> {
    hills(x).0 as i32..82
}

/// Hills of books: shelves every 6 rows, spines of 1 to 3 columns in muted colours.
fn library() -> Canvas {
    let [w, h] = SKY_SIZE;
    let mut c = Canvas::new(w, h);
    let mut rng = Lcg(0x11b_7a7e);
    let mut x = 0;
    while x < w as i32 {
        let width = 1 + rng.below(3) as i32;
        let colour = BOOKS[rng.below(BOOKS.len() as u32) as usize];
        let dark = [
            colour[0] / 2 + 10,
            colour[1] / 2 + 10,
            colour[2] / 2 + 10,
            255,
        ];
        let gap = rng.below(3) as i32;
        for col in x..(x + width).min(w as i32) {
            for y in hill_rows(col) {
                let shelf = (y - 46).rem_euclid(6);
                let px = if shelf == 0 {
                    SHELF
                } else if shelf == 1 {
                    SHELF_DARK
                } else if shelf == 2 && gap == 0 {
                    // A shorter book: the shelf's back shows above it.
                    SHELF_DARK
                } else if col == x {
                    dark
                } else {
                    colour
                };
                c.set(col, y, px);
            }
        }
        x += width;
    }
    c
}

/// The forge: the hills turned to dark rock with glowing veins, two furnaces and embers.
fn forge() -> Canvas {
    let [w, h] = SKY_SIZE;
    let mut c = Canvas::new(w, h);
    let mut rng = Lcg(0xf0_46e5);
    for x in 0..w as i32 {
        let rows = hill_rows(x);
        let top = rows.start;
        for y in rows {
            let lit = y - top < 2;
            c.set(x, y, if lit { ROCK_LIT } else { ROCK });
        }
    }
    // Glowing veins running down the rock.
    for _ in 0..9 {
        let mut x = rng.below(w) as i32;
        let mut y = hills(x).0 as i32 + 2;
        while y < 80 {
            c.set(x, y, EMBER);
            if rng.below(4) == 0 {
                c.set(x, y, GLOW);
            }
            x += rng.below(3) as i32 - 1;
            y += 1;
        }
    }
    // Two furnaces dug into the rock, their mouths aglow.
    for cx in [38, 118] {
        let top = hills(cx).0 as i32 + 3;
        c.rect(cx - 4, top, 9, 8, ROCK_LIT);
        c.ellipse(cx as f32 + 0.5, top as f32 + 6.0, 3.5, 4.0, EMBER);
        c.ellipse(cx as f32 + 0.5, top as f32 + 7.0, 2.0, 2.5, GLOW);
    }
    // Embers glinting on the ridge.
    for _ in 0..14 {
        let x = rng.below(w) as i32;
        let y = hills(x).0 as i32 + rng.below(2) as i32;
        c.set(x, y, if rng.below(2) == 0 { EMBER } else { GLOW });
    }
    c
}

/// The overlays of every scene that has one, stacked in [`WorkScene::OVERLAID`] order.
pub fn scenes_sheet() -> Canvas {
    let [w, h] = SKY_SIZE;
    let mut sheet = Canvas::new(w, h * WorkScene::OVERLAID.len() as u32);
    for (i, scene) in WorkScene::OVERLAID.iter().enumerate() {
        let overlay = match scene {
            WorkScene::Library => library(),
            WorkScene::Forge => forge(),
            WorkScene::Open => Canvas::new(w, h),
        };
        sheet.blit(&overlay, 0, (i as u32 * h) as i32);
    }
    sheet
}
