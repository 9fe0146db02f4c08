//! The familiar's hats and accessories (`familiar_game::progression::wardrobe::WEARABLES`).
//! `familiar` calls the hooks here while it draws the cat (`behind` the body, in `front` of
//! it, over the `face`), so each wearable sits where the head is in every frame. A
//! wearable's layer is the difference between a frame drawn wearing it and the bare frame
//! (the familiar's own sheet): laid over the bare frame in the game it gives the dressed
//! one exactly, outline, occlusion by paws and books, and the hurt flash included.

use familiar_game::anim::Anim;
use familiar_game::progression::wardrobe::{
    COMPANION_HAT, WEARABLES, companion_hats, frames_per_wearable, wearables_rows,
};
use familiar_game::progression::{UnlockKind, unlock};
use familiar_game::sheet::SHEET;

use crate::canvas::*;
use crate::familiar::frame;

const KNIT: Rgba = [214, 84, 74, 255];
const KNIT_SHADE: Rgba = [160, 52, 58, 255];
const KNIT_LIGHT: Rgba = [244, 132, 106, 255];
const KNIT_CUFF: Rgba = [246, 226, 200, 255];
const KNIT_RIB: Rgba = [214, 190, 170, 255];
const GEM_RED: Rgba = [230, 50, 80, 255];
const GEM_BLUE: Rgba = [70, 150, 255, 255];
const MAGE: Rgba = [62, 44, 150, 255];
const MAGE_SHADE: Rgba = [40, 28, 108, 255];
const MAGE_LIGHT: Rgba = [104, 84, 204, 255];
const SCARF: Rgba = [56, 184, 164, 255];
const SCARF_SHADE: Rgba = [34, 128, 124, 255];
const BRASS: Rgba = [236, 196, 98, 255];
const GLINT: Rgba = [220, 240, 255, 255];
const CAPE: Rgba = [176, 40, 64, 255];
const CAPE_SHADE: Rgba = [124, 24, 50, 255];

/// Where the head is in a pose: its centre, the hat's tilt and the squash.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Head {
    pub(crate) x: f32,
    pub(crate) y: f32,
    pub(crate) tilt: f32,
    pub(crate) squash: f32,
}

/// What the familiar wears while it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Wear {
    pub(crate) hat: Option<&'static str>,
    pub(crate) accessory: Option<&'static str>,
}

impl Wear {
    pub(crate) const NOTHING: Wear = Wear {
        hat: None,
        accessory: None,
    };

    /// Wearing one wearable, by id.
    pub(crate) fn only(id: &'static str) -> Wear {
        match unlock(id).map(|u| u.kind) {
            Some(UnlockKind::Hat) => Wear {
                hat: Some(id),
                accessory: None,
            },
            Some(UnlockKind::Accessory) => Wear {
                hat: None,
                accessory: Some(id),
            },
            _ => Wear::NOTHING,
        }
    }
}

/// Drawn before the tail and body: what hangs behind the cat.
pub(crate) fn behind(c: &mut Canvas, wear: Wear, h: &Head) {
    if wear.accessory == Some("accessory.cape") {
        let (x, y) = (h.x, h.y + 6.0);
        c.triangle((x - 7.0, y), (x + 7.0, y), (x + 12.0, y + 11.5), CAPE);
        c.triangle(
            (x - 7.0, y),
            (x + 12.0, y + 11.5),
            (x - 12.0, y + 11.5),
            CAPE,
        );
        c.triangle((x + 3.0, y), (x + 7.0, y), (x + 12.0, y + 11.5), CAPE_SHADE);
        // The high collar, peeking out beside the cheeks.
        for side in [-1.0, 1.0] {
            c.triangle(
                (x + side * 6.0, y + 2.5),
                (x + side * 12.0, y - 4.5),
                (x + side * 10.0, y + 3.0),
                if side < 0.0 { CAPE } else { CAPE_SHADE },
            );
        }
        for i in 0..9 {
            c.set(
                (x - 12.0 + i as f32 * 3.0).round() as i32,
                (y + 11.0) as i32,
                GOLD,
            );
        }
    }
}

