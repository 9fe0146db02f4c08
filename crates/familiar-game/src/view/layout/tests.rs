//! Tests of the layout: no text over other text, the art, the sun or moon, for 1 to 10
//! sessions and every window size the game meets.

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
                let hat = l.hat_rect(i).min.y;
                assert!(
                    hat >= l.plates_bottom() - MARGIN,
                    "{w}x{h} n={n}: familiar {i} (hat at {hat}) under the plates ({})",
                    l.plates_bottom()
                );
            }
        }
    }
}

/// The art of familiar `i`: its body (hat to feet) and where its floater goes.
fn art(l: &Layout, i: usize) -> [(&'static str, Rect); 2] {
    let sprite = l.sprite_rect(i);
    let half = 17.0 * l.scale;
    let body = Rect::new(
        sprite.center().x - half,
        l.hat_rect(i).min.y,
        sprite.center().x + half,
        sprite.max.y,
    );
    [("familiar", body), ("floater", l.floater_rect(i))]
}

/// Issue 14: the panel (plan, quest, last actions) takes free space only.
#[test]
fn the_panel_overlaps_no_label_and_no_art_for_1_to_10_sessions() {
    let mut shown = 0;
    for (w, h) in SIZES {
        for n in 1..=10 {
            let l = layout(Vec2::new(w, h), n);
            let Some(panel) = l.panel_rect() else {
                continue;
            };
            shown += 1;
            assert!(inside(panel, w, h), "{w}x{h} n={n}: panel {panel:?} leaves");
            let mut others = vec![("banner", l.banner_rect()), ("status", l.status_rect())];
            others.extend(l.log_rect().map(|r| ("log", r)));
            for i in 0..n {
                others.push(("plate", l.plate_rect(i)));
                others.extend(l.bubble_rect(i).map(|b| ("bubble", b)));
                others.extend(art(&l, i));
            }
            for (name, r) in others {
                assert!(
                    !overlap(panel, r),
                    "{w}x{h} n={n}: the panel {panel:?} overlaps {name} {r:?}"
                );
            }
        }
    }
    // A lone familiar always has one; so does a party in a tall window.
    assert!(layout(Vec2::new(480.0, 320.0), 1).panel_rect().is_some());
    assert!(layout(Vec2::new(1280.0, 720.0), 3).panel_rect().is_some());
    assert!(shown >= 8, "the panel shows in {shown} arrangements only");
}

/// Issue 14: a focused session's card covers the plates, never the top row or the art.
#[test]
fn the_focus_card_overlaps_no_label_and_no_art_for_1_to_10_sessions() {
    for (w, h) in SIZES {
        for n in 1..=10 {
            let l = layout(Vec2::new(w, h), n);
            let card = l
                .card_rect()
                .unwrap_or_else(|| panic!("{w}x{h} n={n}: no room for the card"));
            assert!(inside(card, w, h), "{w}x{h} n={n}: card {card:?} leaves");
            let mut others = vec![("banner", l.banner_rect()), ("status", l.status_rect())];
            for i in 0..n {
                others.extend(art(&l, i));
                let mark = l.focus_mark_rect(i);
                assert!(inside(mark, w, h), "{w}x{h} n={n}: mark {mark:?} leaves");
                others.push(("mark", mark));
            }
            for (name, r) in others {
                assert!(
                    !overlap(card, r),
                    "{w}x{h} n={n}: the card {card:?} overlaps {name} {r:?}"
                );
            }
        }
    }
}

/// Issue 14: a floater ("reading foo.rs") lay over the familiar's hat.
#[test]
fn floaters_stay_clear_of_every_hat_for_1_to_10_sessions() {
    for (w, h) in SIZES {
        for n in 1..=10 {
            let l = layout(Vec2::new(w, h), n);
            for i in 0..n {
                let f = l.floater_rect(i);
                assert!(
                    f.min.x >= 0.0 && f.min.y >= 0.0 && f.max.x <= w,
                    "{w}x{h} n={n}: floater {i} {f:?} leaves the canvas"
                );
                for j in 0..n {
                    let hat = l.hat_rect(j);
                    assert!(
                        !overlap(f, hat),
                        "{w}x{h} n={n}: floater {i} {f:?} over the hat of {j} {hat:?}"
                    );
                }
            }
            // A lone familiar's floater has room for a file name.
            if n == 1 {
                assert!(l.floater_rect(0).width() >= 100.0, "{w}x{h}");
            }
        }
    }
}

/// A light cloud behind a floater made its text unreadable: the clouds' band stays above
/// every floater (in every window but the smallest, which is not the canvas).
#[test]
fn clouds_drift_above_every_floater_for_1_to_10_sessions() {
    for (w, h) in SIZES.into_iter().filter(|s| s.0 > 320.0) {
        for n in 1..=10 {
            let l = layout(Vec2::new(w, h), n);
            let (band, _) = l.cloud_band();
            for i in 0..n {
                let f = l.floater_rect(i);
                assert!(
                    !overlap(band, f),
                    "{w}x{h} n={n}: clouds {band:?} behind floater {i} {f:?}"
                );
            }
        }
    }
}

/// The layout's hat constants hold for the real art: every hat, in every frame of
/// `wearables.png`, is inside `HAT_TOP` and `HAT_HALF_WIDTH`, and the tallest reaches
/// `HAT_TOP` (so the constant is not looser than it needs to be).
#[test]
fn the_hat_box_holds_every_hat_in_every_frame() {
    use crate::progression::wardrobe::WEARABLES;
    let sheet = image::load_from_memory(crate::assets::WEARABLES_PNG)
        .expect("wearables.png decodes")
        .to_rgba8();
    let frame = SHEET.frame;
    let rows_per_block = SHEET.rows.len() as u32;
    let (mut top, mut half) = (u32::MAX, 0.0f32);
    for (block, id) in WEARABLES.iter().enumerate() {
        if !id.starts_with("hat.") {
            continue;
        }
        for y in 0..rows_per_block * frame {
            let sy = block as u32 * rows_per_block * frame + y;
            for x in 0..sheet.width() {
                if sheet.get_pixel(x, sy)[3] > 0 {
                    top = top.min(y % frame);
                    half = half.max(((x % frame) as f32 + 0.5 - frame as f32 / 2.0).abs());
                }
            }
        }
    }
    assert_eq!(top as f32, HAT_TOP, "the tallest hat's top row");
    assert!(
        half <= HAT_HALF_WIDTH,
        "a hat reaches {half} px from the centre"
    );
    assert!(
        half > HAT_HALF_WIDTH - 1.0,
        "HAT_HALF_WIDTH is loose ({half})"
    );
}

/// Issue 14: the replay speed ("x1") and the log strip covered the moon. The sun or moon
/// is placed where no text that stays is, above the hills, for every number of sessions;
/// on the canvas, clear of the speech bubbles and floaters too for up to four.
#[test]
fn no_text_sits_over_the_sun_or_moon_for_1_to_10_sessions() {
    for (w, h) in SIZES {
        for n in 1..=10 {
            let l = layout(Vec2::new(w, h), n);
            let Some(body) = l.sky_body_rect() else {
                assert!(
                    (w, h) != (480.0, 320.0),
                    "n={n}: no room for the sun or moon on the canvas"
                );
                continue;
            };
            assert!(inside(body, w, h), "{w}x{h} n={n}: {body:?} leaves");
            let mut texts = vec![("banner", l.banner_rect()), ("status", l.status_rect())];
            texts.extend(l.log_rect().map(|r| ("log", r)));
            texts.extend(l.panel_rect().map(|r| ("panel", r)));
            for i in 0..n {
                texts.push(("plate", l.plate_rect(i)));
                if (w, h) == (480.0, 320.0) && n <= 4 {
                    texts.extend(l.bubble_rect(i).map(|b| ("bubble", b)));
                    texts.push(("floater", l.floater_rect(i)));
                }
            }
            for (name, r) in texts {
                assert!(
                    !overlap(body, r),
                    "{w}x{h} n={n}: {name} {r:?} over the sun or moon {body:?}"
                );
            }
        }
    }
}

#[test]
fn the_pointer_finds_bars_plates_familiars_and_the_card() {
    let l = layout(Vec2::new(480.0, 320.0), 3);
    assert_eq!(l.hit(l.mana_bar_rect(1).center(), false), Hit::ManaBar(1));
    let xp = l.xp_bar_rect(2).expect("full plates");
    assert_eq!(l.hit(xp.center(), false), Hit::XpBar(2));
    let plate = l.plate_rect(0);
    // The first line (project and branch, cut) has a tooltip of its own; the rest of the
    // plate is the familiar's.
    assert_eq!(l.hit(plate.min + Vec2::splat(2.0), false), Hit::Name(0));
    assert_eq!(
        l.hit(plate.min + Vec2::new(2.0, 20.0), false),
        Hit::Familiar(0)
    );
    assert_eq!(l.hit(l.sprite_rect(2).center(), false), Hit::Familiar(2));
    assert_eq!(l.hit(Vec2::new(2.0, 300.0), false), Hit::Nothing);
    // Focused, the card is over the plates.
    assert_eq!(l.hit(l.mana_bar_rect(1).center(), true), Hit::Card);
    assert_eq!(l.hit(l.sprite_rect(0).center(), true), Hit::Familiar(0));
    // A tooltip stays in the window.
    let tip = l.tooltip_rect(l.mana_bar_rect(2), 300.0);
    assert!(inside(tip, 480.0, 320.0), "{tip:?}");
    assert!(tip.min.y > l.mana_bar_rect(2).max.y);
}

#[test]
fn one_familiar_stands_large_and_ten_still_fit() {
    assert_eq!(layout(Vec2::new(480.0, 320.0), 1).scale, 3.0);
    let ten = layout(Vec2::new(480.0, 320.0), 10);
    assert!(ten.compact);
    assert_eq!(ten.scale, 1.0);
}

/// Issue 27: with several sessions, nothing said what each was doing without a click. Each
/// plate ends in a line of it, inside the plate, under its bars, for 2 to 10 sessions in every
/// size; a lone session's panel says it instead.
#[test]
fn each_plate_of_a_party_has_a_line_of_what_its_session_does() {
    for (w, h) in SIZES {
        assert_eq!(layout(Vec2::new(w, h), 1).doing_rect(0), None);
        for n in 2..=10 {
            let l = layout(Vec2::new(w, h), n);
            // Only the smallest window leaves no room for them.
            assert!(
                l.doing_line() || w <= 320.0,
                "{w}x{h} n={n}: no doing lines"
            );
            for i in 0..n {
                let Some(doing) = l.doing_rect(i) else {
                    continue;
                };
                let plate = l.plate_rect(i);
                assert!(
                    plate.contains(doing.min) && plate.contains(doing.max),
                    "{w}x{h} n={n}: the doing line {doing:?} leaves its plate {plate:?}"
                );
                let mut bars = vec![l.mana_bar_rect(i)];
                bars.extend(l.xp_bar_rect(i));
                for bar in bars {
                    assert!(
                        doing.min.y >= bar.max.y,
                        "{w}x{h} n={n}: the doing line {doing:?} over a bar {bar:?}"
                    );
                }
            }
        }
    }
}

/// Issue 27: the unlocked bookshelf stood behind the leftmost familiar of a party and under
/// the log. Decor shows only where it stands behind no familiar and under no text that stays,
/// at a scale that keeps room for every prop beside a lone familiar.
#[test]
fn decor_never_stands_behind_a_familiar_or_under_text() {
    use crate::progression::wardrobe::DECOR;
    let art = crate::view::wardrobe::decor_art();
    let props: Vec<[u32; 4]> = DECOR
        .iter()
        .zip(art)
        .filter(|(d, _)| d.prop)
        .map(|(_, a)| *a)
        .collect();
    assert!(props.len() >= 5, "{props:?}");
    for (w, h) in SIZES {
        for n in 1..=10 {
            let l = layout(Vec2::new(w, h), n);
            let (kept, _) = l.text_rects();
            let scale = l.decor_scale(&props);
            assert!(
                scale >= 1.0 && scale <= l.backdrop().0,
                "{w}x{h} n={n}: {scale}"
            );
            for a in &props {
                if !l.decor_fits(scale, *a) {
                    continue;
                }
                let r = l.decor_rect(scale, *a);
                for i in 0..n {
                    assert!(
                        !overlap(r, l.body_rect(i)),
                        "{w}x{h} n={n}: {a:?} behind familiar {i}"
                    );
                }
                for t in &kept {
                    assert!(!overlap(r, *t), "{w}x{h} n={n}: {a:?} under {t:?}");
                }
            }
        }
    }
    // A lone familiar leaves room for every prop, at the canvas sizes of the default window
    // (960×640) and of a 1280×800 one.
    for (w, h) in [(480.0, 320.0), (640.0, 400.0)] {
        let l = layout(Vec2::new(w, h), 1);
        let scale = l.decor_scale(&props);
        for a in &props {
            assert!(
                l.decor_fits(scale, *a),
                "{w}x{h} at {scale}x: {a:?} {:?} has no room beside a lone familiar",
                l.decor_rect(scale, *a)
            );
        }
    }
}

/// Companions' kind labels, as wide as `companion_label_width` allows, centred under them:
/// over no familiar's number (while numbered) nor another companion's label, for 1 to 10
/// sessions with up to four companions each. Regression: with six sessions a
/// `general-purpose` label covered the next familiar's number.
#[test]
fn companion_labels_overlap_no_number_and_no_other_label_for_1_to_10_sessions() {
    let span = |x: f32, width: f32| (x - width / 2.0, x + width / 2.0);
    let apart = |a: (f32, f32), b: (f32, f32)| a.1 <= b.0 || b.1 <= a.0;
    for (w, h) in SIZES {
        for n in 1..=10 {
            let l = layout(Vec2::new(w, h), n);
            for companions in 0..=4 {
                let mut labels = Vec::new();
                for i in 0..n {
                    for rank in 0..companions {
                        let width = l.companion_label_width(rank, companions);
                        if width > 0.0 {
                            let x = l.familiar_x(i) + l.companion_offset(rank);
                            labels.push((i, rank, span(x, width)));
                        }
                    }
                }
                if n == 1 && companions == 1 {
                    let width = l.companion_label_width(0, 1);
                    assert!(
                        width >= crate::font::width("general-purpose") as f32,
                        "{w}x{h}: one companion's label is cut ({width})"
                    );
                }
                for (a, (i, rank, label)) in labels.iter().enumerate() {
                    if l.grid() {
                        for k in 0..n {
                            let tag = span(l.familiar_x(k), 2.0 * TAG_HALF_WIDTH);
                            assert!(
                                apart(*label, tag),
                                "{w}x{h} n={n}: companion {rank} of {i} {label:?} over number {k}"
                            );
                        }
                    }
                    for (j, other_rank, other) in &labels[a + 1..] {
                        assert!(
                            apart(*label, *other),
                            "{w}x{h} n={n}: companion {rank} of {i} {label:?} over companion \
                             {other_rank} of {j} {other:?}"
                        );
                    }
                }
            }
        }
    }
}
