//! Every frame, places and animates what `spawn` created from the logic components: the row of
//! familiars, their marks, level-up stars, HUD blocks and speech bubbles, the companions and
//! the floaters.

use bevy::prelude::*;

use super::layout::PAD;
use super::spawn::companion_tint;
use super::text::{PixelText, set_text};
use super::{
    Background, COMPACTION_NOTE_SECS, CompanionLabel, FamiliarParts, HudVisible, PixelScale,
    band_color, fit, rgb, row,
};
use crate::anim::Anim;
use crate::logic::{
    Animation, Companion, Doings, FLOATER_SECS, Familiar, Floater, Mana, ManaBand, Mark, Progress,
    SessionInfo, Speech,
};
use crate::sheet::{self, COMPANION_SHEET, SHEET};
use familiar_model::Status;

#[allow(clippy::type_complexity)]
pub(super) fn place_familiars(
    familiars: Query<(Entity, &Familiar)>,
    mut transforms: Query<&mut Transform, (With<Familiar>, Without<Background>)>,
    mut background: Query<(&mut Sprite, &mut Transform), (With<Background>, Without<Familiar>)>,
    mut scale: ResMut<PixelScale>,
) {
    let (order, l) = row(&familiars);
    scale.0 = l.scale;
    for (i, e) in order.iter().enumerate() {
        if let Ok(mut t) = transforms.get_mut(*e) {
            let c = l.sprite_center(i);
            // Whole canvas pixels: a sprite between two pixels samples unevenly.
            t.translation = Vec3::new(c.x.round(), c.y.round(), i as f32);
        }
    }
    // The backdrop covers the canvas, its floor under the familiars' feet.
    if let Ok((mut sprite, mut t)) = background.single_mut() {
        let (scale, centre) = l.backdrop();
        let [w, h] = crate::sheet::SKY_SIZE;
        sprite.custom_size = Some(Vec2::new(w as f32, h as f32) * scale);
        t.translation = centre.extend(-100.0);
    }
}