/// Drawn after the head, before the paws: what is worn on the neck and the head.
pub(crate) fn front(c: &mut Canvas, wear: Wear, h: &Head) {
    match wear.accessory {
        Some("accessory.scarf") => scarf(c, h),
        Some("accessory.cape") => {
            // The clasp under the chin.
            c.ellipse(h.x, h.y + 7.6, 1.6, 1.3, GOLD_DARK);
            c.ellipse(h.x - 0.3, h.y + 7.3, 1.0, 0.8, GOLD);
        }
        _ => {}
    }
    match wear.hat {
        Some("hat.pointed") => pointed(c, h),
        Some("hat.beanie") => beanie(c, h),
        Some("hat.crown") => crown(c, h),
        Some("hat.archmage") => archmage(c, h),
        _ => {}
    }
}

/// Drawn after the eyes: what is worn on the face.
pub(crate) fn face(c: &mut Canvas, wear: Wear, h: &Head) {
    if wear.accessory == Some("accessory.specs") {
        let y = h.y + 0.5;
        for x in [h.x - 4.5, h.x + 4.5] {
            ring(c, x, y, 3.0, 3.2, BRASS);
            c.set((x - 1.5).round() as i32, (y - 2.0).round() as i32, GLINT);
        }
        let (l, r, yi) = (
            (h.x - 1.5).round() as i32,
            (h.x + 1.5).round() as i32,
            (y - 1.0).round() as i32,
        );
        c.line(l, yi, r, yi, BRASS);
        // The arms, to the sides of the head.
        c.line((h.x - 8.5) as i32, yi, (h.x - 9.5) as i32, yi - 1, BRASS);
        c.line((h.x + 8.5) as i32, yi, (h.x + 9.5) as i32, yi - 1, BRASS);
    }
}

/// A one-pixel ellipse ring (radii `rx`, `ry` at the pixel centres).
fn ring(c: &mut Canvas, cx: f32, cy: f32, rx: f32, ry: f32, col: Rgba) {
    let inside = |x: i32, y: i32, rx: f32, ry: f32| {
        let dx = (x as f32 + 0.5 - cx) / rx;
        let dy = (y as f32 + 0.5 - cy) / ry;
        dx * dx + dy * dy <= 1.0
    };
    for y in (cy - ry - 1.0) as i32..=(cy + ry + 1.0) as i32 {
        for x in (cx - rx - 1.0) as i32..=(cx + rx + 1.0) as i32 {
            if inside(x, y, rx + 0.5, ry + 0.5) && !inside(x, y, rx - 0.5, ry - 0.5) {
                c.set(x, y, col);
            }
        }
    }
}

/// The upper half of a filled ellipse (pixel centres at or above `cy`).
fn dome(c: &mut Canvas, cx: f32, cy: f32, rx: f32, ry: f32, col: Rgba) {
    for y in (cy - ry).floor() as i32..=cy.floor() as i32 {
        for x in (cx - rx).floor() as i32..=(cx + rx).ceil() as i32 {
            let dx = (x as f32 + 0.5 - cx) / rx;
            let dy = (y as f32 + 0.5 - cy) / ry;
            if dx * dx + dy * dy <= 1.0 && y as f32 + 0.5 <= cy + 0.5 {
                c.set(x, y, col);
            }
        }
    }
}

