//! The scene's decor, earned by scene unlocks (`familiar_game::progression::wardrobe::DECOR`):
//! each a backdrop-sized transparent layer the game lays over the backdrop, so the sky (its
//! own business) can change under it. Things stand on the floor at the sides (within the
//! part of the backdrop a 480×320 window shows, x 20..140), where a lone familiar does not
//! stand.

use familiar_game::progression::wardrobe::{DECOR, DECOR_SIZE, decor_sheet_size};

use crate::brushes::sparkle;
use crate::canvas::*;

const WOOD: Rgba = [118, 74, 46, 255];
const WOOD_DARK: Rgba = [78, 46, 32, 255];
const WOOD_LIGHT: Rgba = [152, 100, 62, 255];
const SHELF_BACK: Rgba = [52, 34, 30, 255];
const LANTERN: [Rgba; 3] = [[255, 156, 72, 255], [246, 92, 86, 255], [255, 206, 96, 255]];
const STRING: Rgba = [30, 22, 40, 255];
const FIREFLY: Rgba = [226, 255, 140, 255];
const BANNER: Rgba = [52, 72, 176, 255];
const BANNER_SHADE: Rgba = [36, 48, 128, 255];
const STONE: Rgba = [118, 110, 140, 255];
const STONE_DARK: Rgba = [80, 72, 104, 255];
const CRYSTAL: Rgba = [150, 224, 255, 255];
const CRYSTAL_DEEP: Rgba = [80, 140, 220, 255];
const OWL: Rgba = [150, 118, 92, 255];
const OWL_DARK: Rgba = [104, 78, 62, 255];
const OWL_BELLY: Rgba = [214, 196, 168, 255];

fn layer() -> Canvas {
    Canvas::new(DECOR_SIZE.0, DECOR_SIZE.1)
}

/// A bookshelf against the left edge, full of books, a potion on top.
fn bookshelf() -> Canvas {
    let mut c = layer();
    let (l, t, w, h) = (22, 52, 19, 34);
    c.rect(l, t, w, h, WOOD);
    c.rect(l + 2, t + 2, w - 4, h - 4, SHELF_BACK);
    c.rect(l + w - 2, t, 2, h, WOOD_DARK);
    c.rect(l, t, w, 1, WOOD_LIGHT);
    let spines: [Rgba; 6] = [
        [200, 70, 70, 255],
        [70, 130, 200, 255],
        [90, 170, 100, 255],
        [220, 180, 80, 255],
        [150, 90, 190, 255],
        [230, 226, 210, 255],
    ];
    let mut k = 0usize;
    for shelf in 0..3 {
        let bottom = t + 12 + shelf * 10;
        c.rect(l + 1, bottom, w - 2, 2, WOOD_LIGHT);
        let mut x = l + 2;
        while x < l + w - 3 {
            let bw = 2 + k.is_multiple_of(3) as i32;
            let bh = 6 + ((k * 7) % 3) as i32;
            let col = spines[(k * 5 + shelf as usize) % spines.len()];
            if k % 7 == 4 {
                // One leans on its neighbour.
                c.line(x, bottom - 1, x + 2, bottom - bh, col);
                c.line(x + 1, bottom - 1, x + 3, bottom - bh, col);
                x += 3;
            } else {
                c.rect(x, bottom - bh, bw, bh, col);
                c.set(x, bottom - bh + 1, with_alpha(WHITE, 90));
                x += bw;
            }
            k += 1;
        }
    }
    // A green potion on top.
    c.ellipse(28.5, 48.5, 2.6, 2.6, [90, 220, 130, 255]);
    c.rect(28, 44, 2, 2, [200, 200, 220, 255]);
    c.set(27, 47, WHITE);
    c.outline(OUT);
    c
}