#[allow(clippy::type_complexity, clippy::too_many_arguments)]
pub(super) fn draw_familiars(
    time: Res<Time>,
    all: Query<(Entity, &Familiar)>,
    familiars: Query<(
        Entity,
        &Familiar,
        &Animation,
        &Mana,
        &Progress,
        &Mark,
        &Speech,
        &SessionInfo,
        Option<&Doings>,
        &FamiliarParts,
    )>,
    mut sprites: Query<(&mut Sprite, &mut Transform, &mut Visibility), Without<Familiar>>,
    mut nodes: Query<(&mut Node, &mut Visibility), (Without<Sprite>, Without<Familiar>)>,
    mut texts: Query<&mut PixelText>,
    mut colors: Query<&mut BackgroundColor>,
    mut images: Query<&mut ImageNode>,
    hud_visible: Res<HudVisible>,
) {
    let (order, l) = row(&all);
    let t = time.elapsed_secs();
    for (e, familiar, anim, mana, progress, mark, speech, info, doings, parts) in &familiars {
        let index = order.iter().position(|x| *x == e).unwrap_or(0);
        let current = anim.0.current();
        let (frames, fps) = SHEET.rows[current.row()];
        let frame = if anim.0.sleeping() {
            // Asleep the Zzz drift at a quarter of the rate: the window wakes every 2 s.
            anim.0.frame(frames, 0.5)
        } else if anim.0.calm() {
            0
        } else {
            anim.0.frame(frames, fps)
        };
        if let Ok((mut sprite, mut tr, _)) = sprites.get_mut(parts.sprite) {
            if let Some(atlas) = sprite.texture_atlas.as_mut() {
                atlas.index = current.row() * SHEET.columns as usize + frame as usize;
            }
            tr.scale = Vec3::splat(l.scale);
        }
        // Status mark bobbing beside the hat.
        if let Ok((mut sprite, mut tr, mut vis)) = sprites.get_mut(parts.mark) {
            // The asking pose draws its own `!` bubble.
            match Mark::symbol(*mark).filter(|_| current != Anim::Ask) {
                Some(symbol) => {
                    if let Some(atlas) = sprite.texture_atlas.as_mut() {
                        atlas.index = if symbol == '!' {
                            sheet::ICON_EXCLAIM
                        } else {
                            sheet::ICON_QUESTION
                        };
                    }
                    let bob = if (t * 2.0) as i64 % 2 == 0 { 0.0 } else { 1.0 };
                    tr.translation = Vec3::new(14.0 * l.scale, (14.0 + bob) * l.scale, 5.0);
                    tr.scale = Vec3::splat((l.scale * 0.75).max(1.0));
                    *vis = Visibility::Inherited;
                }
                None => *vis = Visibility::Hidden,
            }
        }
        // Level-up stars circling.
        if let Ok((_, _, mut vis)) = sprites.get_mut(parts.stars) {
            *vis = if progress.level_up_age.is_some() {
                Visibility::Inherited
            } else {
                Visibility::Hidden
            };
        }

        // The number under the feet, matching the plate's, while plates stand in a grid.
        if let Ok((_, mut tr, mut vis)) = sprites.get_mut(parts.tag) {
            tr.translation = Vec3::new(0.0, -(SHEET.frame as f32 / 2.0 - 3.0) * l.scale, 6.0);
            *vis = if l.grid() && hud_visible.0 {
                Visibility::Inherited
            } else {
                Visibility::Hidden
            };
        }
        if let Ok(mut text) = texts.get_mut(parts.tag) {
            set_text(&mut text, (index + 1).to_string());
        }
        // The plate.
        let plate = l.plate_rect(index);
        let shown = if hud_visible.0 {
            Visibility::Inherited
        } else {
            Visibility::Hidden
        };
        if let Ok((mut node, mut vis)) = nodes.get_mut(parts.plate) {
            node.left = px(plate.min.x);
            node.top = px(plate.min.y);
            node.width = px(plate.width());
            node.height = px(plate.height());
            *vis = shown;
        }
        let inner = plate.width() - 2.0 * PAD;
        let compact_row = PAD + 15.0; // after the icon
        let status = if info.reconnecting {
            "reconnecting".to_owned()
        } else {
            status_line(mark.0, info.held(t))
        };
        let note = note(mana, progress);
        if let Ok(mut text) = texts.get_mut(parts.name) {
            // A compact plate has room for the name only: which agent first, then the project.
            let name = match (info.name(l.compact), &info.branch) {
                (Some(p), Some(b)) if !l.compact => format!("{p} ({b})"),
                (Some(p), _) if info.agent.is_some() => p,
                (Some(p), None) => p,
                _ => familiar.label.clone(),
            };
            let want = if l.compact {
                // The icon says the status; the time and the name share the line.
                let held = duration(info.held(t));
                let number = if l.grid() {
                    format!("{} ", index + 1)
                } else {
                    String::new()
                };
                fit(&format!("{number}{held} {name}"), inner - 15.0)
            } else {
                fit(&name, inner)
            };
            set_text(&mut text, want);
        }
        if let Ok((mut node, _)) = nodes.get_mut(parts.name) {
            node.left = px(if l.compact { compact_row } else { PAD });
            // Capitals level with the middle of the icon in a compact plate.
            node.top = px(if l.compact { -1.0 } else { 0.0 });
        }
        if let Ok((mut node, mut vis)) = nodes.get_mut(parts.status_icon) {
            node.top = px(if l.compact { 1.0 } else { 15.0 });
            *vis = match status_icon(mark.0) {
                Some(_) => Visibility::Inherited,
                None => Visibility::Hidden,
            };
        }
        if let Some(icon) = status_icon(mark.0)
            && let Ok(mut image) = images.get_mut(parts.status_icon)
            && let Some(atlas) = image.texture_atlas.as_mut()
            && atlas.index != icon
        {
            atlas.index = icon;
        }
        if let Ok(mut text) = texts.get_mut(parts.status_text) {
            let want = if l.compact {
                String::new()
            } else {
                fit(note.as_deref().unwrap_or(&status), inner - 15.0)
            };
            set_text(&mut text, want);
            let color = if note.is_some() {
                rgb([255, 230, 140])
            } else {
                rgb([200, 196, 230])
            };
            if text.color != color {
                text.color = color;
            }
        }
        if let Ok((mut node, _)) = nodes.get_mut(parts.mana_bar) {
            node.top = px(l.mana_bar_rect(index).min.y - plate.min.y);
        }
        let band = mana.band();
        if let Ok((mut node, _)) = nodes.get_mut(parts.mana_fill) {
            let fill = if band == ManaBand::Unknown {
                1.0
            } else {
                mana.shown
            };
            node.width = percent(fill * 100.0);
        }
        if let Ok(mut color) = colors.get_mut(parts.mana_fill) {
            color.0 = rgb(band_color(band));
        }
        if let Ok(mut text) = texts.get_mut(parts.mana_text) {
            // In a compact plate the note takes the bar's label.
            let want = match (&note, l.compact) {
                (Some(n), true) => n.clone(),
                _ => mana.label(),
            };
            set_text(&mut text, fit(&want, inner - 3.0));
        }
        for part in [parts.level_text, parts.xp_bar] {
            if let Ok((_, mut vis)) = nodes.get_mut(part) {
                *vis = if l.compact {
                    Visibility::Hidden
                } else {
                    Visibility::Inherited
                };
            }
        }
        if let Ok(mut text) = texts.get_mut(parts.level_text) {
            set_text(&mut text, format!("Lv {}", progress.level.max(1)));
        }
        // What the session is doing now, with more than one session (cut to the plate: the
        // pixel font's characters are 5 or 6 pixels wide and `fit` measures them).
        if let Ok((mut node, mut vis)) = nodes.get_mut(parts.doing_text) {
            match l.doing_top() {
                Some(top) => {
                    node.top = px(top);
                    *vis = Visibility::Inherited;
                }
                None => *vis = Visibility::Hidden,
            }
        }
        if l.doing_line()
            && let Ok(mut text) = texts.get_mut(parts.doing_text)
        {
            let chars = (inner / 4.0) as usize;
            let want = doings
                .and_then(|doings| doings.now_line(chars))
                .unwrap_or_default();
            set_text(&mut text, fit(&want, inner));
        }
        if let Ok((mut node, _)) = nodes.get_mut(parts.xp_fill) {
            node.width = percent(progress.fraction() * 100.0);
        }
        // Speech bubble, in the room the layout keeps for it, its text wrapped inside (two
        // lines; padding and border take 10 pixels across).
        if let (Some(r), Ok(mut text)) = (l.bubble_rect(index), texts.get_mut(parts.bubble_text)) {
            let width = Some((r.width() - 10.0).max(0.0) as u32);
            if text.max_width != width {
                text.max_width = width;
            }
        }
        if let Ok((mut node, mut vis)) = nodes.get_mut(parts.bubble) {
            match (&speech.0, l.bubble_rect(index)) {
                (Some(_), Some(r)) if hud_visible.0 => {
                    node.left = px(r.min.x);
                    node.top = px(r.min.y);
                    node.max_width = px(r.width());
                    node.max_height = px(r.height());
                    *vis = Visibility::Inherited;
                }
                _ => *vis = Visibility::Hidden,
            }
        }
        if let Some((said, _)) = &speech.0
            && let Ok(mut text) = texts.get_mut(parts.bubble_text)
        {
            set_text(&mut text, said);
        }
    }
}