/// The wizard's hat the familiar always wore before it had to earn it.
fn pointed(c: &mut Canvas, h: &Head) {
    let tip = (h.x + 2.5 + h.tilt, h.y - 21.5);
    c.triangle((h.x - 5.5, h.y - 7.0), (h.x + 6.0, h.y - 7.0), tip, HAT);
    c.triangle(
        (h.x + 0.5, h.y - 7.0),
        (h.x + 6.0, h.y - 7.0),
        tip,
        HAT_SHADE,
    );
    c.triangle(
        (h.x - 4.5, h.y - 7.5),
        (h.x - 2.0, h.y - 7.5),
        (tip.0 - 0.5, tip.1 + 3.0),
        HAT_LIGHT,
    );
    c.ellipse(h.x + 0.5, h.y - 6.8, 8.0, 1.7, HAT_SHADE);
    c.ellipse(h.x, h.y - 7.2, 7.4, 1.2, HAT);
    let sx = (h.x + h.tilt * 0.4).round() as i32;
    let sy = (h.y - 13.0).round() as i32;
    for (dx, dy) in [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)] {
        c.set(sx + dx, sy + dy, GOLD);
    }
}

/// A knitted beanie with a cuff and a pompom; the ears poke out at its sides.
fn beanie(c: &mut Canvas, h: &Head) {
    let (x, y) = (h.x + h.tilt * 0.2, h.y - 7.0);
    dome(c, x + 0.4, y, 8.6, 6.6, KNIT_SHADE);
    dome(c, x - 0.2, y - 0.4, 7.8, 5.9, KNIT);
    c.ellipse(x - 3.0, y - 4.0, 2.2, 1.3, KNIT_LIGHT);
    // The ribbed cuff.
    let (l, top) = ((x - 8.5).round() as i32, (y - 1.0).round() as i32);
    c.rect(l, top, 18, 3, KNIT_CUFF);
    for i in (1..18).step_by(2) {
        c.rect(l + i, top, 1, 3, KNIT_RIB);
    }
    let (px, py) = (x + h.tilt * 0.5 + 0.5, y - 7.0);
    c.ball(px, py, 2.6, 2.4, [KNIT_RIB, KNIT_CUFF, WHITE]);
}

/// A gold crown with three points and three gems.
fn crown(c: &mut Canvas, h: &Head) {
    let (x, y) = (h.x + h.tilt * 0.2, h.y - 8.0);
    let lean = h.tilt * 0.3;
    let top = y - 3.0;
    c.triangle(
        (x - 6.5, top + 0.5),
        (x - 2.0, top + 0.5),
        (x - 5.5 + lean, y - 7.5),
        GOLD,
    );
    c.triangle(
        (x - 3.0, top + 0.5),
        (x + 3.0, top + 0.5),
        (x + lean, y - 9.0),
        GOLD,
    );
    c.triangle(
        (x + 2.0, top + 0.5),
        (x + 6.5, top + 0.5),
        (x + 5.5 + lean, y - 7.5),
        GOLD_DARK,
    );
    let (l, t) = ((x - 6.5).round() as i32, top.round() as i32);
    c.rect(l, t, 13, 4, GOLD);
    c.rect(l + 9, t, 4, 4, GOLD_DARK);
    c.rect(l, t, 13, 1, [255, 240, 160, 255]);
    for (px, py, r) in [(x - 5.5 + lean, y - 7.5, 0.9), (x + lean, y - 9.0, 1.0)] {
        c.ellipse(px, py, r, r, WHITE);
    }
    c.ellipse(x + 5.5 + lean, y - 7.5, 0.9, 0.9, GOLD);
    c.set(l + 6, t + 2, GEM_RED);
    c.set(l + 7, t + 2, GEM_RED);
    c.set(l + 2, t + 2, GEM_BLUE);
    c.set(l + 10, t + 2, GEM_BLUE);
}

