//! The reacting world's art: the campfire of rest and sleep, the clouds of bad weather (laid
//! out by `familiar_game::sheet::WORLD`), and the backdrop of each phase of the day (dawn,
//! day, dusk, night; `sheet::SKY_SIZE` each, stacked in `familiar_game::ambience::Phase` order).
//! The night backdrop is the one of `props::background`.

use familiar_game::ambience::Phase;
use familiar_game::sheet::{SKY_BODY_RADIUS, SKY_PHASES, SKY_SIZE, WORLD};

use crate::brushes::sparkle;
use crate::canvas::*;
use crate::props::{Lcg, background};

const LOG: Rgba = [120, 70, 40, 255];
const LOG_DARK: Rgba = [80, 44, 26, 255];
const STONE: Rgba = [110, 104, 130, 255];
const FLAME_OUT: Rgba = [220, 60, 30, 255];
const FLAME: Rgba = [255, 150, 40, 255];
const FLAME_CORE: Rgba = [255, 236, 140, 255];

/// One frame of the campfire (32×32): crossed logs in a ring of stones, a flickering flame.
fn campfire(f: u32) -> Canvas {
    let mut c = Canvas::new(32, 32);
    // Glow on the ground.
    c.ellipse(16.0, 28.0, 12.0, 3.0, [255, 170, 60, 60]);
    // Logs.
    for w in 0..3 {
        c.line(8, 28 - w, 24, 25 - w, if w == 1 { LOG } else { LOG_DARK });
        c.line(8, 25 - w, 24, 28 - w, if w == 1 { LOG } else { LOG_DARK });
    }
    // Stones.
    for (i, x) in [6.0, 10.0, 16.0, 22.0, 26.0].iter().enumerate() {
        c.ellipse(*x, 29.0 + (i % 2) as f32 * 0.5, 2.2, 1.6, STONE);
    }
    // Flame: three tongues that sway and change height frame by frame.
    let sway = [0.0, 1.0, 0.0, -1.0][f as usize % 4];
    let tall = [12.0, 14.0, 11.0, 13.0][f as usize % 4];
    for (dx, h, col) in [
        (-4.0, tall * 0.6, FLAME_OUT),
        (4.0, tall * 0.7, FLAME_OUT),
        (0.0, tall, FLAME_OUT),
        (-1.0, tall * 0.75, FLAME),
        (1.5, tall * 0.5, FLAME),
        (0.0, tall * 0.4, FLAME_CORE),
    ] {
        c.triangle(
            (16.0 + dx - 3.5, 26.0),
            (16.0 + dx + 3.5, 26.0),
            (16.0 + dx + sway, 26.0 - h),
            col,
        );
    }
    c.outline([60, 24, 14, 255]);
    // Embers rising.
    for i in 0..2 {
        let y = 12 - ((f as i32 * 3 + i * 5) % 10);
        let x = 14 + i * 5 + (f as i32 % 2);
        c.set(x, y, with_alpha(FLAME_CORE, 220));
    }
    c
}

/// A cloud (32×32): light, or dark with a drip of rain beneath.
fn cloud(dark: bool) -> Canvas {
    let mut c = Canvas::new(32, 32);
    let (base, top) = if dark {
        ([88, 92, 118, 235], [120, 124, 150, 235])
    } else {
        ([200, 205, 225, 220], [240, 242, 252, 220])
    };
    for (x, y, rx, ry) in [
        (9.0, 18.0, 6.0, 4.5),
        (16.0, 14.0, 7.0, 6.0),
        (23.0, 17.0, 6.0, 5.0),
    ] {
        c.ellipse(x, y, rx, ry, base);
    }
    c.ellipse(15.0, 12.5, 5.0, 3.5, top);
    c.ellipse(22.0, 15.5, 3.5, 2.5, top);
    c.rect(4, 19, 25, 3, base);
    c
}

/// The sun (32×32), white-hot at the core: the game tints it for dawn and dusk.
fn sun() -> Canvas {
    let mut c = Canvas::new(32, 32);
    let r = SKY_BODY_RADIUS;
    c.ellipse(16.0, 16.0, r, r, [255, 236, 170, 255]);
    c.ellipse(16.0, 16.0, r - 2.0, r - 2.0, [255, 252, 230, 255]);
    c
}

/// The moon (32×32), with a bite and two craters.
fn moon() -> Canvas {
    let mut c = Canvas::new(32, 32);
    let r = SKY_BODY_RADIUS;
    c.ellipse(16.0, 16.0, r, r, [250, 240, 200, 255]);
    c.ellipse(13.5, 14.0, 2.0, 1.5, [225, 212, 170, 255]);
    c.ellipse(19.0, 19.0, 1.5, 1.2, [225, 212, 170, 255]);
    c
}

/// The world sheet, laid out by [`WORLD`].
pub fn world_sheet() -> Canvas {
    let mut sheet = Canvas::new(WORLD.width(), WORLD.height());
    for f in 0..WORLD.rows[0].0 {
        sheet.blit(&campfire(f), (f * WORLD.frame) as i32, 0);
    }
    sheet.blit(&cloud(false), 0, WORLD.frame as i32);
    sheet.blit(&cloud(true), WORLD.frame as i32, WORLD.frame as i32);
    sheet.blit(&sun(), 2 * WORLD.frame as i32, WORLD.frame as i32);
    sheet.blit(&moon(), 3 * WORLD.frame as i32, WORLD.frame as i32);
    // Each frame keeps a clear border: scaled by a fraction, a sprite samples its neighbour's
    // edge (the campfire's glow showed as a dashed line over every cloud).
    let n = WORLD.frame as i32;
    for y in 0..sheet.height as i32 {
        for x in 0..sheet.width as i32 {
            if x % n == 0 || x % n == n - 1 || y % n == 0 || y % n == n - 1 {
                let i = (y as u32 * sheet.width + x as u32) as usize;
                sheet.pixels[i] = CLEAR;
            }
        }
    }
    sheet
}