/// Icon of a status on the plate (`None`: nothing known).
fn status_icon(status: Status) -> Option<usize> {
    match status {
        Status::Working => Some(sheet::ICON_STAR),
        Status::WaitingForApproval => Some(sheet::ICON_EXCLAIM),
        Status::WaitingForInput => Some(sheet::ICON_QUESTION),
        Status::Idle => Some(sheet::ICON_Z),
        _ => None,
    }
}

/// `working 2m`, `needs approval 12s`, `your turn 5s`, `idle 3d 4h` (`familiar_model::words`).
pub(crate) fn status_line(status: Status, secs: f32) -> String {
    let what = familiar_model::words::status(status);
    if status == Status::Unknown {
        return what.to_owned();
    }
    format!("{what} {}", duration(secs))
}

/// `12s`, `4m`, `5h 12m`, `3d 4h` (`familiar_model::words::duration`).
pub(crate) fn duration(secs: f32) -> String {
    let secs = if secs.is_finite() { secs.max(0.0) } else { 0.0 };
    familiar_model::words::duration(std::time::Duration::from_secs_f32(secs))
}

/// The plate's note, in place of the status while it lasts: a level-up, or a compaction
/// (`rest 48k -> 160k left`: tokens left before and after, like the bar and its label) until
/// the context is known again.
fn note(mana: &Mana, progress: &Progress) -> Option<String> {
    if let Some(age) = progress.level_up_age
        && age < 2.0
    {
        return Some(format!("LEVEL UP! Lv {}", progress.level));
    }
    let c = mana.compaction_note(COMPACTION_NOTE_SECS)?;
    Some(mana.rest_label(c))
}

/// Level-up stars orbit the familiar while the effect plays.
pub(super) fn orbit_stars(
    familiars: Query<(&Progress, &FamiliarParts)>,
    children: Query<&Children>,
    mut transforms: Query<&mut Transform, Without<Familiar>>,
) {
    for (progress, parts) in &familiars {
        let Some(age) = progress.level_up_age else {
            continue;
        };
        let Ok(kids) = children.get(parts.stars) else {
            continue;
        };
        for (i, kid) in kids.iter().enumerate() {
            if let Ok(mut t) = transforms.get_mut(kid) {
                let a = age * 3.0 + i as f32 * std::f32::consts::TAU / 5.0;
                let r = 70.0 + age * 20.0;
                t.translation = Vec3::new(r * a.cos(), 10.0 + 0.5 * r * a.sin(), 2.0);
                t.scale = Vec3::splat(2.0);
            }
        }
    }
}