/// The archmage's hat: wide brim, a bent tall cone, a gold band, a moon and stars.
fn archmage(c: &mut Canvas, h: &Head) {
    let (x, y) = (h.x, h.y - 7.0);
    let lean = h.tilt * 0.4;
    let (bl, br, by) = (x - 2.0 + lean, x + 4.0 + lean, y - 9.0);
    let tip = (x + 8.0 + h.tilt, y - 18.0);
    c.triangle((x - 6.5, y), (x + 7.0, y), (br, by), MAGE);
    c.triangle((x - 6.5, y), (br, by), (bl, by), MAGE);
    c.triangle((x + 1.5, y), (x + 7.0, y), (br, by), MAGE_SHADE);
    c.triangle((bl, by + 0.5), (br, by + 0.5), tip, MAGE);
    c.triangle((bl + 3.0, by + 0.5), (br, by + 0.5), tip, MAGE_SHADE);
    c.triangle(
        (x - 5.0, y - 0.5),
        (x - 2.5, y - 0.5),
        (bl + 0.5, by + 1.0),
        MAGE_LIGHT,
    );
    let bend = (bl + 2.0, by);
    // Gold band just above the brim.
    c.rect(
        (x - 5.5).round() as i32,
        (y - 2.5).round() as i32,
        12,
        2,
        GOLD,
    );
    c.ellipse(x + 0.5, y + 0.4, 11.0, 2.0, MAGE_SHADE);
    c.ellipse(x, y, 10.2, 1.3, MAGE);
    // A crescent moon and two stars.
    let (mx, my) = ((x - 1.5).round() as i32, (y - 7.0).round() as i32);
    c.ellipse(mx as f32 + 0.5, my as f32 + 0.5, 1.8, 1.8, GOLD);
    c.ellipse(mx as f32 + 1.4, my as f32 - 0.2, 1.5, 1.5, MAGE);
    c.set((x + 3.0).round() as i32, (y - 5.0).round() as i32, GOLD);
    let (sx, sy) = (bend.0.round() as i32 + 2, (bend.1 - 2.0).round() as i32);
    for (dx, dy) in [(0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)] {
        c.set(sx + dx, sy + dy, WHITE);
    }
}

/// A striped scarf round the neck, one end hanging at the right.
fn scarf(c: &mut Canvas, h: &Head) {
    let (x, y) = (h.x, h.y + 7.5 - h.squash * 0.3);
    c.ellipse(x, y, 8.0 + h.squash * 0.5, 2.3, SCARF_SHADE);
    c.ellipse(x - 0.4, y - 0.5, 7.4 + h.squash * 0.5, 1.5, SCARF);
    let (tx, ty) = (x + 3.5, y + 0.5);
    c.triangle((tx - 1.0, ty), (tx + 2.2, ty), (tx + 3.2, ty + 7.0), SCARF);
    c.triangle(
        (tx - 1.0, ty),
        (tx + 3.2, ty + 7.0),
        (tx + 0.2, ty + 7.5),
        SCARF_SHADE,
    );
    for (dy, w) in [(3, 3), (5, 3)] {
        c.line(
            (tx - 0.2 + dy as f32 * 0.35).round() as i32,
            (ty + dy as f32).round() as i32,
            (tx - 0.2 + dy as f32 * 0.35).round() as i32 + w - 1,
            (ty + dy as f32).round() as i32,
            KNIT_CUFF,
        );
    }
    for i in 0..3 {
        c.set(
            (tx + 0.6 + i as f32 * 1.2).round() as i32,
            (ty + 8.0).round() as i32,
            SCARF,
        );
    }
    for i in [-5, -1, 3] {
        c.set((x + i as f32).round() as i32, y.round() as i32, KNIT_CUFF);
    }
}

/// Frame `f` of `anim`: what wearing `id` adds to the bare familiar, transparent elsewhere.
pub(crate) fn layer(anim: Anim, f: u32, id: &'static str) -> Canvas {
    let bare = frame(anim, f, Wear::NOTHING);
    let dressed = frame(anim, f, Wear::only(id));
    let mut out = Canvas::new(bare.width, bare.height);
    for (i, (b, d)) in bare.pixels.iter().zip(&dressed.pixels).enumerate() {
        if b != d {
            out.pixels[i] = *d;
        }
    }
    out
}