/// The sky's colours (top, bottom), the hills' (far, near) and how much the floor is lit, for
/// a phase of the day.
struct Palette {
    top: [f32; 3],
    bottom: [f32; 3],
    far: Rgba,
    near: Rgba,
    floor: [Rgba; 3],
}

fn palette(phase: Phase) -> Palette {
    match phase {
        Phase::Dawn => Palette {
            top: [62.0, 58.0, 128.0],
            bottom: [255.0, 168.0, 122.0],
            far: [120, 80, 120, 255],
            near: [84, 58, 96, 255],
            floor: [[70, 52, 78, 255], [128, 100, 120, 255], [104, 82, 104, 255]],
        },
        Phase::Day => Palette {
            top: [78.0, 148.0, 232.0],
            bottom: [176.0, 220.0, 255.0],
            far: [96, 160, 120, 255],
            near: [64, 126, 92, 255],
            floor: [
                [96, 86, 90, 255],
                [170, 160, 158, 255],
                [142, 132, 134, 255],
            ],
        },
        Phase::Dusk => Palette {
            top: [44.0, 32.0, 96.0],
            bottom: [240.0, 112.0, 92.0],
            far: [98, 56, 104, 255],
            near: [66, 40, 80, 255],
            floor: [[56, 38, 70, 255], [116, 86, 124, 255], [94, 70, 108, 255]],
        },
        Phase::Night => Palette {
            top: [18.0, 14.0, 38.0],
            bottom: [58.0, 38.0, 90.0],
            far: [44, 34, 78, 255],
            near: [34, 26, 60, 255],
            floor: [[40, 30, 62, 255], [84, 70, 118, 255], [66, 54, 98, 255]],
        },
    }
}

/// The backdrop of `phase` (160×100). Night is `props::background`, the others share its
/// shapes (hills, floor) in their own colours, with the sun where it stands at that hour.
fn backdrop(phase: Phase) -> Canvas {
    if phase == Phase::Night {
        return background();
    }
    let [w, h] = SKY_SIZE;
    let p = palette(phase);
    let mut c = Canvas::new(w, h);
    for y in 0..h as i32 {
        let t = ((y as f32 / (h as f32 - 1.0)) * 8.0).floor() / 8.0;
        let col = [
            (p.top[0] + (p.bottom[0] - p.top[0]) * t) as u8,
            (p.top[1] + (p.bottom[1] - p.top[1]) * t) as u8,
            (p.top[2] + (p.bottom[2] - p.top[2]) * t) as u8,
            255,
        ];
        for x in 0..w as i32 {
            c.set(x, y, col);
        }
    }
    let mut rng = Lcg(0xda7b_ea75);
    match phase {
        // The sun is its own sprite (`sun`), placed by the layout.
        Phase::Dawn => {
            // The last stars fading at the top.
            for _ in 0..12 {
                let (x, y) = (rng.below(w) as i32, rng.below(20) as i32);
                c.set(x, y, [200, 200, 255, 180]);
            }
        }
        Phase::Day => {
            for (x, y) in [(30.0, 20.0), (76.0, 12.0)] {
                c.ellipse(x, y, 9.0, 3.0, [236, 244, 255, 255]);
                c.ellipse(x + 5.0, y - 2.0, 6.0, 3.0, [250, 252, 255, 255]);
            }
        }
        Phase::Dusk => {
            // The first stars.
            for _ in 0..24 {
                let (x, y) = (rng.below(w) as i32, rng.below(30) as i32);
                c.set(x, y, [220, 220, 255, 200]);
                if rng.below(10) == 0 {
                    sparkle(&mut c, x, y, 1, [200, 200, 255, 255]);
                }
            }
        }
        Phase::Night => {}
    }
    for x in 0..w as i32 {
        let (far, near) = crate::props::hills(x);
        for y in far as i32..h as i32 {
            c.set(x, y, p.far);
        }
        for y in near as i32..h as i32 {
            c.set(x, y, p.near);
        }
    }
    crate::props::floor(&mut c, p.floor);
    c
}

/// The backdrops of every phase, stacked in [`Phase::ALL`] order.
pub fn sky_sheet() -> Canvas {
    let [w, h] = SKY_SIZE;
    let mut sheet = Canvas::new(w, h * SKY_PHASES);
    for (i, phase) in Phase::ALL.iter().enumerate() {
        sheet.blit(&backdrop(*phase), 0, (i as u32 * h) as i32);
    }
    sheet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_night_backdrop_is_the_background_and_phases_differ() {
        let sheet = sky_sheet();
        let [w, h] = SKY_SIZE;
        let part = |i: u32| -> Vec<Rgba> {
            (0..h as i32)
                .flat_map(|y| (0..w as i32).map(move |x| (x, y)))
                .map(|(x, y)| sheet.get(x, y + (i * h) as i32))
                .collect()
        };
        assert_eq!(part(0), background().pixels);
        for i in 1..SKY_PHASES {
            assert_ne!(part(i), part(i - 1), "phase {i}");
            assert!(part(i).iter().all(|p| p[3] == 255), "phase {i} is opaque");
        }
    }
}