#[allow(clippy::type_complexity)]
pub(super) fn draw_companions(
    all: Query<(Entity, &Familiar)>,
    owners: Query<&Transform, (With<Familiar>, Without<Companion>)>,
    mut companions: Query<
        (&Companion, &Children, &mut Sprite, &mut Transform),
        (Without<Familiar>, Without<CompanionLabel>),
    >,
    mut labels: Query<
        (&mut Transform, &mut PixelText, &mut Visibility),
        (With<CompanionLabel>, Without<Companion>, Without<Familiar>),
    >,
) {
    let (_, l) = row(&all);
    // Companions of each owner, oldest nearest.
    let mut by_owner: Vec<(Entity, u64)> = companions
        .iter()
        .map(|(c, ..)| (c.owner, c.order))
        .collect();
    by_owner.sort_by_key(|(_, order)| *order);
    for (c, children, mut sprite, mut t) in &mut companions {
        let Ok(owner) = owners.get(c.owner) else {
            continue;
        };
        let rank = by_owner
            .iter()
            .filter(|(o, _)| *o == c.owner)
            .position(|(_, order)| *order == c.order)
            .unwrap_or(0);
        let offset = l.companion_offset(rank);
        // It walks in from its side of the scene, and out the same way.
        let walk = crate::ambience::companion_walk(c.age, c.leaving);
        let x = owner.translation.x + offset + offset.signum() * walk.away * 40.0 * l.scale;
        let y = l.ground_y + 10.0 * l.scale;
        t.translation = Vec3::new(x, y, 3.0 + rank as f32 * 0.1);
        sprite.custom_size = Some(Vec2::splat(COMPANION_SHEET.frame as f32 * l.scale));
        let companions = by_owner.iter().filter(|(o, _)| *o == c.owner).count();
        let room = l.companion_label_width(rank, companions);
        for child in children.iter() {
            if let Ok((mut lt, mut text, mut vis)) = labels.get_mut(child) {
                lt.translation = Vec3::new(0.0, -9.0 * l.scale, 1.0);
                // Cut to its room at its place; hidden with none (the tint still tells the kinds
                // apart), and while it walks in or out, across its neighbours' places.
                let shown = room > 0.0 && walk.away == 0.0;
                let wanted = if shown {
                    Visibility::Inherited
                } else {
                    Visibility::Hidden
                };
                if *vis != wanted {
                    *vis = wanted;
                }
                if shown {
                    set_text(&mut text, fit(&c.kind, room));
                }
            }
        }
        let (row_i, frame) = if let Some(puff) = walk.puff {
            (2, puff)
        } else if c.busy > 0.0 || walk.away > 0.0 {
            (1, (c.age * COMPANION_SHEET.rows[1].1) as usize % 4)
        } else {
            (0, (c.age * COMPANION_SHEET.rows[0].1) as usize % 4)
        };
        if let Some(atlas) = sprite.texture_atlas.as_mut() {
            atlas.index = row_i * COMPANION_SHEET.columns as usize + frame;
        }
        sprite.color = companion_tint(&c.kind);
    }
}

#[allow(clippy::type_complexity)]
pub(super) fn draw_floaters(
    familiars: Query<(Entity, &Familiar)>,
    mut floaters: Query<(&Floater, &mut Transform, &mut PixelText), Without<Familiar>>,
) {
    let (order, l) = row(&familiars);
    for (f, mut t, mut text) in &mut floaters {
        let Some(index) = order.iter().position(|e| *e == f.owner) else {
            continue;
        };
        // Up the familiar's left side (companions stand on its right), clear of its hat and
        // of its neighbour's (`Layout::floater_rect`), cut to that room; the text ends at the
        // rectangle's right. Whole canvas pixels, so the text stays crisp.
        let room = l.floater_rect(index);
        let fitted = fit(&f.text, room.width());
        set_text(&mut text, fitted);
        let rise = f.age * 14.0;
        let at = l.to_screen(Vec2::ZERO);
        let x = room.max.x - at.x;
        let y = at.y - room.max.y + rise;
        t.translation = Vec3::new(x.round(), y.round(), 20.0);
        let alpha = (1.0 - f.age / FLOATER_SECS).clamp(0.0, 1.0);
        text.color = text.color.with_alpha(alpha);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_says_what_and_for_how_long() {
        assert_eq!(status_line(Status::Working, 5.4), "working 5s");
        assert_eq!(
            status_line(Status::WaitingForApproval, 130.0),
            "needs approval 2m"
        );
        assert_eq!(status_line(Status::Idle, 7_500.0), "idle 2h 5m");
        // Months idle read in days (it once said `idle 6598h05`).
        assert_eq!(status_line(Status::Idle, 23_752_800.0), "idle 274d");
        assert_eq!(status_line(Status::WaitingForInput, -3.0), "your turn 0s");
        assert_eq!(status_line(Status::Unknown, 9.0), "status unknown");
    }
}