/// The wearables' sheet: one block per wearable, each laid out like the familiar's sheet.
pub fn wearables_sheet() -> Canvas {
    let mut sheet = Canvas::new(SHEET.width(), wearables_rows() * SHEET.frame);
    for (block, id) in WEARABLES.iter().enumerate() {
        let top = block * frames_per_wearable() / SHEET.columns as usize;
        for (row, anim) in Anim::ALL.iter().enumerate() {
            let (frames, _) = SHEET.rows[row];
            for f in 0..frames {
                sheet.blit(
                    &layer(*anim, f, id),
                    (f * SHEET.frame) as i32,
                    ((top + row) as u32 * SHEET.frame) as i32,
                );
            }
        }
    }
    sheet
}

/// A companion's tiny version of hat `id` (`COMPANION_HAT`), its brim on the bottom rows.
fn tiny_hat(id: &str) -> Canvas {
    let mut c = Canvas::new(COMPANION_HAT.0, COMPANION_HAT.1);
    match id {
        "hat.pointed" => {
            c.triangle((1.5, 8.0), (10.5, 8.0), (7.5, 0.5), HAT);
            c.triangle((6.5, 8.0), (10.5, 8.0), (7.5, 0.5), HAT_SHADE);
            c.ellipse(6.0, 8.4, 5.5, 1.3, HAT_SHADE);
            c.set(6, 5, GOLD);
        }
        "hat.beanie" => {
            dome(&mut c, 6.0, 7.5, 4.6, 4.8, KNIT);
            c.rect(1, 7, 10, 2, KNIT_CUFF);
            c.ellipse(6.0, 2.2, 1.7, 1.6, KNIT_CUFF);
        }
        "hat.crown" => {
            for x in [2.5, 6.0, 9.5] {
                c.triangle((x - 1.8, 6.0), (x + 1.8, 6.0), (x, 2.0), GOLD);
            }
            c.rect(1, 5, 10, 4, GOLD);
            c.rect(7, 5, 4, 4, GOLD_DARK);
            c.set(5, 7, GEM_RED);
            c.set(6, 7, GEM_RED);
        }
        "hat.archmage" => {
            c.triangle((2.0, 8.0), (9.5, 8.0), (6.0, 2.5), MAGE);
            c.triangle((4.5, 4.5), (7.5, 4.5), (10.5, 0.5), MAGE);
            c.ellipse(6.0, 8.3, 5.8, 1.3, MAGE_SHADE);
            c.set(5, 5, GOLD);
        }
        _ => {}
    }
    c.outline(OUT);
    c
}

/// The companions' tiny hats, one frame each, in the order of `companion_hats()`.
pub fn companion_hats_sheet() -> Canvas {
    let ids: Vec<&str> = companion_hats().collect();
    let mut sheet = Canvas::new(COMPANION_HAT.0 * ids.len() as u32, COMPANION_HAT.1);
    for (i, id) in ids.iter().enumerate() {
        sheet.blit(&tiny_hat(id), (i as u32 * COMPANION_HAT.0) as i32, 0);
    }
    sheet
}

