//! The familiar (a small violet cat): its pose, the effects of each animation, and the whole
//! sheet laid out by `familiar_game::sheet::SHEET`. It wears nothing there: its hats and
//! accessories are layers of their own (`wearables`), drawn through the hooks here.

use familiar_game::anim::Anim;
use familiar_game::sheet::SHEET;

use crate::brushes::{smoke, sparkle, star, zed};
use crate::canvas::*;
use crate::wearables::{self, Head, Wear};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Eyes {
    Open { look_x: f32, look_y: f32 },
    Closed,
    Happy,
    Dizzy,
    Squeeze,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mouth {
    Smile,
    Open,
    Flat,
    Wobble,
}

#[derive(Debug, Clone, Copy)]
struct Pose {
    dx: f32,
    dy: f32,
    /// Positive: wider and shorter (breathing, landing).
    squash: f32,
    eyes: Eyes,
    mouth: Mouth,
    paw_l: (f32, f32),
    paw_r: (f32, f32),
    tail: f32,
    hat_tilt: f32,
}

impl Default for Pose {
    fn default() -> Pose {
        Pose {
            dx: 0.0,
            dy: 0.0,
            squash: 0.0,
            eyes: Eyes::Open {
                look_x: 0.0,
                look_y: 0.0,
            },
            mouth: Mouth::Smile,
            paw_l: (0.0, 0.0),
            paw_r: (0.0, 0.0),
            tail: 0.0,
            hat_tilt: 0.0,
        }
    }
}

/// Draws the familiar (a small violet cat) into a 48×48 layer, outlined, wearing `wear`
/// (nothing for its own sheet; the wearables' layers are the difference, see `wearables`).
fn draw_familiar(p: &Pose, wear: Wear) -> Canvas {
    let mut c = Canvas::new(48, 48);
    let (ox, oy) = (p.dx, p.dy);
    let sq = p.squash;
    let body = [SHADE, BASE, LIGHT];
    let head = Head {
        x: 24.0 + ox,
        y: 28.0 + oy + sq * 0.8,
        tilt: p.hat_tilt,
        squash: sq,
    };

    // Tail first, so the body covers its root.
    let segments = 10;
    for i in 0..=segments {
        let t = i as f32 / segments as f32;
        let sway = p.tail * t * t;
        let x = 29.5 + ox + 8.0 * t + sway;
        let y = 41.0 + oy - 11.0 * t * t + sway.abs() * 0.3;
        let r = 1.9 - 0.5 * t;
        let col = if t > 0.8 { CREAM } else { BASE };
        c.ellipse(x, y, r, r, col);
    }
    wearables::behind(&mut c, wear, &head);
    // Feet.
    c.ellipse(20.0 + ox, 44.3 + oy.min(0.0) * 0.0 + oy, 2.8, 1.6, SHADE);
    c.ellipse(28.0 + ox, 44.3 + oy, 2.8, 1.6, SHADE);
    // Body and belly.
    c.ball(
        24.0 + ox,
        37.5 + oy + sq * 0.5,
        7.2 + sq,
        6.0 - sq * 0.5,
        body,
    );
    c.ellipse(24.0 + ox, 39.0 + oy + sq * 0.5, 4.2 + sq * 0.5, 3.4, CREAM);
    // Ears.
    let hy = oy + sq * 0.8;
    c.triangle(
        (14.5 + ox, 26.0 + hy),
        (15.5 + ox, 14.5 + hy),
        (22.0 + ox, 21.0 + hy),
        BASE,
    );
    c.triangle(
        (33.5 + ox, 26.0 + hy),
        (32.5 + ox, 14.5 + hy),
        (26.0 + ox, 21.0 + hy),
        BASE,
    );
    c.triangle(
        (16.5 + ox, 22.0 + hy),
        (16.8 + ox, 17.0 + hy),
        (20.0 + ox, 20.5 + hy),
        PINK,
    );
    c.triangle(
        (31.5 + ox, 22.0 + hy),
        (31.2 + ox, 17.0 + hy),
        (28.0 + ox, 20.5 + hy),
        PINK,
    );
    // Head.
    c.ball(24.0 + ox, 28.0 + hy, 10.2 + sq * 0.6, 8.0 - sq * 0.4, body);
    wearables::front(&mut c, wear, &head);
    // Paws (drawn after the body so raised paws overlap it).
    let paw = |c: &mut Canvas, x: f32, y: f32| {
        c.ellipse(x, y, 2.3, 2.0, SHADE);
        c.ellipse(x - 0.3, y - 0.4, 1.7, 1.4, LIGHT);
    };
    paw(&mut c, 17.8 + ox + p.paw_l.0, 37.5 + oy + p.paw_l.1);
    paw(&mut c, 30.2 + ox + p.paw_r.0, 37.5 + oy + p.paw_r.1);

    c.outline(OUT);

    // Face details after the outline so they stay crisp inside the head.
    let ex = [(19.5 + ox), (28.5 + ox)];
    let ey = 28.5 + hy;
    for (i, x) in ex.iter().enumerate() {
        let xi = x.round() as i32;
        let yi = ey.round() as i32;
        match p.eyes {
            Eyes::Open { look_x, look_y } => {
                c.ellipse(*x, ey, 2.1, 2.7, WHITE);
                let px = (x + look_x - 0.5).round() as i32;
                let py = (ey + look_y - 1.0).round() as i32;
                c.rect(px, py, 2, 3, PUPIL);
                c.set(px, py, WHITE);
            }
            Eyes::Closed => {
                c.line(xi - 2, yi, xi + 1, yi, PUPIL);
                c.set(xi - 2, yi - 1, PUPIL);
                c.set(xi + 1, yi - 1, PUPIL);
            }
            Eyes::Happy => {
                c.line(xi - 2, yi, xi - 1, yi - 1, PUPIL);
                c.line(xi, yi - 1, xi + 1, yi, PUPIL);
            }
            Eyes::Dizzy => {
                c.line(xi - 2, yi - 2, xi + 1, yi + 1, PUPIL);
                c.line(xi - 2, yi + 1, xi + 1, yi - 2, PUPIL);
            }
            Eyes::Squeeze => {
                // > <
                if i == 0 {
                    c.line(xi - 2, yi - 2, xi, yi, PUPIL);
                    c.line(xi, yi, xi - 2, yi + 2, PUPIL);
                } else {
                    c.line(xi + 1, yi - 2, xi - 1, yi, PUPIL);
                    c.line(xi - 1, yi, xi + 1, yi + 2, PUPIL);
                }
            }
        }
    }
    let mx = (24.0 + ox).round() as i32;
    let my = (32.0 + hy).round() as i32;
    c.rect(mx - 7, my - 1, 2, 1, PINK);
    c.rect(mx + 5, my - 1, 2, 1, PINK);
    match p.mouth {
        Mouth::Smile => {
            c.set(mx - 1, my, PUPIL);
            c.set(mx, my + 1, PUPIL);
            c.set(mx + 1, my, PUPIL);
        }
        Mouth::Open => {
            c.rect(mx - 1, my, 3, 2, PUPIL);
            c.set(mx, my + 1, PINK);
        }
        Mouth::Flat => c.line(mx - 1, my, mx + 1, my, PUPIL),
        Mouth::Wobble => {
            c.set(mx - 2, my + 1, PUPIL);
            c.set(mx - 1, my, PUPIL);
            c.set(mx, my + 1, PUPIL);
            c.set(mx + 1, my, PUPIL);
            c.set(mx + 2, my + 1, PUPIL);
        }
    }
    wearables::face(&mut c, wear, &head);
    c
}

/// One frame of an animation: the pose, wearing `wear`, plus its effects layer.
pub(crate) fn frame(anim: Anim, f: u32, wear: Wear) -> Canvas {
    let mut out = Canvas::new(48, 48);
    let mut fx = Canvas::new(48, 48);
    let mut fx_front = Canvas::new(48, 48);
    let mut pose = Pose::default();
    let ff = f as f32;
    let mut draw_char = true;
    let mut flash: Option<(Rgba, f32)> = None;
    match anim {
        Anim::Idle => {
            pose.squash = [0.0, 0.4, 0.8, 0.4][f as usize % 4];
            pose.tail = [0.0, 1.0, 2.0, 1.0][f as usize % 4];
            if f == 3 {
                pose.eyes = Eyes::Closed;
            }
        }
        Anim::Enter => {
            let r = [7.0, 11.0, 12.0, 11.0, 8.0, 5.0][f as usize % 6];
            let a = [200, 230, 210, 170, 120, 70][f as usize % 6];
            draw_char = f >= 2;
            pose.eyes = Eyes::Happy;
            pose.mouth = Mouth::Open;
            pose.dy = [0.0, 0.0, -3.0, -2.0, 0.0, 0.0][f as usize % 6];
            smoke(&mut fx_front, 24.0, 34.0, r, a);
            if f >= 3 {
                sparkle(&mut fx_front, 10, 18 - f as i32, 2, SPARK);
                sparkle(&mut fx_front, 38, 22 - f as i32, 2, GOLD);
            }
        }
        Anim::Cast => {
            pose.eyes = Eyes::Open {
                look_x: 0.0,
                look_y: 1.0,
            };
            pose.paw_l = (3.0, 1.5);
            pose.paw_r = (-3.0, 1.5);
            pose.squash = [0.0, 0.3, 0.0, 0.3][f as usize % 4];
            // Open book held in front.
            let by = 39;
            fx_front.rect(16, by, 16, 6, BOOK_DARK);
            fx_front.rect(17, by - 1, 7, 6, PAGE);
            fx_front.rect(24, by - 1, 7, 6, PAGE);
            fx_front.rect(23, by - 1, 2, 7, BOOK);
            for l in 0..2 {
                fx_front.line(18, by + 1 + l * 2, 22, by + 1 + l * 2, [180, 170, 150, 255]);
                fx_front.line(26, by + 1 + l * 2, 30, by + 1 + l * 2, [180, 170, 150, 255]);
            }
            // Sparkles rising from the pages.
            for (i, x) in [19, 29, 24].iter().enumerate() {
                let y = 36 - ((f as i32 * 4 + i as i32 * 6) % 16);
                sparkle(
                    &mut fx_front,
                    *x + (i as i32 - 1) * (f as i32 % 2),
                    y,
                    1 + (i as i32 + f as i32) % 2,
                    if i == 1 { GOLD } else { SPARK },
                );
            }
        }
        Anim::Attack => {
            pose.dx = [-2.0, 3.0, 3.0, 1.0][f as usize % 4];
            pose.squash = [0.6, -0.4, 0.0, 0.2][f as usize % 4];
            pose.eyes = Eyes::Open {
                look_x: 1.0,
                look_y: 0.0,
            };
            pose.mouth = if f == 1 { Mouth::Open } else { Mouth::Flat };
            pose.paw_r = [(-1.0, -4.0), (5.0, -6.0), (6.0, 0.0), (2.0, 0.0)][f as usize % 4];
            pose.hat_tilt = [-2.0, 2.0, 2.0, 1.0][f as usize % 4];
            if f == 1 || f == 2 {
                // A crescent slash in front.
                let (cx, cy) = (33.0, 30.0);
                for i in 0..24 {
                    let a = -1.3 + 2.4 * (i as f32) / 23.0;
                    let r = 11.0;
                    let x = cx + r * a.cos();
                    let y = cy + r * a.sin();
                    let col = if f == 1 { WHITE } else { GOLD };
                    fx_front.ellipse(x, y, 1.3, 1.3, col);
                    if f == 1 {
                        fx_front.ellipse(x - 1.5, y, 0.8, 0.8, GOLD);
                    }
                }
                if f == 2 {
                    sparkle(&mut fx_front, 44, 24, 2, WHITE);
                    sparkle(&mut fx_front, 42, 38, 1, GOLD);
                }
            }
        }
        Anim::Write => {
            pose.eyes = Eyes::Open {
                look_x: 1.0,
                look_y: 1.0,
            };
            pose.mouth = Mouth::Flat;
            let wiggle = [(0.0, 0.0), (1.5, -0.5), (3.0, 0.0), (1.5, 0.5)][f as usize % 4];
            pose.paw_r = (-2.0 + wiggle.0, 3.0 + wiggle.1);
            pose.paw_l = (2.0, 3.0);
            // A scroll at the feet, with the line being written.
            fx_front.rect(17, 41, 18, 5, PAGE);
            fx_front.rect(16, 40, 2, 7, [210, 190, 150, 255]);
            fx_front.rect(34, 40, 2, 7, [210, 190, 150, 255]);
            let written = 20 + (f as i32 * 3);
            fx_front.line(19, 43, written, 43, PUPIL);
            // Quill in the right paw.
            let (qx, qy) = ((30.2 + wiggle.0 - 2.0) as i32, (40.5 + wiggle.1) as i32);
            fx_front.line(qx, qy, qx + 5, qy - 9, WHITE);
            fx_front.line(qx + 1, qy - 1, qx + 6, qy - 9, WHITE);
            fx_front.line(qx + 2, qy - 3, qx + 6, qy - 7, [200, 200, 230, 255]);
            fx_front.set(qx, qy + 1, GOLD);
            if f % 2 == 1 {
                fx_front.set(written + 1, 42, [60, 40, 90, 255]);
            }
        }
        Anim::Think => {
            pose.eyes = Eyes::Open {
                look_x: 1.0,
                look_y: -1.0,
            };
            pose.mouth = Mouth::Flat;
            pose.paw_r = (-3.0, -3.0);
            pose.hat_tilt = 1.0;
            // Thought bubble with growing dots.
            fx.ellipse(36.0, 19.0, 1.3, 1.3, WHITE);
            fx.ellipse(39.0, 14.5, 1.8, 1.8, WHITE);
            fx.ellipse(40.0, 6.5, 7.0, 5.0, WHITE);
            fx.outline([90, 80, 120, 255]);
            let dots = (f as i32 + 1).min(3);
            for d in 0..dots {
                fx.rect(36 + d * 3, 6, 2, 2, PUPIL);
            }
        }
        Anim::Victory => {
            pose.dy = [0.0, -4.0, -7.0, -7.0, -4.0, 0.0][f as usize % 6];
            pose.squash = [0.8, -0.5, -0.3, -0.3, -0.5, 0.6][f as usize % 6];
            pose.eyes = Eyes::Happy;
            pose.mouth = Mouth::Open;
            pose.paw_l = (-1.0, -7.0);
            pose.paw_r = (1.0, -7.0);
            pose.tail = 3.0;
            let spin = ff * 0.9;
            for i in 0..3 {
                let a = spin + i as f32 * 2.1;
                star(
                    &mut fx,
                    24.0 + 17.0 * a.cos(),
                    24.0 + 10.0 * a.sin(),
                    2.5 + (i as f32 * 0.5),
                );
            }
            fx.outline(GOLD_DARK);
        }
        Anim::Hurt => {
            pose.dx = [-1.0, -3.0, -2.0, -1.0][f as usize % 4];
            pose.squash = [0.8, 0.4, 0.2, 0.0][f as usize % 4];
            pose.eyes = if f < 2 { Eyes::Squeeze } else { Eyes::Dizzy };
            pose.mouth = Mouth::Wobble;
            pose.hat_tilt = -3.0;
            pose.paw_l = (1.0, -2.0);
            pose.paw_r = (-1.0, -2.0);
            if f < 2 {
                flash = Some((RED, 0.45 - ff * 0.2));
                // Impact burst at the right.
                for i in 0..6 {
                    let a = i as f32 * 1.047;
                    let (x, y) = (37.0 + 5.0 * a.cos(), 27.0 + 5.0 * a.sin());
                    fx_front.line(
                        37,
                        27,
                        x as i32,
                        y as i32,
                        if i % 2 == 0 { RED } else { GOLD },
                    );
                }
            }
            // Sweat drop.
            let sy = 17 + f as i32;
            fx.ellipse(13.0, sy as f32 + 2.0, 1.5, 2.0, SWEAT);
            fx.set(13, sy, SWEAT);
            fx.outline([40, 80, 140, 255]);
        }
        Anim::Blocked => {
            pose.dx = -1.0;
            pose.eyes = Eyes::Squeeze;
            pose.mouth = Mouth::Flat;
            pose.paw_l = (4.0, -3.0);
            pose.paw_r = (-4.0, -3.0);
            pose.squash = 0.4;
            // A pulsing "not allowed" rune in front.
            let r = [9.0, 10.0, 10.5, 10.0][f as usize % 4];
            let a = [150, 200, 230, 200][f as usize % 4];
            fx_front.ellipse(36.0, 30.0, r, r, with_alpha(SHIELD, 70));
            for i in 0..40 {
                let t = i as f32 / 40.0 * std::f32::consts::TAU;
                fx_front.ellipse(
                    36.0 + (r - 1.0) * t.cos(),
                    30.0 + (r - 1.0) * t.sin(),
                    1.0,
                    1.0,
                    with_alpha(RED, a),
                );
            }
            let d = (r * 0.6) as i32;
            for w in 0..2 {
                fx_front.line(36 - d + w, 30 - d, 36 + d + w, 30 + d, with_alpha(RED, a));
            }
        }
        Anim::Rest => {
            pose.eyes = Eyes::Closed;
            pose.mouth = Mouth::Flat;
            pose.squash = [1.2, 1.5, 1.8, 1.5][f as usize % 4];
            pose.dy = 1.0;
            pose.hat_tilt = -4.0;
            pose.tail = -2.0;
            for i in 0..3 {
                let t = ((f as i32 + i) % 4) as f32;
                let s = 2 + i;
                zed(
                    &mut fx,
                    33 + (t * 2.0) as i32 + i,
                    20 - (t * 4.0) as i32 - i * 2,
                    s,
                    with_alpha(ZZZ, (255.0 - t * 50.0) as u8),
                );
            }
            // Bubble at the nose.
            let r = [1.0, 1.8, 2.6, 1.8][f as usize % 4];
            fx_front.ellipse(27.5, 33.0, r, r, with_alpha(SWEAT, 170));
            fx_front.set(27, 32, WHITE);
        }
        Anim::Ask => {
            // A raised paw waving under a speech bubble with a big `!`: it reads at a glance,
            // and unlike the `?` of waiting for input the familiar itself reaches up.
            pose.eyes = Eyes::Open {
                look_x: -1.0,
                look_y: -1.0,
            };
            pose.mouth = Mouth::Open;
            let wave = [0.0, 1.0, 0.0, -1.0][f as usize % 4];
            pose.paw_l = (-6.5 + wave * 0.5, -12.0);
            pose.squash = [0.0, -0.3, -0.5, -0.3][f as usize % 4];
            pose.tail = [1.0, 2.0, 3.0, 2.0][f as usize % 4];
            let bob = [0.0, -1.0, -1.0, 0.0][f as usize % 4];
            fx_front.ellipse(40.0, 8.0 + bob, 6.5, 6.5, WHITE);
            fx_front.triangle(
                (37.0, 12.0 + bob),
                (40.0, 13.0 + bob),
                (38.0, 18.0 + bob),
                WHITE,
            );
            fx_front.outline(OUT);
            let by = (8.0 + bob) as i32;
            fx_front.rect(39, by - 4, 2, 5, RED);
            fx_front.rect(39, by + 2, 2, 2, RED);
            // The raised arm, behind the body, up to the paw.
            let (px, py) = (17.8 + pose.paw_l.0, 37.5 + pose.paw_l.1 + pose.dy);
            for i in 0..=8 {
                let t = i as f32 / 8.0;
                fx.ellipse(
                    16.5 + (px - 16.5) * t,
                    35.0 + (py - 35.0) * t,
                    1.9,
                    1.9,
                    BASE,
                );
            }
            fx.outline(OUT);
            // Motion lines beside the waving paw.
            if f % 2 == 1 {
                fx.line(5, 22, 3, 20, with_alpha(WHITE, 220));
                fx.line(5, 26, 2, 25, with_alpha(WHITE, 220));
            }
        }
    }
    out.blit(&fx, 0, 0);
    if draw_char {
        let mut ch = draw_familiar(&pose, wear);
        if let Some((col, amount)) = flash {
            ch.tint(col, amount.max(0.0));
        }
        out.blit(&ch, 0, 0);
    }
    out.blit(&fx_front, 0, 0);
    out
}

/// The familiar's whole sheet, laid out by [`SHEET`].
pub fn familiar_sheet() -> Canvas {
    let mut sheet = Canvas::new(SHEET.width(), SHEET.height());
    for (row, anim) in Anim::ALL.iter().enumerate() {
        let (frames, _) = SHEET.rows[row];
        for f in 0..frames {
            let fr = frame(*anim, f, Wear::NOTHING);
            sheet.blit(
                &fr,
                (f * SHEET.frame) as i32,
                (row as u32 * SHEET.frame) as i32,
            );
        }
    }
    sheet
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_frame_draws_something_and_frames_differ() {
        let sheet = familiar_sheet();
        for (row, (frames, _)) in SHEET.rows.iter().enumerate() {
            let mut seen = Vec::new();
            for f in 0..*frames {
                let mut fr = Canvas::new(48, 48);
                for y in 0..48 {
                    for x in 0..48 {
                        let c = sheet.get((f * 48) as i32 + x, (row as u32 * 48) as i32 + y);
                        fr.set(x, y, c);
                    }
                }
                let opaque = fr.pixels.iter().filter(|p| p[3] > 0).count();
                assert!(opaque > 100, "row {row} frame {f}: only {opaque} pixels");
                seen.push(fr);
            }
            if *frames > 1 {
                assert!(
                    seen.windows(2).any(|w| w[0] != w[1]),
                    "row {row} never changes"
                );
            }
        }
    }
}