/// Paper lanterns hanging from a post at the right, glowing (the two frames flicker).
fn lanterns(f: u32) -> Canvas {
    let mut c = layer();
    let (px, top) = (114, 54);
    c.rect(px, top, 2, 86 - top, WOOD);
    c.rect(px + 1, top, 1, 86 - top, WOOD_DARK);
    c.rect(px - 7, top, 16, 2, WOOD);
    c.rect(px - 3, 84, 8, 2, WOOD_DARK);
    let mut glow = layer();
    for (i, x) in [107.0f32, 121.0].iter().enumerate() {
        let y = top as f32 + 4.0;
        let col = LANTERN[(i + 1) % LANTERN.len()];
        let a = if (i as u32 + f).is_multiple_of(2) {
            40
        } else {
            26
        };
        glow.ellipse(*x, y + 3.0, 5.5, 5.0, with_alpha(col, a));
        let xi = x.round() as i32;
        c.line(xi, top + 2, xi, y as i32 - 1, STRING);
        c.ellipse(*x, y + 3.0, 3.0, 3.5, col);
        c.rect(xi - 2, y as i32 + 3, 4, 1, with_alpha(OUT, 90));
        c.rect(xi - 1, y as i32 - 1, 2, 1, OUT);
        c.rect(xi - 1, y as i32 + 7, 2, 1, OUT);
        c.set(xi - 1, y as i32 + 1, WHITE);
    }
    c.outline(OUT);
    glow.blit(&c, 0, 0);
    glow
}

/// Fireflies drifting over the hills and floor, blinking.
fn fireflies(f: u32) -> Canvas {
    let mut c = layer();
    let spots = [
        (24.0, 70.0),
        (46.0, 60.0),
        (62.0, 76.0),
        (88.0, 57.0),
        (104.0, 72.0),
        (118.0, 62.0),
        (138.0, 78.0),
        (150.0, 58.0),
        (30.0, 56.0),
        (76.0, 66.0),
        (10.0, 78.0),
        (128.0, 50.0),
    ];
    for (i, (x, y)) in spots.iter().enumerate() {
        let a = (f as f32 + i as f32 * 0.7) * std::f32::consts::FRAC_PI_2;
        let (fx, fy) = (x + 2.0 * a.cos(), y + 1.5 * (a * 0.5 + i as f32).sin());
        // Each blinks off one frame in four, at its own time.
        if (f as usize + i) % 4 == 3 {
            continue;
        }
        c.ellipse(fx, fy, 1.8, 1.8, with_alpha(FIREFLY, 50));
        c.set(fx as i32, fy as i32, WHITE);
    }
    c
}

/// The guild banner on a stand at the right, swaying.
fn banner(f: u32) -> Canvas {
    let mut c = layer();
    let (px, top) = (47, 50);
    c.rect(px, top, 2, 86 - top, WOOD);
    c.rect(px + 1, top, 1, 86 - top, WOOD_DARK);
    c.rect(px - 7, top + 2, 16, 2, WOOD);
    c.ellipse(px as f32 + 1.0, top as f32, 1.6, 1.6, GOLD);
    c.rect(px - 6, 84, 14, 2, WOOD_DARK);
    let sway = f as f32;
    let (l, r, t, b) = (
        px as f32 - 5.5,
        px as f32 + 7.5,
        top as f32 + 4.0,
        top as f32 + 22.0,
    );
    c.triangle((l, t), (r, t), (r + sway, b), BANNER);
    c.triangle((l, t), (r + sway, b), (l + sway, b), BANNER);
    // The swallowtail cut, then the gold edge.
    let (mx, my) = ((l + r) / 2.0 + sway, b - 4.0);
    for y in (my as i32)..=(b as i32 + 1) {
        for x in (l as i32)..=(r as i32 + 2) {
            let t = (y as f32 + 0.5 - my) / (b - my);
            if t >= 0.0 && ((x as f32 + 0.5) - mx).abs() < 5.0 * t {
                c.pixels[(y as u32 * DECOR_SIZE.0 + x as u32) as usize] = CLEAR;
            }
        }
    }
    c.rect(l as i32 + 1, t as i32, (r - l) as i32 - 1, 1, GOLD);
    c.rect(
        r as i32 - 2,
        t as i32 + 1,
        2,
        (b - t) as i32 - 3,
        BANNER_SHADE,
    );
    // The guild's sign: a gold star.
    crate::brushes::star(&mut c, (l + r) / 2.0 + sway * 0.5, t + 7.0, 3.6);
    c.rect(px, top + 4, 2, 1, WOOD_DARK);
    c.outline(OUT);
    c
}