/// For `--preview`: the familiar wearing each wearable (a row each, bare first), in one frame
/// of every animation.
pub fn dressed_preview() -> Canvas {
    let anims = Anim::ALL.len() as u32;
    let mut out = Canvas::new(anims * 48, (WEARABLES.len() as u32 + 1) * 48);
    for (row, wear) in std::iter::once(Wear::NOTHING)
        .chain(WEARABLES.iter().map(|id| Wear::only(id)))
        .enumerate()
    {
        for (col, anim) in Anim::ALL.iter().enumerate() {
            let f = SHEET.rows[col].0 / 2;
            out.blit(&frame(*anim, f, wear), col as i32 * 48, row as i32 * 48);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn over(base: &Canvas, layer: &Canvas) -> Canvas {
        let mut out = base.clone();
        out.blit(layer, 0, 0);
        out
    }

    #[test]
    fn every_wearable_is_drawn_in_every_frame_the_familiar_shows() {
        for id in WEARABLES {
            assert_ne!(Wear::only(id), Wear::NOTHING, "{id}");
            for (row, anim) in Anim::ALL.iter().enumerate() {
                for f in 0..SHEET.rows[row].0 {
                    let bare = frame(*anim, f, Wear::NOTHING);
                    let l = layer(*anim, f, id);
                    let shown = l.pixels.iter().filter(|p| p[3] > 0).count();
                    // The familiar appears out of the smoke from the third frame of `enter`.
                    let hidden = *anim == Anim::Enter && f < 2;
                    if hidden {
                        assert_eq!(shown, 0, "{id} {anim:?} {f}");
                        continue;
                    }
                    assert!(shown > 12, "{id} {anim:?} {f}: {shown} pixels");
                    // Laid over the bare frame, the layer gives the dressed frame exactly.
                    assert!(
                        over(&bare, &l) == frame(*anim, f, Wear::only(id)),
                        "{id} {anim:?} {f}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_hat_has_a_tiny_version_resting_on_its_brim() {
        for id in companion_hats() {
            let c = tiny_hat(id);
            let shown = c.pixels.iter().filter(|p| p[3] > 0).count();
            assert!(shown > 20, "{id}: {shown} pixels");
            let bottom = (0..c.pixels.len())
                .filter(|i| c.pixels[*i][3] > 0)
                .map(|i| i as u32 / c.width)
                .max();
            assert_eq!(bottom, Some(COMPANION_HAT.1 - 1), "{id}");
        }
    }

    #[test]
    fn the_companions_head_is_where_the_game_puts_its_hat() {
        // `companion_head` follows the wisp's bob: the wisp's top is the same distance
        // above it in every frame that wears a hat.
        use familiar_game::progression::wardrobe::companion_head;
        use familiar_game::sheet::COMPANION_SHEET;
        let sheet = crate::props::companion_sheet();
        let size = COMPANION_SHEET.frame as i32;
        let mut gaps = Vec::new();
        for row in 0..COMPANION_SHEET.rows.len() {
            for f in 0..COMPANION_SHEET.rows[row].0 as usize {
                let Some(head) = companion_head(row, f) else {
                    continue;
                };
                let top = (0..size).find(|y| {
                    (6..18).any(|x| sheet.get(f as i32 * size + x, row as i32 * size + y)[3] > 0)
                });
                gaps.push(top.map(|t| head - t));
            }
        }
        assert_eq!(gaps.len(), 8);
        assert!(gaps.windows(2).all(|w| w[0] == w[1]), "{gaps:?}");
    }

    #[test]
    fn hats_sit_on_the_head_in_every_frame() {
        // Some of each hat covers what was the bare head (it does not float above it), and
        // nothing of it is below the eyes.
        for id in WEARABLES.iter().filter(|id| id.starts_with("hat.")) {
            for (row, anim) in Anim::ALL.iter().enumerate() {
                for f in 0..SHEET.rows[row].0 {
                    if *anim == Anim::Enter && f < 2 {
                        continue;
                    }
                    let bare = frame(*anim, f, Wear::NOTHING);
                    let l = layer(*anim, f, id);
                    let covering = (0..48 * 48)
                        .filter(|i| l.pixels[*i][3] > 0 && bare.pixels[*i][3] == 255)
                        .count();
                    assert!(covering > 20, "{id} {anim:?} {f}: covers {covering}");
                    let lowest = (0..48 * 48)
                        .filter(|i| l.pixels[*i][3] > 0)
                        .map(|i| i / 48)
                        .max()
                        .unwrap_or(0);
                    assert!(lowest < 30, "{id} {anim:?} {f}: down to row {lowest}");
                }
            }
        }
    }
}
