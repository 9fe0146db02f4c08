//! Particles around each familiar: the burst of a victory (confetti) or of an error (sparks
//! for a tool, crackle for the API), and the motes of "think hard" and "ultrathink". Each
//! familiar keeps `ambience::PARTICLE_SLOTS` small square sprites as children; every frame they
//! take the places `crate::ambience` computes from the logic's `Effects`. Companions carry a small
//! mana bar of their own.

use bevy::prelude::*;

use super::{BAR_BORDER, BAR_EMPTY, PixelScale, band_color, rgb};
use crate::ambience::{PARTICLE_SLOTS, Particle, aura_count, aura_particle, companion_walk};
use crate::logic::{Companion, Effects, Mana};

#[derive(Component)]
pub(crate) struct ParticleSlot(usize);

pub(super) fn attach_particles(mut commands: Commands, added: Query<Entity, Added<Effects>>) {
    for e in &added {
        let slots: Vec<Entity> = (0..PARTICLE_SLOTS)
            .map(|i| {
                commands
                    .spawn((
                        Sprite::from_color(Color::WHITE, Vec2::ONE),
                        Transform::default(),
                        Visibility::Hidden,
                        ParticleSlot(i),
                    ))
                    .id()
            })
            .collect();
        commands.entity(e).add_children(&slots);
    }
}

/// The particles a familiar shows now: its burst's, then its aura's, at most
/// [`PARTICLE_SLOTS`].
pub(crate) fn particles(fx: &Effects, t: f32) -> Vec<Particle> {
    let mut out = Vec::new();
    if let Some((burst, age)) = fx.burst {
        out.extend((0..burst.count()).filter_map(|i| burst.particle(i, age)));
    }
    let think = fx.aura();
    out.extend((0..aura_count(think)).filter_map(|i| aura_particle(think, i, t)));
    out.truncate(PARTICLE_SLOTS);
    out
}

pub(super) fn draw_particles(
    time: Res<Time>,
    scale: Res<PixelScale>,
    familiars: Query<(&Effects, &Children)>,
    mut slots: Query<(&ParticleSlot, &mut Sprite, &mut Transform, &mut Visibility)>,
) {
    let s = scale.0;
    let t = time.elapsed_secs();
    for (fx, children) in &familiars {
        let now = particles(fx, t);
        for child in children.iter() {
            let Ok((slot, mut sprite, mut tr, mut vis)) = slots.get_mut(child) else {
                continue;
            };
            match now.get(slot.0) {
                Some(p) => {
                    // Snapped to the art's pixel grid, like everything else.
                    let x = (p.x.round()) * s;
                    let y = (p.y.round()) * s;
                    tr.translation = Vec3::new(x, y, 8.0);
                    tr.scale = Vec3::splat(p.size * s);
                    sprite.color = Color::srgba_u8(p.color[0], p.color[1], p.color[2], p.color[3]);
                    *vis = Visibility::Inherited;
                }
                None => {
                    if *vis != Visibility::Hidden {
                        *vis = Visibility::Hidden;
                    }
                }
            }
        }
    }
}

/// The two parts of a companion's small mana bar (its subagent's own context).
#[derive(Component)]
pub(crate) struct CompanionBar {
    fill: bool,
}

/// Art pixels of a companion's mana bar.
const BAR_W: f32 = 14.0;
const BAR_H: f32 = 2.0;

pub(super) fn attach_companion_bars(
    mut commands: Commands,
    added: Query<Entity, Added<Companion>>,
) {
    for e in &added {
        for (fill, z, color) in [(false, 2.0, BAR_BORDER), (true, 2.1, BAR_EMPTY)] {
            let bar = commands
                .spawn((
                    Sprite::from_color(rgb(color), Vec2::ONE),
                    Transform::from_xyz(0.0, 0.0, z),
                    Visibility::Hidden,
                    CompanionBar { fill },
                ))
                .id();
            commands.entity(e).add_child(bar);
        }
    }
}

/// Each companion's bar shows the part of its context left, in the colours of the familiar's
/// mana bar; none until its subagent's context is known, nor while it appears or vanishes.
pub(super) fn draw_companion_bars(
    scale: Res<PixelScale>,
    companions: Query<(&Companion, &Children)>,
    mut bars: Query<(&CompanionBar, &mut Sprite, &mut Transform, &mut Visibility)>,
) {
    let s = scale.0;
    for (c, children) in &companions {
        let walk = companion_walk(c.age, c.leaving);
        let mana = c.context.map(|(used, limit)| {
            let mut m = Mana::default();
            m.observe(Some(used), limit);
            m
        });
        for child in children.iter() {
            let Ok((bar, mut sprite, mut tr, mut vis)) = bars.get_mut(child) else {
                continue;
            };
            let Some(mana) = mana.as_ref().filter(|_| walk.puff.is_none()) else {
                *vis = Visibility::Hidden;
                continue;
            };
            *vis = Visibility::Inherited;
            let y = 11.0 * s;
            if bar.fill {
                let left = mana.fraction().unwrap_or(0.0);
                let w = (BAR_W * left).round().max(1.0);
                tr.translation = Vec3::new((-BAR_W / 2.0 + w / 2.0) * s, y, tr.translation.z);
                tr.scale = Vec3::new(w * s, BAR_H * s, 1.0);
                sprite.color = rgb(band_color(mana.band()));
            } else {
                // The dark frame, one art pixel around the fill.
                tr.translation = Vec3::new(0.0, y, tr.translation.z);
                tr.scale = Vec3::new((BAR_W + 2.0) * s, (BAR_H + 2.0) * s, 1.0);
            }
        }
    }
}