/// A crystal ball on a stone pedestal at the right edge, its light turning.
fn crystal(f: u32) -> Canvas {
    let mut c = layer();
    let (x, y) = (133.0, 70.0);
    c.triangle((x - 4.0, 86.0), (x + 4.0, 86.0), (x, 76.0), STONE_DARK);
    c.rect(x as i32 - 3, 77, 6, 9, STONE);
    c.rect(x as i32 + 1, 77, 2, 9, STONE_DARK);
    c.rect(x as i32 - 5, 84, 10, 2, STONE_DARK);
    c.rect(x as i32 - 4, 75, 8, 2, STONE);
    c.ball(x, y, 5.0, 5.0, [CRYSTAL_DEEP, CRYSTAL, WHITE]);
    let a = f as f32 * std::f32::consts::FRAC_PI_2;
    c.ellipse(
        x + 2.5 * a.cos(),
        y + 1.5 * a.sin(),
        1.6,
        1.2,
        [210, 160, 255, 255],
    );
    c.outline(OUT);
    let mut glow = layer();
    glow.ellipse(
        x,
        y,
        7.5 + (f % 2) as f32,
        7.5 + (f % 2) as f32,
        with_alpha(CRYSTAL, 30),
    );
    sparkle(
        &mut glow,
        x as i32 - 7 + f as i32,
        y as i32 - 6 - (f as i32 % 2) * 2,
        1,
        CRYSTAL,
    );
    glow.blit(&c, 0, 0);
    glow
}

/// An owl perched on the bookshelf, blinking slowly (frame 1: eyes shut).
fn owl(f: u32) -> Canvas {
    let mut c = layer();
    let (x, y) = (36.5, 47.0);
    c.ellipse(x, y, 3.6, 4.6, OWL_DARK);
    c.ellipse(x - 0.3, y - 0.4, 3.0, 4.0, OWL);
    c.ellipse(x, y + 1.8, 2.0, 2.2, OWL_BELLY);
    // Ear tufts.
    c.triangle(
        (x - 3.5, y - 3.0),
        (x - 1.5, y - 3.5),
        (x - 3.2, y - 6.5),
        OWL_DARK,
    );
    c.triangle(
        (x + 3.5, y - 3.0),
        (x + 1.5, y - 3.5),
        (x + 3.2, y - 6.5),
        OWL_DARK,
    );
    c.outline(OUT);
    let (xi, yi) = (x as i32, (y - 1.5) as i32);
    for ex in [xi - 2, xi + 1] {
        c.rect(ex, yi - 1, 2, 2, if f == 0 { GOLD } else { OWL_DARK });
        if f == 0 {
            c.set(ex + (ex < xi) as i32, yi, PUPIL);
        }
    }
    c.set(xi, yi + 1, GOLD_DARK);
    // Its feet on the shelf.
    c.set(xi - 1, 52, GOLD_DARK);
    c.set(xi + 1, 52, GOLD_DARK);
    c
}

/// Frame `f` of decor `id` (transparent for an id this generator does not draw).
fn decor(id: &str, f: u32) -> Canvas {
    match id {
        "scene.bookshelf" => bookshelf(),
        "scene.night" => lanterns(f),
        "scene.fireflies" => fireflies(f),
        "scene.banner" => banner(f),
        "scene.crystal" => crystal(f),
        "scene.owl" => owl(f),
        _ => layer(),
    }
}

/// The decor's sheet: one row per decor, its frames left to right.
pub fn decor_sheet() -> Canvas {
    let (w, h) = decor_sheet_size();
    let mut sheet = Canvas::new(w, h);
    for (row, d) in DECOR.iter().enumerate() {
        for f in 0..d.frames {
            sheet.blit(
                &decor(d.id, f),
                (f * DECOR_SIZE.0) as i32,
                (row as u32 * DECOR_SIZE.1) as i32,
            );
        }
    }
    sheet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_decor_draws_something_and_animations_move() {
        for d in DECOR {
            let frames: Vec<Canvas> = (0..d.frames).map(|f| decor(d.id, f)).collect();
            for (f, c) in frames.iter().enumerate() {
                let shown = c.pixels.iter().filter(|p| p[3] > 0).count();
                assert!(shown > 30, "{} frame {f}: {shown} pixels", d.id);
            }
            if d.frames > 1 {
                assert!(frames.windows(2).all(|w| w[0] != w[1]), "{} is still", d.id);
            }
        }
    }

    #[test]
    fn decor_keeps_off_the_middle_of_the_floor() {
        // Where a lone familiar stands (the middle, from its head down to the floor) stays
        // clear of everything but the fireflies.
        for d in DECOR.iter().filter(|d| d.id != "scene.fireflies") {
            let c = decor(d.id, 0);
            for y in 56..84 {
                for x in 58..100 {
                    assert_eq!(c.get(x, y)[3], 0, "{} at {x},{y}", d.id);
                }
            }
        }
    }
}
